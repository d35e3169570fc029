// The conversation in this window: its turns, the question running now and the ones
// queued behind it, approvals answered from the view or (while the view is hidden) a
// notification, and storage.
// The view renders what this posts; the server answers what this sends.

import * as crypto from "crypto";
import * as vscode from "vscode";
import { WorkDoneProgress, type LanguageClient } from "vscode-languageclient/node";
import type { Chrome } from "./chrome";
import type { Server } from "./client";
import { conversationMeter, type Meter } from "./context_meter";
import type { EditorProblem } from "./editor_context";
import { problemsIn } from "./editor_tracker";
import { editorWords } from "./fixes";
import { askContext, keptAttachment, mentionParams } from "./mentions";
import { approvalNeedsNotification, progressPlace } from "./notices";
import type { AskParams, AskResult, ApproveParams, LanternEvent, MentionChip, PanelApproval, PanelState, TurnRecord } from "./protocol";
import { ConversationStore, historyOf, titleOf, type StoredConversation } from "./store";
import {
  applyApproval,
  applyApprovalClosed,
  applyEvent,
  applyFailure,
  applyResult,
  applyServerReady,
  applyStart,
  newTurn,
  settleRestored,
  shownActions,
} from "./turns";
import { location, VIEW_ID, type ConversationView } from "./view";

const REQUEST_CANCELLED = -32800;

/** What went with a question: the editor's context (`editor_context.ts`), or a selection. */
export type Attachment = NonNullable<TurnRecord["attachment"]>;

interface Running {
  key: string;
  conversationId: string;
  cancel: vscode.CancellationTokenSource;
}

interface Pending {
  approval: PanelApproval;
  turnKey: string;
  notified: boolean;
  resolve: (action: string | null) => void;
}

/** A file's problems as VS Code reports them now (for `@problems`). */
function problemsOf(uri: string): EditorProblem[] {
  return problemsIn(vscode.Uri.parse(uri));
}

function freshConversation(): StoredConversation {
  const now = Date.now();
  return { id: crypto.randomUUID(), title: "New conversation", created: now, updated: now, turns: [] };
}

export class Questions implements vscode.Disposable {
  private conversation: StoredConversation;
  private running: Running | undefined;
  private readonly pending = new Map<string, Pending>();
  private subscription: vscode.Disposable | undefined;
  private readonly answered = new vscode.EventEmitter<AskResult>();
  readonly onDidAnswer = this.answered.event;
  private readonly measured = new vscode.EventEmitter<void>();
  /** The running question's request was measured against the window, or compacted. */
  readonly onDidMeasure = this.measured.event;

  constructor(
    private readonly view: Pick<ConversationView, "post" | "show" | "visible">,
    private readonly server: Pick<Server, "connected" | "running">,
    private readonly chrome: Pick<Chrome, "of">,
    private readonly store: ConversationStore,
  ) {
    const current = store.currentId ? store.load(store.currentId) : undefined;
    this.conversation = current ? { ...current, turns: current.turns.map(settleRestored) } : freshConversation();
  }

  get conversationId(): string {
    return this.conversation.id;
  }

  get turns(): readonly TurnRecord[] {
    return this.conversation.turns;
  }

  get busy(): boolean {
    return this.running !== undefined;
  }

  state(): PanelState {
    const answered = this.usage().last?.model ?? null;
    return { conversationId: this.conversation.id, title: this.conversation.title, turns: this.conversation.turns, ...this.chrome.of(answered) };
  }

  snapshot(): StoredConversation {
    return this.conversation;
  }

  /** Take a new client's `lantern/event` notifications (to the running turn) and its
   * `lantern/approve` requests; called before it starts. */
  attach(client: LanguageClient): void {
    client.onRequest("lantern/approve", (params: ApproveParams, token) => this.approve(params, token));
    this.subscription?.dispose();
    this.subscription = client.onNotification("lantern/event", (event: LanternEvent) => {
      const running = this.running;
      if (!running || event.conversationId !== running.conversationId) return;
      const turn = this.turn(running.key);
      if (!turn) return;
      applyEvent(turn, event);
      if (event.kind === "tool" && event.status !== "awaiting_approval") this.closeApprovalFor(event.callId);
      this.view.post({ type: "event", key: running.key, event });
      if (event.kind === "usage" || (event.kind === "status" && event.status === "compacted")) this.measured.fire();
    });
  }

  private turn(key: string): TurnRecord | undefined {
    return this.conversation.turns.find((t) => t.key === key);
  }

  private changed(turn: TurnRecord, persist = true): void {
    this.view.post({ type: "turn", turn });
    if (persist) void this.save();
  }

