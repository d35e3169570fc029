// Lantern for VS Code: wiring only. The server does the work; this starts it on
// first use (no Python process until a Lantern command runs or a question is asked),
// keeps the conversation and renders what comes back.

import * as vscode from "vscode";
import { Questions } from "./ask";
import { currentSettings, Server } from "./client";
import { asAttachment, editorContext } from "./editor_context";
import { EditorTracker, stateOf } from "./editor_tracker";
import { manageApprovals } from "./grants";
import { exportConversation, showHistory } from "./history";
import type { ApproveParams, FixAction, FromPanel, PanelState } from "./protocol";
import { Setup } from "./setup";
import { statusView } from "./status";
import { ConversationStore } from "./store";
import { ConversationView, VIEW_ID } from "./view";

/** The model the server is set to use: `lantern.model` from the user's own settings, else
 * LANTERN_MODEL from the environment the server inherits (the server's own precedence). */
function configuredModel(): string | null {
  const model = currentSettings().values.model;
  if (typeof model === "string" && model.trim()) return model.trim();
  return process.env.LANTERN_MODEL?.trim() || null;
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel("Lantern", { log: true });
  const server = new Server(context, output);
  const store = new ConversationStore(context.workspaceState);
  let keySaved = await server.hasKey();
  let questions: Questions | undefined;
  let tracker: EditorTracker | undefined;

  const chrome = (): Pick<PanelState, "model" | "setup" | "context"> => {
    const configured = configuredModel();
    const answered = questions?.usage().last?.model ?? null;
    const model = configured ?? answered;
    const context = tracker?.chip() ?? null;
    if (model) return { model, context };
    const baseUrl = currentSettings().values.baseUrl;
    return { model: null, setup: { baseUrl: typeof baseUrl === "string" ? baseUrl : "", hasKey: keySaved }, context };
  };
  const view = new ConversationView(
    context.extensionUri,
    () => (questions as Questions).state(),
    (message) => void fromPanel(message),
  );
  const client = async () => {
    const c = await server.ensure();
    if (c) {
      questions?.attach(c);
      await server.syncSettings();
    }
    return c;
  };
  questions = new Questions(
    {
      post: (message) => view.post(message),
      show: () => view.show(),
      client,
      get serverRunning() {
        return server.running;
      },
      chrome,
    },
    store,
  );
  const q = questions;
  const editors = new EditorTracker((chip) => view.post({ type: "context", chip }));
  tracker = editors;
  /** Ask with what the active editor shows (unless turned off or left out with the view's ×). */
  const submit = (question: string): void => {
    const attached = editors.take();
    q.submit(question, attached && asAttachment(attached));
  };
  server.onNewClient = (c) => {
    c.onRequest("lantern/approve", (params: ApproveParams, token) => q.approve(params, token));
  };

  const setApiKey = async (): Promise<boolean> => {
    const origin = server.keyOrigin();
    if (origin === undefined) {
      void vscode.window.showErrorMessage("Lantern: lantern.baseUrl is not a valid URL; fix it in your user settings first.");
      return false;
    }
    const key = await vscode.window.showInputBox({
      title: "Lantern: Set API Key",
      prompt: `API key for ${origin || "OpenAI (no lantern.baseUrl set)"}, sent only there (stored in VS Code's secret storage; empty removes it)`,
      password: true,
      ignoreFocusOut: true,
    });
    if (key === undefined) return false;
    await server.setApiKey(key.trim());
    keySaved = await server.hasKey();
    refresh();
    void vscode.window.showInformationMessage(key.trim() ? `Lantern: API key saved for ${origin || "OpenAI"}.` : "Lantern: API key removed.");
    return Boolean(key.trim());
  };
  const setup = new Setup({ client, setApiKey, hasKey: () => server.hasKey() });

  const status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 100);
  // Shown once the server has started: before that Lantern is not running in this window.
  const refresh = (): void => {
    view.post({ type: "model", ...chrome() });
    if (!server.client) return;
    const { last, total } = q.usage();
    const shown = statusView({ configured: configuredModel(), last, total });
    status.text = shown.text;
    status.tooltip = shown.tooltip;
    status.command = shown.command;
    status.show();
  };

  async function fix(action: FixAction): Promise<void> {
    switch (action.action) {
      case "openSetting":
        if (action.setting.startsWith("lantern.")) await vscode.commands.executeCommand("workbench.action.openSettings", action.setting);
        return;
      case "openSettings":
        await vscode.commands.executeCommand("workbench.action.openSettings", "@ext:lantern-dev.lantern");
        return;
      case "pickModel":
        return setup.pickModel();
      case "setApiKey":
        await setApiKey();
        return;
      case "connect":
        return setup.connect();
      case "retry":
        q.retry(action.key);
        return;
    }
  }

  async function fromPanel(message: FromPanel): Promise<void> {
    if (message.type === "ask" && typeof message.question === "string" && message.question.trim()) submit(message.question.trim());
    else if (message.type === "dropContext") editors.drop();
    else if (message.type === "stop") q.stop();
    else if (message.type === "removeQueued") q.removeQueued(message.key);
    else if (message.type === "approve") q.answerApproval(message.id, message.action);
    else if (message.type === "copy" && typeof message.text === "string") await vscode.env.clipboard.writeText(message.text);
    else if (message.type === "fix") await fix(message);
  }

  const ask = async (): Promise<void> => {
    const question = await vscode.window.showInputBox({
      title: "Lantern: Ask",
      prompt: "Ask a question about the code in this workspace",
      placeHolder: "Where is the retry logic?",
      ignoreFocusOut: true,
    });
    if (question?.trim()) submit(question.trim());
  };

  context.subscriptions.push(
    output,
    server,
    view,
    vscode.window.registerWebviewViewProvider(VIEW_ID, view, { webviewOptions: { retainContextWhenHidden: true } }),
    q,
    editors,
    status,
    server.onDidChange(refresh),
    q.onDidAnswer(refresh),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (!event.affectsConfiguration("lantern")) return;
      refresh();
      void server.settingsChanged(event).then((c) => {
        if (c) q.attach(c);
        refresh();
      });
    }),
    vscode.commands.registerCommand("lantern.showConversation", () => view.show()),
    vscode.commands.registerCommand("lantern.ask", ask),
    vscode.commands.registerCommand("lantern.askSelection", async () => {
      const editor = vscode.window.activeTextEditor;
      if (!editor) {
        void vscode.window.showInformationMessage("Open a file and select some code first.");
        return;
      }
      const where = vscode.workspace.asRelativePath(editor.document.uri);
      const question = await vscode.window.showInputBox({
        title: "Lantern: Ask About Selection",
        prompt: `Ask about ${where}, lines ${editor.selection.start.line + 1}–${editor.selection.end.line + 1}`,
        placeHolder: "What does this do?",
        ignoreFocusOut: true,
      });
      if (!question?.trim()) return;
      // Asked for in so many words: sent even when lantern.editorContext is off.
      const attached = editorContext(stateOf(editor), true);
      if (!attached) void vscode.window.showInformationMessage("Lantern reads only files in the workspace folders; asking without the selection.");
      q.submit(question.trim(), attached && asAttachment(attached));
    }),
    vscode.commands.registerCommand("lantern.newConversation", async () => {
      await q.newConversation();
      if (server.running && server.client) questions?.attach(server.client);
      refresh();
    }),
    vscode.commands.registerCommand("lantern.cancel", () => {
      if (!q.stop()) void vscode.window.showInformationMessage("Lantern has no question running.");
    }),
    vscode.commands.registerCommand("lantern.setApiKey", setApiKey),
    vscode.commands.registerCommand("lantern.connectModel", () => setup.connect()),
    vscode.commands.registerCommand("lantern.pickModel", () => setup.pickModel()),
    vscode.commands.registerCommand("lantern.manageApprovals", async () => manageApprovals(await client(), q.conversationId)),
    vscode.commands.registerCommand("lantern.showHistory", () => showHistory(q, store).then(refresh)),
    vscode.commands.registerCommand("lantern.exportConversation", () => exportConversation(q)),
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
      if (c) q.attach(c);
    }),
  );
  // Say at once when a workspace tries to widen Lantern's settings, even before first use.
  void server.reportIgnored(currentSettings());
}

export function deactivate(): void {
  // Disposables registered on the context stop the server.
}
