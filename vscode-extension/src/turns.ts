// How a turn changes as a question runs. The extension host applies these to the
// record it stores, and the view to the copy it renders, so both agree. Pure functions.

import type { AskResult, LanternEvent, PanelApproval, ToolEvent, TurnRecord } from "./protocol";

export function newTurn(
  key: string,
  question: string,
  state: TurnRecord["state"],
  attachment?: TurnRecord["attachment"],
  mentions?: TurnRecord["mentions"],
): TurnRecord {
  const turn: TurnRecord = { key, question, askedAt: Date.now(), state, attachment, tools: [], answer: "" };
  if (mentions?.length) turn.mentions = mentions.map((chip) => ({ ...chip }));
  return turn;
}

/** A queued question goes ahead: running, or preparing while the server starts. */
export function applyStart(turn: TurnRecord, serverRunning: boolean): void {
  if (turn.state === "queued") turn.state = serverRunning ? "running" : "preparing";
}

/** The server is up: a question that waited for it runs. False when that changed nothing. */
export function applyServerReady(turn: TurnRecord): boolean {
  if (turn.state !== "preparing") return false;
  turn.state = "running";
  return true;
}

/** The server asks before a read: the turn shows the prompt until it is answered. */
export function applyApproval(turn: TurnRecord, approval: PanelApproval): void {
  turn.approval = approval;
}

/** The prompt `id` was answered, timed out or withdrawn. False when the turn shows another
 * prompt, or none: that changed nothing. */
export function applyApprovalClosed(turn: TurnRecord, id: string): boolean {
  if (turn.approval?.id !== id) return false;
  turn.approval = undefined;
  return true;
}

function upsertTool(turn: TurnRecord, event: ToolEvent): void {
  const at = turn.tools.findIndex((t) => t.callId === event.callId);
  if (at >= 0) turn.tools[at] = event;
  else turn.tools.push(event);
}

/** One streamed event of the running question. A turn that is done keeps its result: an
 * event that arrives after it (the final status, a late tool event) changes nothing. */
export function applyEvent(turn: TurnRecord, event: LanternEvent): void {
  if (turn.state === "done") return;
  if (event.kind === "tool") {
    const { conversationId: _c, requestId: _r, ...tool } = event;
    upsertTool(turn, tool);
    if (event.status !== "awaiting_approval" && turn.approval?.callId === event.callId) turn.approval = undefined;
    turn.state = "running";
  } else if (event.kind === "answerDelta") {
    turn.answer += event.text;
    turn.state = "running";
  } else if (event.kind === "usage") {
    turn.context = event.context;
  } else if (event.kind === "status") {
    turn.state = "running";
    if (event.status === "compacted" && event.compaction) turn.compactions = [...(turn.compactions ?? []), event.compaction];
    else if (event.status === "warning" && event.detail) turn.warnings = [...(turn.warnings ?? []), event.detail];
    if (event.resetAnswer && turn.answer.trim()) {
      // The server starts the reply again: keep what was shown, marked, instead of wiping it.
      turn.interrupted = turn.answer;
      turn.answer = "";
    } else if (event.status === "thinking") {
      turn.answer = ""; // text before a tool call is not the answer
    }
  }
}

/** The server's result: the final answer, references and calls replace what was streamed;
 * its meter, compactions and warnings replace those of the events (the same, complete). */
export function applyResult(turn: TurnRecord, result: AskResult): void {
  turn.result = result;
  turn.answer = result.answer;
  turn.state = "done";
  turn.approval = undefined;
  turn.context = result.context ?? turn.context;
  turn.compactions = result.compactions ?? turn.compactions;
  turn.warnings = result.warnings ?? turn.warnings;
  if (turn.interrupted !== undefined && turn.interrupted === result.answer) turn.interrupted = undefined;
  for (const call of result.toolCalls) {
    upsertTool(turn, {
      kind: "tool",
      callId: call.id,
      name: call.name,
      arguments: call.arguments,
      summary: call.summary,
      status: call.status,
      code: call.code,
      bytes: call.bytes,
      ms: call.ms,
      waitMs: call.waitMs,
    });
  }
}

/** The question ended without a result: cancelled by the user, or failed. Calls still open
 * read as cancelled or stopped (never as "denied by you", which the user did not do). */
export function applyFailure(turn: TurnRecord, message: string, cancelled: boolean): void {
  turn.failure = { message, cancelled };
  turn.state = "done";
  turn.approval = undefined;
  turn.tools = turn.tools.map((tool) => {
    if (tool.status !== "running" && tool.status !== "awaiting_approval") return tool;
    return cancelled ? { ...tool, status: "denied", code: "cancelled" } : { ...tool, status: "error", code: "stopped" };
  });
}

/** A turn that was running when the window closed: shown as stopped, never as still running. */
export function settleRestored(turn: TurnRecord): TurnRecord {
  if (turn.state === "done") return turn;
  const copy: TurnRecord = { ...turn, tools: turn.tools.map((t) => ({ ...t })), approval: undefined };
  if (turn.state === "queued") {
    copy.state = "done";
    copy.failure = { message: "Not asked: the window was reloaded before its turn.", cancelled: true };
    return copy;
  }
  applyFailure(copy, "Stopped: the window was reloaded while Lantern was answering.", true);
  return copy;
}

/** How the view orders an approval's actions. The server lists first the one that never
 * grants (docs/protocol.md#approvals); the view shows the granting ones first (Allow, Allow
 * in Chat, Always Allow) and that one last, and pre-selects only it, so a bare Enter denies. */
export function shownActions(actions: string[]): { actions: string[]; safe: string | undefined } {
  const [safe, ...grants] = actions;
  return safe === undefined ? { actions: [], safe } : { actions: [...grants, safe], safe };
}
