// The view's copy of the conversation and what each message from the extension changes:
// which turns to draw again, whether the newest turn moved, what the live region says.
// Pure: the webview does the drawing.

import { approvalAnnouncement, completionAnnouncement, statusAnnouncement } from "./announce";
import type { ContextChip, PanelState, SetupState, ToPanel, TurnRecord } from "./protocol";
import { applyEvent } from "./turns";

export interface PanelChange {
  all: boolean; // draw every turn again (a whole state arrived)
  turns: string[]; // keys of the turns to draw again
  removed: string[]; // keys no longer in the conversation
  follow: "none" | "newest" | "new"; // the newest turn changed / a turn was added (scroll to it)
  announce: string[]; // what the live region says, in order
}

export class PanelModel {
  conversationId = "";
  title = "";
  model: string | null = null;
  setup: SetupState | undefined;
  context: ContextChip | null = null; // what the next question carries from the editor
  private order: string[] = [];
  private readonly byKey = new Map<string, TurnRecord>();
  private readonly said = new Set<string>(); // completed turns already announced
  private readonly seenRunning = new Set<string>(); // turns this view saw before they completed
  private readonly approvalsSaid = new Set<string>();

  constructor(private readonly now: () => number = Date.now) {}

  get turns(): TurnRecord[] {
    return this.order.map((key) => this.byKey.get(key)).filter((t): t is TurnRecord => t !== undefined);
  }

  turn(key: string): TurnRecord | undefined {
    return this.byKey.get(key);
  }

  /** An answer is being prepared or written (the Stop button shows). */
  get busy(): boolean {
    return this.turns.some((t) => t.state === "preparing" || t.state === "running");
  }

  get newestKey(): string | undefined {
    return this.order[this.order.length - 1];
  }

  apply(message: ToPanel): PanelChange {
    const change: PanelChange = { all: false, turns: [], removed: [], follow: "none", announce: [] };
    switch (message.type) {
      case "state":
        this.load(message.state, change);
        break;
      case "turn":
        this.upsert(message.turn, change);
        break;
      case "event": {
        const turn = this.byKey.get(message.key);
        if (!turn) break;
        const heard = message.event.kind === "status" && turn.state !== "done" ? statusAnnouncement(message.event) : undefined;
        applyEvent(turn, message.event);
        if (heard) change.announce.push(heard);
        this.noted(turn, change);
        change.turns.push(turn.key);
        if (turn.key === this.newestKey) change.follow = "newest";
        break;
      }
      case "model":
        this.model = message.model;
        this.setup = message.setup;
        break;
      case "context":
        this.context = message.chip;
        break;
    }
    return change;
  }

  private load(state: PanelState, change: PanelChange): void {
    const keys = new Set(state.turns.map((t) => t.key));
    change.removed = this.order.filter((key) => !keys.has(key));
    this.conversationId = state.conversationId;
    this.title = state.title;
    this.model = state.model;
    this.setup = state.setup;
    this.context = state.context ?? null;
    this.order = state.turns.map((t) => t.key);
    this.byKey.clear();
    for (const turn of state.turns) {
      this.byKey.set(turn.key, turn);
      // Turns that were already complete are history: not read out again.
      if (turn.state === "done" && !this.seenRunning.has(turn.key)) this.said.add(turn.key);
      this.noted(turn, change);
    }
    change.all = true;
    change.follow = "new";
  }

  private upsert(turn: TurnRecord, change: PanelChange): void {
    const known = this.byKey.has(turn.key);
    this.byKey.set(turn.key, turn);
    if (!known) this.order.push(turn.key);
    this.noted(turn, change);
    change.turns.push(turn.key);
    if (!known) change.follow = "new";
    else if (turn.key === this.newestKey) change.follow = "newest";
  }

  /** What a changed turn has to say: its completion once, a new approval once. */
  private noted(turn: TurnRecord, change: PanelChange): void {
    if (turn.state !== "done") {
      this.seenRunning.add(turn.key);
      this.said.delete(turn.key); // run again (a retry of the same turn): say it again when done
    } else if (!this.said.has(turn.key)) {
      this.said.add(turn.key);
      const text = completionAnnouncement(turn);
      if (text) change.announce.push(text);
    }
    const approval = turn.approval;
    if (approval && turn.state !== "done" && approval.expiresAt > this.now() && !this.approvalsSaid.has(approval.id)) {
      this.approvalsSaid.add(approval.id);
      change.announce.push(approvalAnnouncement(approval.message));
    }
  }
}
