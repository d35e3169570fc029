import assert from "node:assert/strict";
import { test } from "node:test";
import { asAttachment, editorContext, MAX_DIAGNOSTICS, MAX_MESSAGE_CHARS, type EditorProblem, type EditorState } from "../src/editor_context";
import type { Range } from "../src/protocol";

const at = (l1: number, c1: number, l2: number, c2: number): Range => ({ start: { line: l1, character: c1 }, end: { line: l2, character: c2 } });
const cursor = at(4, 2, 4, 2);
const editor = (extra: Partial<EditorState> = {}): EditorState => ({
  uri: "file:///w/src/app.py",
  scheme: "file",
  relativePath: "src/app.py",
  selection: cursor,
  visible: at(0, 0, 39, 7),
  problems: [],
  ...extra,
});
const problem = (line: number, severity: number, message = `problem on ${line}`): EditorProblem => ({ range: at(line, 0, line, 5), message, severity, source: "Pylance" });

test("a selection is sent with the visible lines, and the chip names its lines", () => {
  const attached = editorContext(editor({ selection: at(9, 0, 12, 0) }), true);
  assert.ok(attached);
  assert.deepEqual(attached.context, { uri: "file:///w/src/app.py", range: at(9, 0, 12, 0), visibleRange: at(0, 0, 39, 7) });
  // A selection that ends at the start of line 13 does not include it.
  assert.equal(attached.chip.label, "app.py:10-12");
  assert.match(attached.chip.title, /src\/app\.py, lines 10–12 selected/);
  assert.deepEqual([attached.startLine, attached.endLine], [10, 12]);
  const kept = asAttachment(attached);
  assert.equal(kept.label, "app.py:10-12");
  assert.deepEqual(kept.range, at(9, 0, 12, 0));
  assert.deepEqual(kept.context, attached.context);
});

test("without a selection: no range, the visible lines and the problems on the chip", () => {
  const attached = editorContext(editor({ problems: [problem(3, 1), problem(1, 0)] }), true);
  assert.ok(attached);
  assert.equal(attached.context.range, undefined);
  assert.equal(attached.chip.label, "app.py (visible 1–40) · 2 problems");
  // VS Code's severities (0 error … 3 hint) become LSP's (1 … 4); the worst comes first.
  assert.deepEqual(
    attached.context.diagnostics?.map((d) => [d.severity, d.range.start.line, d.source]),
    [
      [1, 1, "Pylance"],
      [2, 3, "Pylance"],
    ],
  );
  assert.equal(asAttachment(attached).range, undefined);
});

test("problems are capped and long messages cut, as the server would", () => {
  const many = Array.from({ length: MAX_DIAGNOSTICS + 20 }, (_, i) => problem(i, i < 5 ? 0 : 2, "x".repeat(MAX_MESSAGE_CHARS * 3)));
  const attached = editorContext(editor({ problems: many }), true);
  const sent = attached?.context.diagnostics ?? [];
  assert.equal(sent.length, MAX_DIAGNOSTICS);
  assert.deepEqual(sent.slice(0, 5).map((d) => d.severity), [1, 1, 1, 1, 1]); // the errors kept
  assert.ok(sent.every((d) => d.message.length <= MAX_MESSAGE_CHARS + 1));
  assert.match(attached?.chip.label ?? "", /· 70 problems$/);
});

test("nothing is attached when turned off, outside the workspace, or not a file", () => {
  assert.equal(editorContext(editor(), false), undefined);
  assert.equal(editorContext(undefined, true), undefined);
  assert.equal(editorContext(editor({ relativePath: undefined, uri: "file:///etc/passwd" }), true), undefined);
  assert.equal(editorContext(editor({ scheme: "untitled", uri: "untitled:Untitled-1" }), true), undefined);
});
