// Lantern: Show History… (reopen or delete a stored conversation) and
// Lantern: Export Conversation… (a Markdown file with the references as links).

import * as path from "path";
import * as vscode from "vscode";
import type { Questions } from "./ask";
import { conversationMarkdown, relativeLink } from "./export";
import type { ConversationStore, ConversationSummary } from "./store";

interface Item extends vscode.QuickPickItem {
  id: string;
}

const DELETE: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon("trash"), tooltip: "Delete this conversation" };

function itemsOf(list: ConversationSummary[], current: string): Item[] {
  return list.map((c) => ({
    id: c.id,
    label: c.title,
    description: `${new Date(c.updated).toLocaleString()} · ${c.turns} question${c.turns === 1 ? "" : "s"}${c.id === current ? " · open" : ""}`,
    buttons: [DELETE],
  }));
}

export async function showHistory(questions: Questions, store: ConversationStore): Promise<void> {
  const pick = vscode.window.createQuickPick<Item>();
  pick.title = "Lantern: Conversations";
  pick.placeholder = "Open a conversation (the trash button deletes it)";
  const refresh = (): void => {
    pick.items = itemsOf(store.list(), questions.conversationId);
  };
  refresh();
  if (pick.items.length === 0) {
    pick.dispose();
    void vscode.window.showInformationMessage("Lantern has no stored conversations in this workspace yet.");
    return;
  }
  pick.onDidTriggerItemButton(async ({ item }) => {
    await questions.delete(item.id);
    refresh();
  });
  const chosen = await new Promise<Item | undefined>((resolve) => {
    pick.onDidAccept(() => resolve(pick.selectedItems[0]));
    pick.onDidHide(() => resolve(undefined));
    pick.show();
  });
  pick.dispose();
  if (chosen && chosen.id !== questions.conversationId) await questions.open(chosen.id);
}

function slug(title: string): string {
  const s = title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 40);
  return s || "conversation";
}

export async function exportConversation(questions: Questions): Promise<void> {
  const conversation = questions.snapshot();
  if (!conversation.turns.some((t) => t.state === "done")) {
    void vscode.window.showInformationMessage("This conversation has no answers to export yet.");
    return;
  }
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  const target = await vscode.window.showSaveDialog({
    title: "Lantern: Export Conversation",
    defaultUri: folder ? vscode.Uri.joinPath(folder, `lantern-${slug(conversation.title)}.md`) : undefined,
    filters: { Markdown: ["md"] },
    saveLabel: "Export",
  });
  if (!target) return;
  const fromDir = path.posix.dirname(target.path);
  const markdown = conversationMarkdown(conversation, (ref) => {
    if (!ref.uri) return undefined;
    const uri = vscode.Uri.parse(ref.uri);
    return uri.scheme === "file" ? relativeLink(fromDir, uri.path, ref) : undefined;
  });
  await vscode.workspace.fs.writeFile(target, new TextEncoder().encode(markdown));
  const open = await vscode.window.showInformationMessage(`Lantern: exported to ${vscode.workspace.asRelativePath(target)}.`, "Open");
  if (open) await vscode.window.showTextDocument(target);
}
