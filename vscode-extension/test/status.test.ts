import assert from "node:assert/strict";
import { test } from "node:test";
import { statusView } from "../src/status";

const none = { promptTokens: 0, completionTokens: 0 };

test("no model set and none answered: the item offers to connect one", () => {
  const view = statusView({ configured: null, total: none });
  assert.equal(view.text, "$(lightbulb) Lantern: connect a model");
  assert.equal(view.command, "lantern.connectModel");
});

test("after an answer: the model that answered and its tokens in and out", () => {
  const view = statusView({
    configured: "m1",
    last: { model: "m1", usage: { promptTokens: 1200, completionTokens: 330 } },
    total: { promptTokens: 5000, completionTokens: 900 },
  });
  assert.equal(view.text, "$(lightbulb) m1 · 1.2k↑ 330↓");
  assert.match(view.tooltip, /Last answer: 1200 tokens in/);
  assert.match(view.tooltip, /This conversation: 5000 tokens in, 900 out/);
  assert.equal(view.command, "lantern.pickModel");
});

test("the setting changed after the answer: the new model, not the old one, and no old tokens", () => {
  const view = statusView({
    configured: "m2",
    last: { model: "m1", usage: { promptTokens: 10, completionTokens: 5 } },
    total: { promptTokens: 10, completionTokens: 5 },
  });
  assert.equal(view.text, "$(lightbulb) m2");
  assert.match(view.tooltip, /last answer came from m1; the next comes from m2/);
});

test("no setting, but a model found on the machine answered: that model", () => {
  const view = statusView({ configured: "", last: { model: "qwen2.5-coder", usage: { promptTokens: 1, completionTokens: 2 } }, total: none });
  assert.equal(view.text, "$(lightbulb) qwen2.5-coder · 1↑ 2↓");
  assert.match(view.tooltip, /lantern.model is not set/);
});

test("the tooltip repeats the view's context meter line", () => {
  const label = "Context 85% full: earlier turns will be summarized. 5,100 of 6,000 tokens (85%) · window: the maxContextTokens setting";
  const view = statusView({ configured: "m1", last: { model: "m1", usage: { promptTokens: 5000, completionTokens: 100 } }, total: none, meter: { label } });
  assert.ok(view.tooltip.split("\n").includes(label), view.tooltip);
  assert.doesNotMatch(statusView({ configured: "m1", total: none }).tooltip, /Context/);
});

test("a model's name from a server shows as written: its `$(icon)` syntax is escaped", () => {
  const view = statusView({ configured: "", last: { model: "$(check) trusted $(zap)", usage: { promptTokens: 1, completionTokens: 2 } }, total: none });
  assert.equal(view.text, "$(lightbulb) \\$(check) trusted \\$(zap) · 1↑ 2↓");
  const set = statusView({ configured: "\\$(x)", total: none });
  assert.equal(set.text, "$(lightbulb) \\\\$(x)");
});