  private async save(): Promise<void> {
    this.conversation.updated = Date.now();
    await this.store.save(this.conversation);
    await this.store.setCurrent(this.conversation.id);
  }

  /** Ask now, or after the answer that is running (the question is shown as queued), with
   * what the user @-mentioned. */
  submit(question: string, shown?: Attachment, mentions?: MentionChip[]): void {
    const queued = this.running !== undefined || this.conversation.turns.some((t) => t.state === "queued");
    const state = queued ? "queued" : this.server.running ? "running" : "preparing";
    const turn = newTurn(crypto.randomUUID(), question, state, keptAttachment(shown, mentions), mentions);
    if (this.conversation.turns.length === 0) this.conversation.title = titleOf(question);
    this.conversation.turns.push(turn);
    this.view.show();
    this.changed(turn);
    if (!queued) void this.run(turn);
  }

  retry(key: string): void {
    const turn = this.turn(key);
    if (!turn) return;
    this.submit(turn.question, turn.attachment, turn.mentions);
  }

  removeQueued(key: string): void {
    const turn = this.turn(key);
    if (!turn || turn.state !== "queued") return;
    this.conversation.turns = this.conversation.turns.filter((t) => t.key !== key);
    this.view.post({ type: "state", state: this.state() });
    void this.save();
  }

  /** Stop the answer that is running; queued questions then go ahead. */
  stop(): boolean {
    this.running?.cancel.cancel();
    return this.running !== undefined;
  }

  private next(): void {
    const queued = this.conversation.turns.find((t) => t.state === "queued");
    if (!queued) return;
    applyStart(queued, this.server.running);
    this.changed(queued, false);
    void this.run(queued);
  }

  private async run(turn: TurnRecord): Promise<void> {
    const conversation = this.conversation;
    const conversationId = conversation.id;
    const cancel = new vscode.CancellationTokenSource();
    this.running = { key: turn.key, conversationId, cancel };
    try {
      const client = await this.server.connected();
      if (!client) {
        applyFailure(turn, "Lantern's server did not start; the notification and Lantern: Show Log say why.", false);
        return;
      }
      if (cancel.token.isCancellationRequested) throw new vscode.CancellationError();
      if (applyServerReady(turn)) this.changed(turn, false);
      const history = historyOf(this.conversation.turns.filter((t) => t.key !== turn.key));
      const params: AskParams = {
        question: turn.question,
        conversationId,
        context: askContext(turn.attachment, turn.mentions, problemsOf),
        workDoneToken: `lantern-${turn.key}`,
        history,
        mentions: mentionParams(turn.mentions),
      };
      const result = await this.withProgress(client, params, cancel);
      applyResult(turn, result);
      this.answered.fire(result);
      if (result.stopReason === "error") this.notifyError(turn, result);
    } catch (error) {
      const cancelled = cancel.token.isCancellationRequested || (error as { code?: number }).code === REQUEST_CANCELLED;
      applyFailure(turn, cancelled ? "Stopped." : `Lantern failed: ${error instanceof Error ? error.message : String(error)}`, cancelled);
    } finally {
      for (const [id, p] of this.pending) if (p.turnKey === turn.key) this.settle(id, null);
      cancel.dispose();
      if (this.running?.key === turn.key) this.running = undefined;
      if (this.conversation === conversation) {
        this.changed(turn);
        this.next();
      } else {
        // Another conversation was opened meanwhile: this one is stored as it ended.
        void this.store.save(conversation);
      }
    }
  }

  /** The request, with its progress where it covers nothing of the view (`notices.ts`): a
   * notification that mirrors the tool activity and can cancel it only while the view is hidden. */
  private withProgress(client: LanguageClient, params: AskParams, cancel: vscode.CancellationTokenSource): Thenable<AskResult> {
    const place = progressPlace(location(), this.view.visible);
    const where =
      place === "view" ? { viewId: VIEW_ID } : place === "window" ? vscode.ProgressLocation.Window : vscode.ProgressLocation.Notification;
    return vscode.window.withProgress(
      { location: where, title: "Lantern", cancellable: place === "notification" },
      async (progress, token) => {
        token.onCancellationRequested(() => cancel.cancel());
        const q = params.question;
        progress.report({ message: q.length > 60 ? `${q.slice(0, 60)}…` : q });
        const listener = client.onProgress(WorkDoneProgress.type, params.workDoneToken ?? "", (value) => {
          if (value.kind !== "end" && value.message) progress.report({ message: value.message });
        });
        try {
          return await client.sendRequest<AskResult>("lantern/ask", params, cancel.token);
        } finally {
          listener.dispose();
        }
      },
    );
  }

