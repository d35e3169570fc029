import assert from "node:assert/strict";
import { test } from "node:test";
import { completionAnnouncement, plainText, preview } from "../src/announce";
import { PanelModel } from "../src/panel_model";
import type { AskResult, PanelState, TurnRecord } from "../src/protocol";
import { newTurn } from "../src/turns";

const ids = { conversationId: "c", requestId: 1 };
const done = (key: string, answer: string, extra: Partial<AskResult> = {}): TurnRecord => ({
  ...newTurn(key, `question ${key}`, "done"),
  answer,
  result: { conversationId: "c", answer, references: [], toolCalls: [], usage: { promptTokens: 1, completionTokens: 1 }, stopReason: "done", ...extra },
});
const state = (turns: TurnRecord[], extra: Partial<PanelState> = {}): PanelState => ({ conversationId: "c", title: "t", turns, model: "qwen", ...extra });
const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

test("a restored conversation is drawn whole and not read out again", () => {
  const model = new PanelModel();
  const change = model.apply({ type: "state", state: state([done("a", "Old answer."), done("b", "Another.")]) });
  assert.equal(change.all, true);
  assert.deepEqual(change.announce, []);
  assert.deepEqual(model.turns.map((t) => t.key), ["a", "b"]);
  assert.equal(model.model, "qwen");
  assert.equal(model.busy, false);
});

test("an answer is announced once, when it completes, never chunk by chunk", () => {
  const model = new PanelModel();
  model.apply({ type: "state", state: state([]) });
  const asked = model.apply({ type: "turn", turn: newTurn("k", "Where?", "running") });
  assert.equal(asked.follow, "new");
  assert.equal(model.busy, true);
  for (const text of ["Retries ", "are in **src/retry.py**."]) {
    const change = model.apply({ type: "event", key: "k", event: { ...ids, kind: "answerDelta", text } });
    assert.deepEqual(change.announce, []);
    assert.deepEqual(change.turns, ["k"]);
    assert.equal(change.follow, "newest");
  }
  assert.equal(model.turn("k")?.answer, "Retries are in **src/retry.py**.");
  const finished = done("k", "Retries are in **src/retry.py**.");
  assert.deepEqual(model.apply({ type: "turn", turn: finished }).announce, ["Answer ready: Retries are in src/retry.py."]);
  assert.deepEqual(model.apply({ type: "turn", turn: clone(finished) }).announce, []);
  // The whole state again (the view reopened): still not said twice.
  assert.deepEqual(model.apply({ type: "state", state: state([clone(finished)]) }).announce, []);
  assert.equal(model.busy, false);
});

test("a turn completed while the view was catching up is still announced", () => {
  const model = new PanelModel();
  model.apply({ type: "turn", turn: newTurn("k", "q", "running") });
  assert.deepEqual(model.apply({ type: "state", state: state([done("k", "Here.")]) }).announce, ["Answer ready: Here."]);
});

test("an approval is announced once when it appears, with its message", () => {
  const model = new PanelModel(() => 1_000);
  const turn = newTurn("k", "q", "running");
  model.apply({ type: "turn", turn });
  const approval = { id: "a1", callId: "c1", message: "Lantern wants to read src/app.py (lines 1–400, 12 KB)", actions: ["Allow", "Allow in Chat", "Always Allow", "Deny"], expiresAt: 121_000 };
  const shown = model.apply({ type: "turn", turn: { ...turn, approval } });
  assert.deepEqual(shown.announce, ["Lantern needs your approval: Lantern wants to read src/app.py (lines 1–400, 12 KB)"]);
  assert.deepEqual(model.apply({ type: "turn", turn: { ...turn, approval } }).announce, []);
  // An expired one is not announced.
  assert.deepEqual(model.apply({ type: "turn", turn: { ...turn, approval: { ...approval, id: "a2", expiresAt: 500 } } }).announce, []);
});

test("events of an unknown turn are ignored; the newest turn is followed only when it changes", () => {
  const model = new PanelModel();
  model.apply({ type: "state", state: state([newTurn("a", "first", "running"), newTurn("b", "second", "queued")]) });
  const unknown = model.apply({ type: "event", key: "zz", event: { ...ids, kind: "answerDelta", text: "x" } });
  assert.deepEqual(unknown.turns, []);
  const older = model.apply({ type: "event", key: "a", event: { ...ids, kind: "answerDelta", text: "x" } });
  assert.equal(older.follow, "none");
  assert.equal(model.newestKey, "b");
});

