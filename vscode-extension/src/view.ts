// The conversation: a webview that shows questions, tool activity, answers and
// references, in the Lantern side bar view (default) or in an editor tab
// (`lantern.conversation.location`). It only renders; clicks come back as
// messages and are checked against our own results. The page is the script: it makes
// every element itself (media/shell.ts).

import * as crypto from "crypto";
import * as vscode from "vscode";
import type { FromPanel, Reference, ToPanel } from "./protocol";

export const VIEW_ID = "lantern.conversation";

type Location = "sideBar" | "editor";

export function location(): Location {
  return vscode.workspace.getConfiguration("lantern").get<string>("conversation.location") === "editor" ? "editor" : "sideBar";
}

export class ConversationView implements vscode.WebviewViewProvider, vscode.Disposable {
  private view: vscode.WebviewView | undefined;
  private panel: vscode.WebviewPanel | undefined;
  private ready = false;
  private opening = false;
  /** Lantern: Focus Question Box ran before the view was ready: focus it once it is. */
  private focusWhenReady = false;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly received = new vscode.EventEmitter<FromPanel>();
  /** What the view asks the extension to do, each checked there; "ready": the view (re)loaded
   * and needs the whole state, which `post` now sends. */
  readonly onDidReceive = this.received.event;
  private readonly visibility = new vscode.EventEmitter<void>();
  /** The conversation was shown or hidden (`visible` says which). */
  readonly onDidChangeVisibility = this.visibility.event;

  constructor(private readonly extensionUri: vscode.Uri) {}

  /** The webview the conversation shows in, for `where` it is set to be. */
  private webview(where: Location = location()): vscode.Webview | undefined {
    return where === "editor" ? this.panel?.webview : this.view?.webview;
  }

  get visible(): boolean {
    return (location() === "editor" ? this.panel?.visible : this.view?.visible) ?? false;
  }

  /** Called by VS Code when the side bar view becomes visible for the first time (or again). */
  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    this.setUp(view.webview);
    view.onDidChangeVisibility(() => this.visibility.fire());
    view.onDidDispose(() => {
      if (this.view === view) {
        this.view = undefined;
        this.ready = false;
        this.visibility.fire();
      }
    });
  }

  private setUp(webview: vscode.Webview): void {
    const media = vscode.Uri.joinPath(this.extensionUri, "media");
    const out = vscode.Uri.joinPath(this.extensionUri, "out");
    webview.options = { enableScripts: true, localResourceRoots: [media, out] };
    this.ready = false;
    webview.html = this.html(webview, media, out);
    this.disposables.push(webview.onDidReceiveMessage((message: FromPanel) => this.receive(webview, message)));
  }

  /** Make the conversation visible without taking the focus from the editor. */
  show(where: Location = location()): void {
    if (where === "editor") {
      this.showPanel();
    } else if (this.view) {
      if (!this.view.visible) this.view.show(true);
    } else if (!this.opening) {
      // Not resolved yet: opening it moves the focus there, so hand it back to the editor.
      this.opening = true;
      void Promise.resolve(vscode.commands.executeCommand(`${VIEW_ID}.focus`))
        .then(() => vscode.commands.executeCommand("workbench.action.focusActiveEditorGroup"))
        .finally(() => (this.opening = false));
    }
  }

  private showPanel(): void {
    if (this.panel) {
      // Every event comes through here: leave a visible panel where it is.
      if (!this.panel.visible) this.panel.reveal(vscode.ViewColumn.Beside, true);
      return;
    }
    this.panel = vscode.window.createWebviewPanel(
      "lantern.answers",
      "Lantern",
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
      { retainContextWhenHidden: true },
    );
    this.setUp(this.panel.webview);
    this.panel.onDidChangeViewState(() => this.visibility.fire());
    this.panel.onDidDispose(() => {
      this.panel = undefined;
      this.ready = false;
      this.visibility.fire();
    });
  }

  /** Send a change to the view; a view that is not ready gets the whole state when it is. */
  post(message: ToPanel): void {
    const webview = this.webview();
    if (this.ready && webview) void webview.postMessage(message);
  }

  private receive(from: vscode.Webview, message: FromPanel): void {
    if (from !== this.webview()) return;
    if (message.type === "ready") this.ready = true;
    this.received.fire(message);
    if (message.type === "ready" && this.focusWhenReady) {
      this.focusWhenReady = false;
      this.post({ type: "focus" });
    }
  }

  /** Show the conversation and put the cursor in its question box (Lantern: Focus Question Box). */
  async focusQuestion(where: Location = location()): Promise<void> {
    if (where === "editor") {
      this.showPanel();
      this.panel?.reveal(undefined, false);
    } else {
      await vscode.commands.executeCommand(`${VIEW_ID}.focus`);
    }
    if (this.ready) this.post({ type: "focus" });
    else this.focusWhenReady = true;
  }

  /** Open a verified reference of one of our own results, with its lines selected. */
  async open(ref: Reference | undefined): Promise<void> {
    if (!ref || !ref.verified || !ref.uri) return;
    const uri = vscode.Uri.parse(ref.uri);
    if (uri.scheme !== "file" || !vscode.workspace.getWorkspaceFolder(uri)) return;
    const document = await vscode.workspace.openTextDocument(uri);
    const last = Math.min(ref.endLine, document.lineCount) - 1;
    const selection = new vscode.Selection(ref.startLine - 1, 0, last, document.lineAt(last).text.length);
    // Beside the conversation: the editor area next to the side bar, or, for the
    // editor-tab panel, not its own group (a preview editor there would replace it).
    let viewColumn = vscode.ViewColumn.Active;
    if (location() === "editor") viewColumn = this.panel?.viewColumn === vscode.ViewColumn.One ? vscode.ViewColumn.Two : vscode.ViewColumn.One;
    const editor = await vscode.window.showTextDocument(document, { viewColumn, selection });
    editor.revealRange(selection, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  }

  private html(webview: vscode.Webview, media: vscode.Uri, out: vscode.Uri): string {
    const nonce = crypto.randomBytes(16).toString("base64");
    const script = webview.asWebviewUri(vscode.Uri.joinPath(out, "webview.js"));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(media, "panel.css"));
    const csp = [
      "default-src 'none'",
      `style-src ${webview.cspSource}`,
      `script-src 'nonce-${nonce}'`,
      `img-src ${webview.cspSource} data:`,
      `font-src ${webview.cspSource}`,
    ].join("; ");
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${style}">
<title>Lantern</title>
</head>
<body>
<script nonce="${nonce}" src="${script}"></script>
</body>
</html>`;
  }

  dispose(): void {
    this.panel?.dispose();
    for (const d of this.disposables) d.dispose();
    this.received.dispose();
    this.visibility.dispose();
  }
}