  private notifyError(turn: TurnRecord, result: AskResult): void {
    // The view shows the error with its buttons; a notification says so when the view is hidden.
    const summary = editorWords(result.detail?.summary ?? result.error ?? "the question failed");
    void vscode.window.showErrorMessage(`Lantern: ${summary}`, "Show", "Retry").then((choice) => {
      if (choice === "Show") this.view.show();
      else if (choice === "Retry") this.retry(turn.key);
    });
  }

  // ------------------------------------------------------------ approvals

  /** `lantern/approve`: shown in the turn, and as a notification while no visible view shows
   * it (`notices.ts`); the first answer wins. */
  approve(params: ApproveParams, token: vscode.CancellationToken): Promise<{ action: string | null }> {
    const turn = this.running && params.conversationId === this.running.conversationId ? this.turn(this.running.key) : undefined;
    const id = crypto.randomUUID();
    const { actions, safe } = shownActions(params.actions);
    const approval: PanelApproval = {
      id,
      callId: params.callId,
      message: params.message,
      actions,
      safe,
      expiresAt: Date.now() + params.timeoutSeconds * 1000,
    };
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.settle(id, null), params.timeoutSeconds * 1000);
      this.pending.set(id, {
        approval,
        turnKey: turn?.key ?? "",
        notified: false,
        resolve: (action) => {
          clearTimeout(timer);
          resolve({ action });
        },
      });
      token.onCancellationRequested(() => this.settle(id, null));
      if (turn) {
        applyApproval(turn, approval);
        this.changed(turn, false);
      }
      this.notifyUnseen(id);
    });
  }

  /** The view was shown or hidden: approvals it no longer shows come as notifications. */
  viewVisibilityChanged(): void {
    for (const id of [...this.pending.keys()]) this.notifyUnseen(id);
  }

  private notifyUnseen(id: string): void {
    const pending = this.pending.get(id);
    if (!pending || !approvalNeedsNotification({ inView: pending.turnKey !== "", notified: pending.notified }, this.view.visible)) return;
    pending.notified = true;
    // Closing the notification is not an answer: the prompt stays in the view.
    void vscode.window.showInformationMessage(pending.approval.message, ...pending.approval.actions).then((choice) => {
      if (choice !== undefined) this.settle(id, choice);
    });
  }

  /** An answer from the view. */
  answerApproval(id: string, action: string): void {
    this.settle(id, action);
  }

  private closeApprovalFor(callId: string): void {
    for (const [id, p] of this.pending) if (p.approval.callId === callId) this.settle(id, null);
  }

  private settle(id: string, action: string | null): void {
    const pending = this.pending.get(id);
    if (!pending) return;
    this.pending.delete(id);
    pending.resolve(action);
    const turn = this.turn(pending.turnKey);
    if (turn && applyApprovalClosed(turn, id)) this.changed(turn, false);
  }

  // ------------------------------------------------------------ conversations

  /** Start a new conversation; the current one stays in the history. */
  async newConversation(): Promise<void> {
    await this.switchTo(freshConversation());
  }

  async open(id: string): Promise<boolean> {
    const stored = this.store.load(id);
    if (!stored) return false;
    await this.switchTo({ ...stored, turns: stored.turns.map(settleRestored) });
    return true;
  }

  async delete(id: string): Promise<void> {
    await this.store.delete(id);
    if (id === this.conversation.id) await this.switchTo(freshConversation());
  }

  private async switchTo(conversation: StoredConversation): Promise<void> {
    this.running?.cancel.cancel();
    // Questions still queued are never asked: they go with the conversation left.
    this.conversation.turns = this.conversation.turns.filter((t) => t.state !== "queued");
    await this.store.save(this.conversation);
    this.conversation = conversation;
    await this.store.setCurrent(conversation.id);
    this.view.post({ type: "state", state: this.state() });
  }

  /** Tokens of the last answer (a failed question is not one) and of the whole conversation,
   * and how full the context window is. */
  usage(): { last?: AskResult; total: { promptTokens: number; completionTokens: number }; meter?: Meter } {
    const total = { promptTokens: 0, completionTokens: 0 };
    let last: AskResult | undefined;
    for (const turn of this.conversation.turns) {
      if (!turn.result) continue;
      total.promptTokens += turn.result.usage.promptTokens;
      total.completionTokens += turn.result.usage.completionTokens;
      if (turn.result.stopReason !== "error") last = turn.result; // a failure answered nothing
    }
    return { last, total, meter: conversationMeter(this.conversation.turns) };
  }

  dispose(): void {
    this.subscription?.dispose();
    this.running?.cancel.cancel();
    for (const id of [...this.pending.keys()]) this.settle(id, null);
    this.answered.dispose();
    this.measured.dispose();
  }
}
