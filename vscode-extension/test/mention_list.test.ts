import assert from "node:assert/strict";
import { test } from "node:test";
import { MentionList } from "../src/mention_list";
import type { MentionOption } from "../src/protocol";

const file = (label: string, refused?: string): MentionOption => ({ kind: "file", label, uri: `file:///w/${label}`, ...(refused ? { refused } : {}) });

test("typing after an @ asks once per new query; leaving the @ closes the list", () => {
  const list = new MentionList();
  assert.equal(list.typed("hello", 5), undefined);
  assert.equal(list.open, false);
  assert.equal(list.typed("hello @", 7), "");
  assert.equal(list.open, true);
  assert.equal(list.typed("hello @a", 8), "a");
  assert.equal(list.typed("hello @a", 8), undefined, "the same query (a click, a caret key) is not asked again");
  assert.equal(list.open, true);
  assert.equal(list.typed("hello @a ", 9), undefined);
  assert.equal(list.open, false);
});

test("an answer to an earlier query never replaces the newest one's, nor opens a closed list", () => {
  const list = new MentionList();
  list.typed("@a", 2);
  const first = list.seq;
  list.typed("@ap", 3);
  const second = list.seq;
  assert.ok(second > first);
  assert.equal(list.answered(second, [file("app.py")]), true);
  assert.equal(list.answered(first, [file("a.txt"), file("about.md")]), false, "the older answer came late");
  assert.deepEqual(list.items.map((i) => i.label), ["app.py"]);
  // Typed further but not yet asked (the debounce): the answer in flight is already stale.
  list.typed("@app", 4);
  assert.equal(list.answered(second, [file("ap.md")]), false);
  list.close();
  assert.equal(list.answered(list.seq, [file("app.py")]), false);
});

test("the first row that can be taken is active; arrows move round the ends, over refused rows too", () => {
  const list = new MentionList();
  list.typed("@", 1);
  list.answered(list.seq, [file(".env", "secrets"), file("app.py"), file("b.py")]);
  assert.equal(list.active, 1);
  assert.equal(list.takeable()?.label, "app.py");
  list.move(1);
  assert.equal(list.takeable()?.label, "b.py");
  list.move(1);
  assert.equal(list.active, 0, "round the end, to the refused row (its reason is read)");
  assert.equal(list.takeable(), undefined, "a refused row cannot be taken");
  list.move(-1);
  assert.equal(list.active, 2);
});

test("a later answer for the same query keeps the active row where it still is", () => {
  const list = new MentionList();
  list.typed("@", 1);
  list.answered(list.seq, [{ kind: "problems", label: "Problems in app.py (1)", uri: "file:///w/app.py" }], "Starting Lantern…", true);
  assert.equal(list.pending, true);
  assert.equal(list.note, "Starting Lantern…");
  list.answered(list.seq, [file("a.py"), { kind: "problems", label: "Problems in app.py (1)", uri: "file:///w/app.py" }]);
  assert.equal(list.pending, false);
  assert.equal(list.note, undefined);
  assert.equal(list.takeable()?.kind, "problems");
});

test("a list of refused rows only has an active row, and nothing to take", () => {
  const list = new MentionList();
  list.typed("@.env", 5);
  list.answered(list.seq, [file(".env", "secrets")]);
  assert.equal(list.active, 0);
  assert.equal(list.takeable(), undefined);
  list.answered(list.seq, []);
  assert.equal(list.active, -1);
});

test("Escape closes the list for that @ until the text leaves it", () => {
  const list = new MentionList();
  list.typed("see @ap", 7);
  list.dismiss();
  assert.equal(list.open, false);
  assert.equal(list.typed("see @app", 8), undefined, "typing on after Escape does not reopen it");
  assert.equal(list.open, false);
  assert.equal(list.typed("see @app ", 9), undefined);
  assert.equal(list.typed("see @app @", 10), "", "a new @ opens it again");
  assert.equal(list.open, true);
});
