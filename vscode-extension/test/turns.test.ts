import assert from "node:assert/strict";
import { test } from "node:test";
import { activityRow } from "../src/activity";
import type { AskResult, Compaction, Detail, LanternEvent, MentionChip, PanelApproval, StatusEvent, ToolEvent, TurnRecord } from "../src/protocol";
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
} from "../src/turns";

const ids = { conversationId: "c", requestId: 1 };
const tool = (callId: string, status: ToolEvent["status"], extra: Partial<ToolEvent> = {}): LanternEvent => ({
  ...ids,
  kind: "tool",
  callId,
  name: "read_file",
  arguments: { path: "src/app.py" },
  summary: "src/app.py · lines 1–400",
  status,
  ...extra,
});
const delta = (text: string): LanternEvent => ({ ...ids, kind: "answerDelta", text });
const status = (s: string, extra: Partial<StatusEvent> = {}): LanternEvent => ({ ...ids, kind: "status", status: s, ...extra });
const usage = (used: number, window = 6000): LanternEvent => ({ ...ids, kind: "usage", promptTokens: used, completionTokens: 10, context: { used, window, source: "the maxContextTokens setting" } });

function result(answer: string, extra: Partial<AskResult> = {}): AskResult {
  return {
    conversationId: "c",
    answer,
    references: [],
    toolCalls: [],
    usage: { promptTokens: 10, completionTokens: 5 },
    stopReason: "done",
    ...extra,
  };
}

const approval = (callId: string): PanelApproval => ({ id: `a-${callId}`, callId, message: "Lantern wants to read src/app.py", actions: ["Allow", "Allow in Chat", "Always Allow", "Deny"], expiresAt: Date.now() + 60_000 });

test("a question being prepared starts running with its first event; answer text streams in", () => {
  const turn = newTurn("k", "Where is retry?", "preparing", { path: "src/app.py", startLine: 3, endLine: 9 });
  assert.equal(turn.state, "preparing");
  assert.deepEqual(turn.attachment, { path: "src/app.py", startLine: 3, endLine: 9 });
  applyEvent(turn, status("thinking"));
  assert.equal(turn.state, "running");
  applyEvent(turn, delta("Retries "));
  applyEvent(turn, delta("live in src/retry.py."));
  assert.equal(turn.answer, "Retries live in src/retry.py.");
});

test("a queued question goes ahead: running when the server is up, else preparing; only a queued one moves", () => {
  const up = newTurn("a", "q", "queued");
  applyStart(up, true);
  assert.equal(up.state, "running");
  const starting = newTurn("b", "q", "queued");
  applyStart(starting, false);
  assert.equal(starting.state, "preparing");
  const done = newTurn("c", "q", "running");
  applyResult(done, result("x"));
  applyStart(done, true);
  assert.equal(done.state, "done");
});

test("a question waiting for the server runs once the server is up; any other turn is left as it is", () => {
  const turn = newTurn("k", "q", "preparing");
  assert.equal(applyServerReady(turn), true);
  assert.equal(turn.state, "running");
  assert.equal(applyServerReady(turn), false);
  const queued = newTurn("q", "later", "queued");
  assert.equal(applyServerReady(queued), false);
  assert.equal(queued.state, "queued");
  const done = newTurn("d", "q", "preparing");
  applyFailure(done, "Stopped.", true);
  assert.equal(applyServerReady(done), false);
  assert.equal(done.state, "done");
});

test("an approval shows in its turn until that prompt closes; closing another prompt changes nothing", () => {
  const turn = newTurn("k", "q", "running");
  assert.equal(applyApprovalClosed(turn, "a-c1"), false);
  applyApproval(turn, approval("c1"));
  assert.equal(turn.approval?.id, "a-c1");
  assert.equal(applyApprovalClosed(turn, "a-c0"), false);
  assert.equal(turn.approval?.id, "a-c1");
  applyApproval(turn, approval("c2")); // the next read's prompt replaces it
  assert.equal(applyApprovalClosed(turn, "a-c1"), false);
  assert.equal(turn.approval?.id, "a-c2");
  assert.equal(applyApprovalClosed(turn, "a-c2"), true);
  assert.equal(turn.approval, undefined);
  assert.equal(turn.state, "running");
});

test("each call is one row, updated in place, in the order the calls started", () => {
  const turn = newTurn("k", "q", "running");
  applyEvent(turn, tool("c1", "running"));
  applyEvent(turn, tool("c2", "awaiting_approval"));
  applyEvent(turn, tool("c1", "done", { bytes: 300, ms: 4 }));
  assert.deepEqual(turn.tools.map((t) => [t.callId, t.status]), [["c1", "done"], ["c2", "awaiting_approval"]]);
  assert.equal("conversationId" in turn.tools[0], false);
});

