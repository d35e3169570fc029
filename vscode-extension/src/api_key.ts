// Lantern: Set API Key…: the key of the endpoint now configured, kept in VS Code's secret
// storage and sent only to that endpoint.

import * as vscode from "vscode";
import type { Server } from "./client";
import type { ModelStatus } from "./model_status";

/** Ask for the key and store it (empty removes it); true when a key was entered. */
export async function setApiKey(server: Server, status: Pick<ModelStatus, "keyChanged">): Promise<boolean> {
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
  await status.keyChanged();
  void vscode.window.showInformationMessage(key.trim() ? `Lantern: API key saved for ${origin || "OpenAI"}.` : "Lantern: API key removed.");
  return Boolean(key.trim());
}
