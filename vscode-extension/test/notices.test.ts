import assert from "node:assert/strict";
import { test } from "node:test";
import { approvalNeedsNotification, progressPlace } from "../src/notices";

test("a visible view shows the progress itself; a hidden one leaves it to a notification", () => {
  assert.equal(progressPlace("sideBar", true), "view");
  assert.equal(progressPlace("editor", true), "window");
  assert.equal(progressPlace("sideBar", false), "notification");
  assert.equal(progressPlace("editor", false), "notification");
});

test("an approval the visible view shows raises no notification", () => {
  assert.equal(approvalNeedsNotification({ inView: true, notified: false }, true), false);
});

test("an approval is a notification while the view is hidden, or when no turn shows it", () => {
  assert.equal(approvalNeedsNotification({ inView: true, notified: false }, false), true);
  assert.equal(approvalNeedsNotification({ inView: false, notified: false }, true), true);
});

test("an approval is notified once, however often the view hides", () => {
  assert.equal(approvalNeedsNotification({ inView: true, notified: true }, false), false);
  assert.equal(approvalNeedsNotification({ inView: false, notified: true }, true), false);
});
