// Lantern for VS Code: wiring only. The server does the work; this starts it on
// first use (no Python process until a Lantern command runs), sends questions and
// renders what comes back.

import * as vscode from "vscode";
import { Questions } from "./ask";
import { currentSettings, Server } from "./client";
import type { AskResult } from "./protocol";
import { statusText } from "./settings";
import { ConversationView, VIEW_ID } from "./view";

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel("Lantern", { log: true });
  const server = new Server(context, output);
  const panel = new ConversationView(context.extensionUri, (question) => void ask(question));
  const questions = new Questions(panel);
  const status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 100);
  status.command = "lantern.ask";
  status.tooltip = "Lantern: Ask…";
  let lastUsage: AskResult["usage"] | undefined;
  // Shown once the server has started: before that Lantern is not running in this window.
  const refreshStatus = (): void => {
    if (!server.client) return;
    status.text = statusText(server.info?.model ?? null, lastUsage);
    status.show();
  };

  async function client() {
    const c = await server.ensure();
    if (c) questions.attach(c);
    return c;
  }

  async function ask(question: string, selection?: { uri: string; range: import("./protocol").Range }): Promise<void> {
    const c = await client();
    if (c) await questions.ask(c, question, selection);
  }

  context.subscriptions.push(
    output,
    server,
    panel,
    vscode.window.registerWebviewViewProvider(VIEW_ID, panel, { webviewOptions: { retainContextWhenHidden: true } }),
    questions,
    status,
    server.onDidChange(refreshStatus),
    questions.onDidAnswer((result) => {
      lastUsage = result.usage;
      refreshStatus();
    }),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (!event.affectsConfiguration("lantern")) return;
      void server.settingsChanged(event).then((c) => {
        if (c) questions.attach(c);
        refreshStatus();
      });
    }),
    vscode.commands.registerCommand("lantern.showConversation", () => panel.show()),
    vscode.commands.registerCommand("lantern.ask", async () => {
      const question = await vscode.window.showInputBox({
        title: "Lantern: Ask",
        prompt: "Ask a question about the code in this workspace",
        placeHolder: "Where is the retry logic?",
        ignoreFocusOut: true,
      });
      if (question?.trim()) await ask(question.trim());
    }),
    vscode.commands.registerCommand("lantern.askSelection", async () => {
      const editor = vscode.window.activeTextEditor;
      if (!editor) {
        void vscode.window.showInformationMessage("Open a file and select some code first.");
        return;
      }
      const question = await vscode.window.showInputBox({
        title: "Lantern: Ask About Selection",
        prompt: `Ask about ${vscode.workspace.asRelativePath(editor.document.uri)}`,
        placeHolder: "What does this do?",
        ignoreFocusOut: true,
      });
      if (!question?.trim()) return;
      const s = editor.selection;
      await ask(question.trim(), {
        uri: editor.document.uri.toString(),
        range: { start: { line: s.start.line, character: s.start.character }, end: { line: s.end.line, character: s.end.character } },
      });
    }),
    vscode.commands.registerCommand("lantern.newConversation", async () => {
      await questions.newConversation(server.running ? server.client : undefined);
    }),
    vscode.commands.registerCommand("lantern.cancel", () => {
      if (!questions.cancel()) void vscode.window.showInformationMessage("Lantern has no question running.");
    }),
    vscode.commands.registerCommand("lantern.setApiKey", async () => {
      const origin = server.keyOrigin();
      if (origin === undefined) {
        void vscode.window.showErrorMessage("Lantern: lantern.baseUrl is not a valid URL; fix it in your user settings first.");
        return;
      }
      const key = await vscode.window.showInputBox({
        title: "Lantern: Set API Key",
        prompt: `API key for ${origin || "the default endpoint"}, sent only there (stored in VS Code's secret storage; empty removes it)`,
        password: true,
        ignoreFocusOut: true,
      });
      if (key === undefined) return;
      await server.setApiKey(key.trim());
      if (server.client) questions.attach(server.client);
      void vscode.window.showInformationMessage(key.trim() ? `Lantern: API key saved for ${origin || "the default endpoint"}.` : "Lantern: API key removed.");
    }),
    vscode.commands.registerCommand("lantern.showAuditLog", async () => {
      await client();
      const file = server.info?.auditLog;
      if (!file) {
        void vscode.window.showInformationMessage("Lantern's server is not running, so its audit log is unknown.");
        return;
      }
      try {
        await vscode.window.showTextDocument(vscode.Uri.file(file), { preview: true });
      } catch {
        void vscode.window.showInformationMessage("Lantern has not written an audit log yet: nothing was read.");
      }
    }),
    vscode.commands.registerCommand("lantern.showLog", () => output.show()),
    vscode.commands.registerCommand("lantern.restartServer", async () => {
      const c = await server.restart();
      if (c) questions.attach(c);
    }),
  );
  // Say at once when a workspace tries to widen Lantern's settings, even before first use.
  void server.reportIgnored(currentSettings());
}

export function deactivate(): void {
  // Disposables registered on the context stop the server.
}
