import assert from "node:assert/strict";
import { test } from "node:test";
import { nextStop, tabOrder } from "../media/tab_order";

const order = tabOrder({
  box: ["question", "Ask", "Stop"],
  boxRest: ["context ×"],
  header: ["model"],
  conversation: ["tool row", "src/a.ts:5", "Copy", "Retry"],
  approvals: ["Allow", "Deny"],
});

test("Tab starts at the question box, then Ask and Stop; the conversation's controls follow and a pending approval's buttons come last", () => {
  assert.deepEqual(order, ["question", "Ask", "Stop", "context ×", "model", "tool row", "src/a.ts:5", "Copy", "Retry", "Allow", "Deny"]);
});

test("Tab and Shift+Tab step through the order and go round at its ends", () => {
  assert.equal(nextStop(order, "question", false), "Ask");
  assert.equal(nextStop(order, "model", false), "tool row");
  assert.equal(nextStop(order, "Deny", false), "question");
  assert.equal(nextStop(order, "question", true), "Deny");
  assert.equal(nextStop(order, "tool row", true), "model");
});

test("with nothing focused, Tab goes to the question box and Shift+Tab to the last control", () => {
  assert.equal(nextStop(order, null, false), "question");
  assert.equal(nextStop(order, null, true), "Deny");
});

test("from a control outside the order, or with no controls, the browser's own order is left alone", () => {
  assert.equal(nextStop(order, "the approval card itself", false), undefined);
  assert.equal(nextStop([], null, false), undefined);
});
