// Lantern's commands (package.json `contributes.commands`), each on the part that does it.

import * as vscode from "vscode";
import type { Questions } from "./ask";
import type { Server } from "./client";
import { asAttachment, editorContext } from "./editor_context";
import { stateOf, type EditorTracker } from "./editor_tracker";
import { manageApprovals } from "./grants";
import { exportConversation, showHistory } from "./history";
import type { ModelStatus } from "./model_status";
import type { Setup } from "./setup";
import type { ConversationStore } from "./store";
import type { ConversationView } from "./view";

export interface CommandParts {
  output: vscode.LogOutputChannel;
  server: Server;
  view: Pick<ConversationView, "show" | "focusQuestion">;
  questions: Questions;
  editors: Pick<EditorTracker, "take">;
  store: ConversationStore;
  setup: Pick<Setup, "pickModel" | "connect">;
  status: Pick<ModelStatus, "refresh">;
  setApiKey(): Promise<boolean>;
}

/** Lantern: Ask…, with what the active editor shows (unless turned off or left out with the view's ×). */
async function ask({ questions, editors }: CommandParts): Promise<void> {
  const question = await vscode.window.showInputBox({
    title: "Lantern: Ask",
    prompt: "Ask a question about the code in this workspace",
    placeHolder: "Where is the retry logic?",
    ignoreFocusOut: true,
  });
  if (question?.trim()) questions.submit(question.trim(), editors.take());
}

async function askSelection({ questions }: CommandParts): Promise<void> {
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
  questions.submit(question.trim(), attached && asAttachment(attached));
}

async function showAuditLog({ server }: CommandParts): Promise<void> {
  await server.connected();
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
}

export function registerCommands(parts: CommandParts): vscode.Disposable[] {
  const { output, server, view, questions, store, setup, status } = parts;
  const commands: Record<string, () => unknown> = {
    "lantern.showConversation": () => view.show(),
    "lantern.focusQuestion": () => view.focusQuestion(),
    "lantern.ask": () => ask(parts),
    "lantern.askSelection": () => askSelection(parts),
    "lantern.newConversation": async () => {
      await questions.newConversation();
      status.refresh();
    },
    "lantern.cancel": () => {
      if (!questions.stop()) void vscode.window.showInformationMessage("Lantern has no question running.");
    },
    "lantern.setApiKey": parts.setApiKey,
    "lantern.connectModel": () => setup.connect(),
    "lantern.pickModel": () => setup.pickModel(),
    "lantern.manageApprovals": async () => manageApprovals(await server.connected(), questions.conversationId),
    "lantern.showHistory": () => showHistory(questions, store).then(() => status.refresh()),
    "lantern.exportConversation": () => exportConversation(questions),
    "lantern.showAuditLog": () => showAuditLog(parts),
    "lantern.showLog": () => output.show(),
    "lantern.restartServer": async () => {
      await server.restart(); // the new client is attached as it is made
    },
  };
  return Object.entries(commands).map(([id, run]) => vscode.commands.registerCommand(id, run));
}
