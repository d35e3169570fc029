// Lantern for VS Code: wiring only. The server does the work; this starts it on
// first use (no Python process until a Lantern command runs or a question is asked),
// keeps the conversation and renders what comes back.

import * as vscode from "vscode";
import { setApiKey } from "./api_key";
import { Questions } from "./ask";
import { Chrome } from "./chrome";
import { currentSettings, Server } from "./client";
import { registerCommands } from "./commands";
import { EditorTracker } from "./editor_tracker";
import { MentionSuggester } from "./mention_suggest";
import { ModelStatus } from "./model_status";
import { PanelMessages } from "./panel_messages";
import { Setup } from "./setup";
import { ConversationStore } from "./store";
import { ConversationView, VIEW_ID } from "./view";

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const output = vscode.window.createOutputChannel("Lantern", { log: true });
  const server = new Server(context, output);
  const store = new ConversationStore(context.workspaceState);
  const view = new ConversationView(context.extensionUri);
  const editors = new EditorTracker((chip) => view.post({ type: "context", chip }));
  const chrome = new Chrome(editors, await server.hasKey());
  const questions = new Questions(view, server, chrome, store);
  const status = new ModelStatus(view, server, questions, chrome);
  const askForKey = (): Promise<boolean> => setApiKey(server, status);
  const setup = new Setup({ client: () => server.connected(), setApiKey: askForKey, hasKey: () => server.hasKey() });
  const mentions = new MentionSuggester({ server, editors, post: (message) => view.post(message), output });
  const panel = new PanelMessages({ view, questions, editors, mentions, setup, setApiKey: askForKey });
  context.subscriptions.push(
    output,
    server,
    view,
    vscode.window.registerWebviewViewProvider(VIEW_ID, view, { webviewOptions: { retainContextWhenHidden: true } }),
    questions,
    editors,
    mentions,
    status,
    server.onDidCreateClient((client) => questions.attach(client)),
    view.onDidReceive((message) => void panel.receive(message)),
    view.onDidChangeVisibility(() => questions.viewVisibilityChanged()),
    ...registerCommands({ output, server, view, questions, editors, store, setup, status, setApiKey: askForKey }),
  );
  // Say at once when a workspace tries to widen Lantern's settings, even before first use.
  void server.reportIgnored(currentSettings());
}

export function deactivate(): void {
  // Disposables registered on the context stop the server.
}