test("the approval of a call closes when that call moves on, not when another does", () => {
  const turn = newTurn("k", "q", "running");
  applyEvent(turn, tool("c1", "awaiting_approval"));
  applyApproval(turn, approval("c1"));
  applyEvent(turn, tool("c0", "done"));
  assert.equal(turn.approval?.callId, "c1");
  applyEvent(turn, tool("c1", "denied", { code: "approval_timeout" }));
  assert.equal(turn.approval, undefined);
});

test("text before a tool call is not the answer: a new model turn starts it again", () => {
  const turn = newTurn("k", "q", "running");
  applyEvent(turn, delta("Let me look at the files."));
  applyEvent(turn, tool("c1", "running"));
  applyEvent(turn, status("thinking"));
  assert.equal(turn.answer, "");
  assert.equal(turn.interrupted, undefined);
});

test("a retry keeps the partial answer, marked, and the final answer replaces it", () => {
  const turn = newTurn("k", "q", "running");
  applyEvent(turn, delta("The retry logic is in"));
  applyEvent(turn, status("retrying", { resetAnswer: true }));
  assert.equal(turn.interrupted, "The retry logic is in");
  assert.equal(turn.answer, "");
  applyEvent(turn, delta("Retries are in src/retry.py."));
  applyResult(turn, result("Retries are in src/retry.py."));
  assert.equal(turn.interrupted, "The retry logic is in");
  assert.equal(turn.answer, "Retries are in src/retry.py.");
  // A retry before any text keeps nothing.
  const quiet = newTurn("k2", "q", "running");
  applyEvent(quiet, delta("  "));
  applyEvent(quiet, status("retrying", { resetAnswer: true }));
  assert.equal(quiet.interrupted, undefined);
});

test("the result's answer and calls replace what was streamed; its wait times are kept", () => {
  const turn = newTurn("k", "q", "running");
  applyEvent(turn, tool("c1", "awaiting_approval"));
  applyApproval(turn, approval("c1"));
  applyEvent(turn, delta("partial"));
  applyResult(
    turn,
    result("Full answer.", {
      toolCalls: [
        { id: "c1", name: "read_file", arguments: {}, summary: "src/app.py · lines 1–400", status: "done", bytes: 900, ms: 12, waitMs: 8000 },
        { id: "c2", name: "search", arguments: {}, status: "error", code: "sensitive_path", bytes: 0, ms: 1 },
      ],
    }),
  );
  assert.equal(turn.state, "done");
  assert.equal(turn.answer, "Full answer.");
  assert.equal(turn.approval, undefined);
  assert.deepEqual(turn.tools.map((t) => [t.callId, t.status, t.waitMs]), [["c1", "done", 8000], ["c2", "error", undefined]]);
  assert.equal(activityRow(turn.tools[0]).waited, "waited 8 s for you");
  // An identical partial is not shown twice.
  const same = newTurn("k2", "q", "running");
  same.interrupted = "Same.";
  applyResult(same, result("Same."));
  assert.equal(same.interrupted, undefined);
});

test("events that arrive after the result change nothing", () => {
  const turn = newTurn("k", "q", "running");
  applyResult(turn, result("Done."));
  applyEvent(turn, status("done"));
  applyEvent(turn, delta(" late"));
  applyEvent(turn, tool("c9", "running"));
  applyEvent(turn, status("thinking"));
  assert.equal(turn.state, "done");
  assert.equal(turn.answer, "Done.");
  assert.deepEqual(turn.tools, []);
});

test("a stopped question: open calls read as cancelled, not as denied by the user; the partial answer stays", () => {
  const turn = newTurn("k", "q", "running");
  applyEvent(turn, tool("c1", "done", { bytes: 10, ms: 2 }));
  applyEvent(turn, tool("c2", "awaiting_approval"));
  applyEvent(turn, tool("c3", "running"));
  applyApproval(turn, approval("c2"));
  applyEvent(turn, delta("So far"));
  applyFailure(turn, "Stopped.", true);
  assert.equal(turn.state, "done");
  assert.equal(turn.approval, undefined);
  assert.equal(turn.answer, "So far");
  assert.deepEqual(turn.failure, { message: "Stopped.", cancelled: true });
  assert.deepEqual(turn.tools.map((t) => activityRow(t).statusText), ["done", "cancelled", "cancelled"]);
});

test("a failed question: open calls read as stopped", () => {
  const turn = newTurn("k", "q", "running");
  applyEvent(turn, tool("c1", "running"));
  applyFailure(turn, "Lantern failed: connection lost", false);
  assert.deepEqual(turn.tools.map((t) => [t.status, activityRow(t).statusText]), [["error", "stopped"]]);
  assert.equal(turn.failure?.cancelled, false);
});

