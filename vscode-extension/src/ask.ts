// One question: progress notification with Cancel, events into the panel, the result back.

import * as crypto from "crypto";
import * as vscode from "vscode";
import { WorkDoneProgress, type LanguageClient } from "vscode-languageclient/node";
import type { ConversationView } from "./view";
import type { AskParams, AskResult, LanternEvent } from "./protocol";

const REQUEST_CANCELLED = -32800;

export class Questions implements vscode.Disposable {
  conversationId = crypto.randomUUID();
  private readonly running = new Map<string, { key: string; cancel: vscode.CancellationTokenSource }>();
  private readonly lastResult = new vscode.EventEmitter<AskResult>();
  readonly onDidAnswer = this.lastResult.event;
  private subscription: vscode.Disposable | undefined;

  constructor(private readonly panel: ConversationView) {}

  /** Route `lantern/event` notifications of a (re)started client to the panel. */
  attach(client: LanguageClient): void {
    this.subscription?.dispose();
    this.subscription = client.onNotification("lantern/event", (event: LanternEvent) => {
      const question = this.running.get(event.conversationId);
      if (question) this.panel.post({ type: "event", key: question.key, event });
    });
  }

  cancel(): boolean {
    const question = this.running.get(this.conversationId) ?? [...this.running.values()].pop();
    question?.cancel.cancel();
    return question !== undefined;
  }

  async newConversation(client: LanguageClient | undefined): Promise<void> {
    const old = this.conversationId;
    this.running.get(old)?.cancel.cancel();
    this.conversationId = crypto.randomUUID();
    this.panel.post({ type: "reset" });
    if (client) {
      try {
        await client.sendRequest("lantern/resetConversation", { conversationId: old });
      } catch {
        // the server forgets it on restart anyway
      }
    }
  }

  async ask(client: LanguageClient, question: string, context?: AskParams["context"]): Promise<AskResult | undefined> {
    const conversationId = this.conversationId;
    if (this.running.has(conversationId)) {
      void vscode.window.showInformationMessage("Lantern is still answering; wait for it or run Lantern: Cancel.");
      return undefined;
    }
    const key = crypto.randomUUID();
    const cancel = new vscode.CancellationTokenSource();
    this.running.set(conversationId, { key, cancel });
    this.panel.post({ type: "question", key, question });
    const workDoneToken = `lantern-${key}`;
    try {
      return await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: "Lantern", cancellable: true },
        async (progress, token) => {
          token.onCancellationRequested(() => cancel.cancel());
          progress.report({ message: question.length > 60 ? `${question.slice(0, 60)}…` : question });
          const listener = client.onProgress(WorkDoneProgress.type, workDoneToken, (value) => {
            if (value.kind !== "end" && value.message) progress.report({ message: value.message });
          });
          try {
            const params: AskParams = { question, conversationId, context, workDoneToken };
            const result = await client.sendRequest<AskResult>("lantern/ask", params, cancel.token);
            this.panel.post({ type: "result", key, result });
            this.lastResult.fire(result);
            if (result.stopReason === "error" && result.error) void vscode.window.showErrorMessage(`Lantern: ${result.error}`);
            return result;
          } finally {
            listener.dispose();
          }
        },
      );
    } catch (error) {
      const cancelled = cancel.token.isCancellationRequested || (error as { code?: number }).code === REQUEST_CANCELLED;
      const message = cancelled ? "Cancelled." : `Lantern failed: ${error instanceof Error ? error.message : String(error)}`;
      this.panel.post({ type: "failed", key, message, cancelled });
      return undefined;
    } finally {
      this.running.delete(conversationId);
      cancel.dispose();
    }
  }

  dispose(): void {
    this.subscription?.dispose();
    for (const { cancel } of this.running.values()) cancel.cancel();
    this.lastResult.dispose();
  }
}
