import assert from "node:assert/strict";
import { test } from "node:test";
import { activityRow, formatBytes, formatSeconds, formatTimeLeft, unbrokenRanges } from "../src/activity";
import type { ToolEvent } from "../src/protocol";

const base: ToolEvent = {
  kind: "tool",
  callId: "c1",
  name: "read_file",
  arguments: { path: "src/app.py", offset: 41, limit: 40 },
  summary: "src/app.py · lines 41–80",
  status: "running",
};

test("a running read shows the file and its line window, without figures", () => {
  const row = activityRow(base);
  assert.equal(row.target, "src/app.py · lines 41–80");
  assert.equal(row.statusText, "running");
  assert.equal(row.detail, "");
});

test("a finished read shows bytes and time", () => {
  const row = activityRow({ ...base, status: "done", bytes: 3300, ms: 12.4 });
  assert.equal(row.statusText, "done");
  assert.equal(row.detail, "3.2 KB · 12 ms");
});

test("awaiting approval, denied, timed out and refused read as a user expects", () => {
  assert.equal(activityRow({ ...base, status: "awaiting_approval" }).statusText, "awaiting approval");
  assert.equal(activityRow({ ...base, status: "denied", code: "denied_by_user", bytes: 40, ms: 3 }).statusText, "denied by you");
  assert.equal(activityRow({ ...base, status: "denied", code: "approval_timeout" }).statusText, "denied (no answer in time)");
  assert.equal(activityRow({ ...base, status: "error", code: "sensitive_path" }).statusText, "refused: sensitive_path");
});

test("the target is the server's summary, shown as sent; an older server's event shows none", () => {
  const search = activityRow({ ...base, name: "search", arguments: { pattern: "retry" }, summary: "/retry/ in . (*.py)" });
  assert.equal(search.tool, "search");
  assert.equal(search.target, "/retry/ in . (*.py)");
  assert.equal(activityRow({ ...base, summary: undefined }).target, "");
});

test("byte sizes", () => {
  assert.equal(formatBytes(512), "512 B");
  assert.equal(formatBytes(2 * 1024 * 1024), "2.0 MB");
});

test("time waiting for the user is shown apart from the tool's own time", () => {
  const row = activityRow({ ...base, status: "done", bytes: 2048, ms: 14.2, waitMs: 12_400 });
  assert.equal(row.detail, "2.0 KB · 14 ms");
  assert.equal(row.waited, "waited 12 s for you");
  assert.equal(activityRow({ ...base, status: "done", bytes: 1, ms: 1 }).waited, "");
  assert.equal(activityRow({ ...base, status: "done", bytes: 1, ms: 1, waitMs: 0 }).waited, "");
  assert.equal(activityRow({ ...base, status: "denied", code: "approval_timeout", waitMs: 120_000 }).waited, "waited 2 min for you");
  // Still waiting: nothing to report yet, no figures.
  const waiting = activityRow({ ...base, status: "awaiting_approval", waitMs: 3000, bytes: 0, ms: 0 });
  assert.equal(waiting.waited, "");
  assert.equal(waiting.detail, "");
});

test("waits and time left read as a person would say them", () => {
  assert.equal(formatSeconds(400), "0.4 s");
  assert.equal(formatSeconds(59_400), "59 s");
  assert.equal(formatSeconds(125_000), "2 min 5 s");
  assert.equal(formatTimeLeft(105_000), "1:45 left");
  assert.equal(formatTimeLeft(59_001), "1:00 left");
  assert.equal(formatTimeLeft(9_200), "10 s left");
  assert.equal(formatTimeLeft(0), "");
  assert.equal(formatTimeLeft(-5), "");
});

test("a number range in a row's target stays on one line; the text reads the same", () => {
  const shown = unbrokenRanges("src/app.py · lines 1–400, 12–13");
  assert.equal(shown, "src/app.py · lines 1\u2060–\u2060400, 12\u2060–\u206013");
  assert.equal(shown.replaceAll("\u2060", ""), "src/app.py · lines 1–400, 12–13");
  assert.equal(unbrokenRanges("a–b 3 – 4"), "a–b 3 – 4");
});
