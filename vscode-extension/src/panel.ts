// The answer panel: a webview that shows questions, tool activity, answers and references.
// It only renders; clicks come back as messages and are checked against our own results.

import * as crypto from "crypto";
import * as vscode from "vscode";
import type { AskResult, FromPanel, ToPanel } from "./protocol";

export class AnswerPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private ready = false;
  private queue: ToPanel[] = [];
  private readonly results = new Map<string, AskResult>();
  private readonly history: ToPanel[] = [];

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly onFollowUp: (question: string) => void,
  ) {}

  show(): void {
    if (this.panel) {
      // Every event comes through here: leave a visible panel where it is.
      if (!this.panel.visible) this.panel.reveal(vscode.ViewColumn.Beside, true);
      return;
    }
    const media = vscode.Uri.joinPath(this.extensionUri, "media");
    const out = vscode.Uri.joinPath(this.extensionUri, "out");
    this.panel = vscode.window.createWebviewPanel(
      "lantern.answers",
      "Lantern",
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
      { enableScripts: true, retainContextWhenHidden: true, localResourceRoots: [media, out] },
    );
    this.ready = false;
    this.panel.webview.html = this.html(this.panel.webview, media, out);
    this.panel.webview.onDidReceiveMessage((message: FromPanel) => this.receive(message));
    this.panel.onDidDispose(() => {
      this.panel = undefined;
      this.ready = false;
    });
    // A reopened panel shows the conversation so far.
    this.queue = [...this.history];
  }

  post(message: ToPanel): void {
    if (message.type === "result") this.results.set(message.key, message.result);
    if (message.type === "reset") {
      this.history.length = 0;
      this.results.clear();
    } else {
      this.history.push(message);
    }
    this.show();
    if (this.ready && this.panel) void this.panel.webview.postMessage(message);
    else this.queue.push(message);
  }

  private receive(message: FromPanel | { type: "ready" }): void {
    if (message.type === "ready") {
      this.ready = true;
      for (const queued of this.queue.splice(0)) void this.panel?.webview.postMessage(queued);
    } else if (message.type === "open") {
      void this.open(message.key, message.index);
    } else if (message.type === "ask" && typeof message.question === "string" && message.question.trim()) {
      this.onFollowUp(message.question.trim());
    }
  }

  /** Open a verified reference of one of our own results, with its lines selected. */
  private async open(key: string, index: number): Promise<void> {
    const ref = this.results.get(key)?.references[index];
    if (!ref || !ref.verified || !ref.uri) return;
    const uri = vscode.Uri.parse(ref.uri);
    if (uri.scheme !== "file" || !vscode.workspace.getWorkspaceFolder(uri)) return;
    const document = await vscode.workspace.openTextDocument(uri);
    const last = Math.min(ref.endLine, document.lineCount) - 1;
    const selection = new vscode.Selection(ref.startLine - 1, 0, last, document.lineAt(last).text.length);
    // Not in the panel's own group: a preview editor there would replace the panel.
    const viewColumn = this.panel?.viewColumn === vscode.ViewColumn.One ? vscode.ViewColumn.Two : vscode.ViewColumn.One;
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
<main id="turns" aria-live="polite"></main>
<form id="follow-up">
  <textarea id="follow-up-text" rows="2" placeholder="Ask a follow-up in this conversation…" aria-label="Follow-up question"></textarea>
  <button type="submit">Ask</button>
</form>
<script nonce="${nonce}" src="${script}"></script>
</body>
</html>`;
  }

  dispose(): void {
    this.panel?.dispose();
  }
}