test("after a reload, a running turn shows as stopped and a queued one as not asked; the stored one is untouched", () => {
  const running: TurnRecord = newTurn("r", "q", "running");
  applyEvent(running, tool("c1", "awaiting_approval"));
  applyApproval(running, approval("c1"));
  const settled = settleRestored(running);
  assert.equal(settled.state, "done");
  assert.equal(settled.failure?.cancelled, true);
  assert.equal(settled.approval, undefined);
  assert.equal(settled.tools[0].status, "denied");
  assert.equal(running.state, "running");
  assert.equal(running.tools[0].status, "awaiting_approval");
  assert.ok(running.approval);

  const queued = settleRestored(newTurn("q", "later", "queued"));
  assert.equal(queued.state, "done");
  assert.match(queued.failure?.message ?? "", /Not asked/);

  const done = newTurn("d", "q", "running");
  applyResult(done, result("x"));
  assert.equal(settleRestored(done), done);
});

test("approval actions: granting ones shown first, the server's first (never granting) last and pre-selected", () => {
  const shown = shownActions(["Deny", "Allow", "Allow in Chat", "Always Allow"]);
  assert.deepEqual(shown.actions, ["Allow", "Allow in Chat", "Always Allow", "Deny"]);
  assert.equal(shown.safe, "Deny");
  assert.deepEqual(shownActions([]), { actions: [], safe: undefined });
});

const compaction: Compaction = { how: "summarized", before: 12400, after: 900, turns: 2, outputs: 0, summary: "The handler is at src/app.py:10-12." };
const cut: Detail = {
  code: "prompt_truncated",
  message: "the endpoint counted 40 prompt tokens, but Lantern sent about 3,000",
  summary: "the endpoint counted 40 prompt tokens, but Lantern sent about 3,000",
  fixes: [{ note: "raise the server's context window" }],
};

test("the meter follows each measured request while the question runs, then the result's", () => {
  const turn = newTurn("k", "q", "running");
  applyEvent(turn, usage(1200));
  assert.deepEqual(turn.context, { used: 1200, window: 6000, source: "the maxContextTokens setting" });
  applyEvent(turn, usage(2600));
  assert.equal(turn.context?.used, 2600);
  applyResult(turn, result("a", { context: { used: 2700, window: 6000, source: "the maxContextTokens setting" } }));
  assert.equal(turn.context?.used, 2700);
  // An older server's result carries no meter: the last measured request stands.
  const older = newTurn("o", "q", "running");
  applyEvent(older, usage(900));
  applyResult(older, result("a"));
  assert.equal(older.context?.used, 900);
});

test("a compaction and a cut prompt are kept in the turn as they are said; the answer is untouched", () => {
  const turn = newTurn("k", "q", "running");
  applyEvent(turn, delta("Partial "));
  applyEvent(turn, status("compacted", { message: "Earlier turns summarized (12,400 → 900 tokens)", compaction }));
  applyEvent(turn, status("warning", { message: cut.message, detail: cut }));
  assert.deepEqual(turn.compactions, [compaction]);
  assert.deepEqual(turn.warnings, [cut]);
  assert.equal(turn.answer, "Partial ");
  // The result lists the same; a result without them (an older server) keeps what was said.
  applyResult(turn, result("Answer.", { compactions: [compaction], warnings: [cut] }));
  assert.deepEqual(turn.compactions, [compaction]);
  assert.deepEqual(turn.warnings, [cut]);
  const older = newTurn("o", "q", "running");
  applyEvent(older, status("compacted", { compaction }));
  applyResult(older, result("Answer."));
  assert.deepEqual(older.compactions, [compaction]);
});

test("a question stopped after a compaction keeps its divider, also after a reload", () => {
  const turn = newTurn("k", "q", "running");
  applyEvent(turn, status("compacted", { compaction }));
  applyEvent(turn, status("warning", { detail: cut }));
  const restored = settleRestored(JSON.parse(JSON.stringify(turn)) as TurnRecord);
  assert.equal(restored.state, "done");
  assert.deepEqual(restored.compactions, [compaction]);
  assert.deepEqual(restored.warnings, [cut]);
  applyFailure(turn, "Stopped.", true);
  assert.deepEqual(turn.compactions, [compaction]);
});

test("a compaction or usage after the result changes nothing", () => {
  const turn = newTurn("k", "q", "running");
  applyResult(turn, result("a", { context: { used: 100, window: 6000, source: "s" } }));
  applyEvent(turn, usage(5000));
  applyEvent(turn, status("compacted", { compaction }));
  assert.equal(turn.context?.used, 100);
  assert.equal(turn.compactions, undefined);
});

test("a turn keeps its own copy of the chips it was asked with; a restored turn keeps them", () => {
  const chips: MentionChip[] = [
    { kind: "file", label: "src/app.py", uri: "file:///w/src/app.py" },
    { kind: "problems", label: "Problems in app.py (2)", uri: "file:///w/src/app.py" },
  ];
  const turn = newTurn("m", "What is wrong here?", "running", undefined, chips);
  chips[0].label = "changed by the view";
  assert.deepEqual(turn.mentions?.map((c) => c.label), ["src/app.py", "Problems in app.py (2)"]);
  assert.equal(newTurn("n", "q", "running", undefined, []).mentions, undefined, "no chips: no field");
  assert.deepEqual(settleRestored(turn).mentions, turn.mentions);
});