test("a queued question removed: the whole state says which turns went", () => {
  const model = new PanelModel();
  model.apply({ type: "state", state: state([newTurn("a", "first", "running"), newTurn("b", "second", "queued")]) });
  const change = model.apply({ type: "state", state: state([newTurn("a", "first", "running")]) });
  assert.deepEqual(change.removed, ["b"]);
  // Only queued: nothing runs, so no Stop.
  model.apply({ type: "state", state: state([newTurn("b", "second", "queued")]) });
  assert.equal(model.busy, false);
  model.apply({ type: "state", state: state([newTurn("p", "first", "preparing")]) });
  assert.equal(model.busy, true);
});

test("the model message updates the chip and the setup card", () => {
  const model = new PanelModel();
  model.apply({ type: "state", state: state([], { model: null, setup: { baseUrl: "", hasKey: false } }) });
  assert.deepEqual(model.setup, { baseUrl: "", hasKey: false });
  model.apply({ type: "model", model: "gpt-4o-mini" });
  assert.equal(model.model, "gpt-4o-mini");
  assert.equal(model.setup, undefined);
});

test("failures are announced as failures; markup is not read out; long answers are cut at a word", () => {
  const failed: TurnRecord = { ...newTurn("f", "q", "done"), failure: { message: "Lantern failed: connection refused", cancelled: false } };
  assert.equal(completionAnnouncement(failed), "Lantern failed: connection refused");
  assert.equal(completionAnnouncement({ ...failed, failure: { message: "connection refused", cancelled: false } }), "Lantern failed: connection refused");
  const error = done("e", "", { stopReason: "error", error: "no model is set", detail: { code: "no_model", message: "m", summary: "no model is set", fixes: [] } });
  assert.equal(completionAnnouncement(error), "Lantern failed: no model is set");
  assert.equal(completionAnnouncement({ ...newTurn("s", "q", "done"), failure: { message: "Stopped.", cancelled: true } }), "Lantern stopped.");
  assert.equal(completionAnnouncement(newTurn("r", "q", "running")), undefined);
  assert.equal(plainText("## Where\n\n- **Retry** in [the handler](src/app.py:3)\n\n```python\ndef retry(): pass\n```"), "Where Retry in the handler (code)");
  assert.equal(plainText("Use:\n\n```python\nretry()\n```\n\nThen *stop*."), "Use: (code) Then stop.");
  const long = preview("word ".repeat(100).trim());
  assert.ok(long.length <= 201, String(long.length));
  assert.ok(long.endsWith("word…"));
});

test("the editor context chip comes with the state and follows its own messages", () => {
  const model = new PanelModel();
  model.apply({ type: "state", state: state([], { context: { label: "app.py:10-12", title: "src/app.py, lines 10–12 selected" } }) });
  assert.equal(model.context?.label, "app.py:10-12");
  const change = model.apply({ type: "context", chip: null });
  assert.equal(model.context, null);
  assert.deepEqual(change.turns, []); // no turn is drawn again for it
});

test("a compaction and a cut prompt are said once, as they come; a restored divider is not read out again", () => {
  const compaction = { how: "summarized" as const, before: 12400, after: 900, turns: 2, outputs: 0, summary: "s" };
  const model = new PanelModel();
  model.apply({ type: "state", state: state([]) });
  model.apply({ type: "turn", turn: newTurn("k", "And now?", "running") });
  const compacted = model.apply({ type: "event", key: "k", event: { ...ids, kind: "status", status: "compacted", message: "Earlier turns summarized (12,400 → 900 tokens)", compaction } });
  assert.deepEqual(compacted.announce, ["Lantern: Earlier turns summarized (12,400 → 900 tokens)."]);
  const detail = { code: "prompt_truncated", message: "m", summary: "the endpoint counted 40 prompt tokens, but Lantern sent about 3,000", fixes: [] };
  const warned = model.apply({ type: "event", key: "k", event: { ...ids, kind: "status", status: "warning", message: "m", detail } });
  assert.deepEqual(warned.announce, ["Lantern warns: the endpoint counted 40 prompt tokens, but Lantern sent about 3,000"]);
  const thinking = model.apply({ type: "event", key: "k", event: { ...ids, kind: "status", status: "thinking" } });
  assert.deepEqual(thinking.announce, []);
  const restored = new PanelModel();
  const change = restored.apply({ type: "state", state: state([{ ...done("k", "Answer."), compactions: [compaction] }]) });
  assert.deepEqual(change.announce, []);
});
