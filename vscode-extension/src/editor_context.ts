// What goes with a question from the active editor (docs/protocol.md, `lantern/ask`
// `context`): the file, the lines on screen, the selection and the file's problems.
// The server shows names and problems to the model as metadata and reads the selected
// lines itself, asking like any read. Pure: `editor_tracker.ts` feeds it the editor's
// state, so the rules are tested with plain Node.

import type { AskContext, ContextChip, EditorDiagnostic, Range, TurnRecord } from "./protocol";

/** As the server: the most problems it shows, and the longest message it keeps. */
export const MAX_DIAGNOSTICS = 50;
export const MAX_MESSAGE_CHARS = 300;

/** A problem as VS Code reports it (`severity` 0 error … 3 hint). */
export interface EditorProblem {
  range: Range;
  message: string;
  severity: number;
  source?: string;
}

/** The active editor, in plain values. */
export interface EditorState {
  uri: string; // document.uri.toString()
  scheme: string;
  /** Workspace-relative path; undefined when the file is in no workspace folder. */
  relativePath: string | undefined;
  selection: Range;
  visible: Range | undefined; // visibleRanges[0]
  problems: readonly EditorProblem[];
}

/** What a question carries, and how the view names it. */
export interface Attached {
  context: AskContext;
  chip: ContextChip;
  path: string;
  startLine: number; // the selection's lines, else the visible ones (1-based)
  endLine: number;
}

/** 1-based inclusive lines; a range ending at character 0 of a later line leaves that line out. */
export function lines(range: Range): [number, number] {
  const [a, b] = [range.start, range.end].sort((x, y) => x.line - y.line || x.character - y.character);
  const last = b.line > a.line && b.character === 0 ? b.line - 1 : b.line;
  return [a.line + 1, last + 1];
}

function span([first, last]: [number, number]): string {
  return first === last ? `${first}` : `${first}-${last}`;
}

function isEmpty(range: Range): boolean {
  return range.start.line === range.end.line && range.start.character === range.end.character;
}

function toDiagnostic(p: EditorProblem): EditorDiagnostic {
  const message = p.message.length > MAX_MESSAGE_CHARS ? `${p.message.slice(0, MAX_MESSAGE_CHARS)}…` : p.message;
  const d: EditorDiagnostic = { range: p.range, message, severity: Math.min(Math.max(Math.trunc(p.severity), 0), 3) + 1 };
  if (p.source) d.source = p.source;
  return d;
}

/** A file's problems as `context.diagnostics` carries them: the worst first, then by line
 * (what the server keeps when it cuts the list), at most `MAX_DIAGNOSTICS`. */
export function diagnosticsOf(problems: readonly EditorProblem[]): EditorDiagnostic[] {
  const sorted = [...problems].sort((a, b) => a.severity - b.severity || a.range.start.line - b.range.start.line);
  return sorted.slice(0, MAX_DIAGNOSTICS).map(toDiagnostic);
}

export function basename(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1) || path;
}

/** The context for `state`, or undefined: no editor, turned off, or not a file in the workspace. */
export function editorContext(state: EditorState | undefined, enabled: boolean): Attached | undefined {
  if (!enabled || !state || state.scheme !== "file" || state.relativePath === undefined) return undefined;
  const context: AskContext = { uri: state.uri };
  const selected = isEmpty(state.selection) ? undefined : lines(state.selection);
  if (selected) context.range = state.selection;
  if (state.visible) context.visibleRange = state.visible;
  const problems = state.problems;
  if (problems.length) context.diagnostics = diagnosticsOf(problems);

  const path = state.relativePath;
  const name = basename(path);
  const visible = state.visible ? lines(state.visible) : undefined;
  const shown = selected ?? visible ?? [1, 1];
  let label = selected ? `${name}:${span(selected)}` : visible ? `${name} (visible ${visible[0]}–${visible[1]})` : name;
  let title = selected ? `${path}, ${selected[0] === selected[1] ? `line ${selected[0]}` : `lines ${selected[0]}–${selected[1]}`} selected` : path;
  if (problems.length) {
    const count = `${problems.length} problem${problems.length === 1 ? "" : "s"}`;
    label += ` · ${count}`;
    title += `, ${count}`;
  }
  return { context, chip: { label, title }, path, startLine: shown[0], endLine: shown[1] };
}

/** What the turn keeps of it: shown as its chip, sent again on Retry. */
export function asAttachment(a: Attached): NonNullable<TurnRecord["attachment"]> {
  const kept: NonNullable<TurnRecord["attachment"]> = { path: a.path, startLine: a.startLine, endLine: a.endLine, uri: a.context.uri, label: a.chip.label, context: a.context };
  if (a.context.range) kept.range = a.context.range;
  return kept;
}
