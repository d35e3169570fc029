import assert from "node:assert/strict";
import { test } from "node:test";
import { compactionText, conversationMeter, meterOf } from "../src/context_meter";
import type { Compaction, TurnRecord } from "../src/protocol";
import { newTurn } from "../src/turns";

const summarized: Compaction = { how: "summarized", before: 12400, after: 900, turns: 3, outputs: 0, summary: "Earlier: handle_request is at src/app.py:10-12." };

test("the meter's line: used of window with thousands separators, the percent and where the window came from", () => {
  const meter = meterOf({ used: 3120, window: 8192, source: "the maxContextTokens setting" });
  assert.ok(meter);
  assert.equal(meter.label, "Context: 3,120 of 8,192 tokens (38%) · window: the maxContextTokens setting");
  assert.equal(meter.percent, 38);
  assert.equal(meter.warn, false);
  assert.ok(Math.abs(meter.fraction - 3120 / 8192) < 1e-9);
});

test("from 80% the meter warns, in words first; just under it does not", () => {
  const under = meterOf({ used: 6553, window: 8192, source: "Ollama /api/ps: the loaded model" });
  assert.equal(under?.warn, false);
  assert.equal(under?.percent, 79);
  const at = meterOf({ used: 6554, window: 8192, source: "Ollama /api/ps: the loaded model" });
  assert.equal(at?.warn, true);
  assert.equal(at?.label, "Context 80% full: earlier turns will be summarized. 6,554 of 8,192 tokens (80%) · window: Ollama /api/ps: the loaded model");
});

test("over the window: the percent says so, the bar stops at full", () => {
  const meter = meterOf({ used: 9000, window: 8192, source: "s" });
  assert.equal(meter?.percent, 109);
  assert.equal(meter?.fraction, 1);
  assert.equal(meter?.warn, true);
});

test("no window known: no meter", () => {
  assert.equal(meterOf({ used: 10, window: 0, source: "s" }), undefined);
});

test("the tooltip adds what the last compaction did", () => {
  const meter = meterOf({ used: 1500, window: 6000, source: "the maxContextTokens setting" }, summarized);
  assert.equal(meter?.label, "Context: 1,500 of 6,000 tokens (25%) · window: the maxContextTokens setting · last compaction: Earlier turns summarized (12,400 → 900 tokens)");
});

test("a compaction in words: summarized, or what was shortened and dropped, and why not summarized", () => {
  assert.equal(compactionText(summarized), "Earlier turns summarized (12,400 → 900 tokens)");
  assert.equal(
    compactionText({ how: "dropped", before: 7000, after: 4100, turns: 2, outputs: 3, why: "summarizing failed (the model server answered 500)" }),
    "2 earlier turns dropped and 3 old tool outputs shortened to fit the context window (7,000 → 4,100 tokens): summarizing failed (the model server answered 500)",
  );
  assert.equal(
    compactionText({ how: "shortened", before: 5000, after: 4000, turns: 0, outputs: 1 }),
    "1 old tool output shortened to fit the context window (5,000 → 4,000 tokens)",
  );
  assert.equal(compactionText({ how: "dropped", before: 5000, after: 4000, turns: 1, outputs: 0 }), "1 earlier turn dropped to fit the context window (5,000 → 4,000 tokens)");
});

test("the conversation's meter: the newest measured turn, with the newest compaction of any turn", () => {
  const first: TurnRecord = { ...newTurn("a", "q1", "done"), context: { used: 5000, window: 6000, source: "s" }, compactions: [summarized] };
  const second: TurnRecord = { ...newTurn("b", "q2", "done"), context: { used: 1200, window: 6000, source: "s" } };
  const running = newTurn("c", "q3", "running"); // not measured yet: the last one stands
  assert.equal(conversationMeter([]), undefined);
  assert.equal(conversationMeter([newTurn("x", "q", "done")]), undefined);
  const meter = conversationMeter([first, second, running]);
  assert.equal(meter?.percent, 20);
  assert.match(meter?.label ?? "", /1,200 of 6,000 tokens \(20%\).*last compaction: Earlier turns summarized/);
});
