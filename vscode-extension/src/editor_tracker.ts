// Follows the active text editor for `editor_context.ts`: which file, selection, visible
// lines and problems the next question would carry, posted to the view as a chip as they
// change. The view's × leaves the context out of the next question only.

import * as vscode from "vscode";
import { asAttachment, editorContext, type Attached, type EditorProblem, type EditorState } from "./editor_context";
import type { ContextChip, Range, TurnRecord } from "./protocol";
import { onUnlessTurnedOff } from "./trust";

function range(r: vscode.Range): Range {
  return { start: { line: r.start.line, character: r.start.character }, end: { line: r.end.line, character: r.end.character } };
}

/** `lantern.editorContext`: on unless any level sets it off (a workspace can only narrow). */
export function enabled(): boolean {
  return onUnlessTurnedOff(vscode.workspace.getConfiguration("lantern").inspect<boolean>("editorContext"));
}

/** The problems VS Code reports for `uri` now, as plain values. */
export function problemsIn(uri: vscode.Uri): EditorProblem[] {
  return vscode.languages.getDiagnostics(uri).map((d) => ({ range: range(d.range), message: d.message, severity: d.severity, source: d.source }));
}

/** The plain state of `editor`, for `editorContext`. */
export function stateOf(editor: vscode.TextEditor): EditorState {
  const uri = editor.document.uri;
  const folder = uri.scheme === "file" ? vscode.workspace.getWorkspaceFolder(uri) : undefined;
  return {
    uri: uri.toString(),
    scheme: uri.scheme,
    relativePath: folder ? vscode.workspace.asRelativePath(uri, (vscode.workspace.workspaceFolders?.length ?? 0) > 1) : undefined,
    selection: range(editor.selection),
    visible: editor.visibleRanges[0] ? range(editor.visibleRanges[0]) : undefined,
    problems: problemsIn(uri),
  };
}

export class EditorTracker implements vscode.Disposable {
  private editor: vscode.TextEditor | undefined = vscode.window.activeTextEditor;
  private dropped = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private shown = "";
  private readonly disposables: vscode.Disposable[];

  constructor(private readonly post: (chip: ContextChip | null) => void) {
    const later = () => this.schedule();
    this.disposables = [
      vscode.window.onDidChangeActiveTextEditor((editor) => {
        // Focus in a webview tab leaves no active text editor: keep the last one while it shows.
        if (editor || !this.editor || !vscode.window.visibleTextEditors.includes(this.editor)) {
          if (editor !== this.editor) this.dropped = false;
          this.editor = editor;
        }
        later();
      }),
      vscode.window.onDidChangeVisibleTextEditors((editors) => {
        if (this.editor && !editors.includes(this.editor)) this.editor = vscode.window.activeTextEditor;
        later();
      }),
      vscode.window.onDidChangeTextEditorSelection((e) => e.textEditor === this.editor && later()),
      vscode.window.onDidChangeTextEditorVisibleRanges((e) => e.textEditor === this.editor && later()),
      vscode.languages.onDidChangeDiagnostics((e) => {
        const uri = this.editor?.document.uri.toString();
        if (uri && e.uris.some((u) => u.toString() === uri)) later();
      }),
      vscode.workspace.onDidChangeConfiguration((e) => e.affectsConfiguration("lantern.editorContext") && later()),
    ];
  }

  /** What the next question would carry, unless left out. */
  current(): Attached | undefined {
    return this.dropped || !this.editor ? undefined : editorContext(stateOf(this.editor), enabled());
  }

  /** The editor the view follows, as plain values (for `@problems`), whether or not its
   * context goes with the next question. */
  active(): EditorState | undefined {
    return this.editor && stateOf(this.editor);
  }

  chip(): ContextChip | null {
    return this.current()?.chip ?? null;
  }

  /** The context for the question being asked now, as its turn keeps it; the × applies to
   * that question only. */
  take(): TurnRecord["attachment"] {
    const attached = this.current();
    this.dropped = false;
    this.schedule();
    return attached && asAttachment(attached);
  }

  drop(): void {
    this.dropped = true;
    this.update();
  }

  private schedule(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => this.update(), 100); // scrolling and selecting fire often
  }

  private update(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const chip = this.chip();
    const key = JSON.stringify(chip);
    if (key === this.shown) return;
    this.shown = key;
    this.post(chip);
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const d of this.disposables) d.dispose();
  }
}
