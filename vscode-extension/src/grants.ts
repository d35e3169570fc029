// Lantern: Manage Approvals — what Lantern may read without asking (an "Always Allow"
// for this workspace, and this conversation's "Allow in Chat" answers), and revoking it.

import * as vscode from "vscode";
import type { LanguageClient } from "vscode-languageclient/node";
import { grantLabel } from "./grant_items";
import type { Grant } from "./protocol";

interface GrantItem extends vscode.QuickPickItem {
  grant: Grant;
}

export async function manageApprovals(client: LanguageClient | undefined, conversationId: string): Promise<void> {
  if (!client) return;
  let grants: Grant[];
  try {
    const answer = await client.sendRequest<{ grants: Grant[] }>("lantern/grants", { conversationId });
    grants = Array.isArray(answer?.grants) ? answer.grants : [];
  } catch (error) {
    void vscode.window.showErrorMessage(`Lantern could not list its approvals: ${error instanceof Error ? error.message : String(error)}`);
    return;
  }
  if (grants.length === 0) {
    void vscode.window.showInformationMessage("Lantern remembers no approvals here: it asks before every read.");
    return;
  }
  const items: GrantItem[] = grants.map((grant) => ({ ...grantLabel(grant), grant }));
  const picked = await vscode.window.showQuickPick(items, {
    title: "Lantern: Manage Approvals",
    placeHolder: "Select the approvals to revoke; Lantern then asks again",
    canPickMany: true,
    ignoreFocusOut: true,
  });
  if (!picked?.length) return;
  let revoked = 0;
  for (const item of picked) {
    try {
      const answer = await client.sendRequest<{ revoked: boolean }>("lantern/revokeGrant", { id: item.grant.id });
      if (answer?.revoked) revoked++;
    } catch {
      // reported below as not revoked
    }
  }
  const failed = picked.length - revoked;
  const text = `Lantern: revoked ${revoked} approval${revoked === 1 ? "" : "s"}; it asks before those reads again.`;
  if (failed) void vscode.window.showWarningMessage(`${text} ${failed} could not be revoked.`);
  else void vscode.window.showInformationMessage(text);
}
