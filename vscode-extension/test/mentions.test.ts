import assert from "node:assert/strict";
import { test } from "node:test";
import { MAX_DIAGNOSTICS, type EditorProblem, type EditorState } from "../src/editor_context";
import {
  askContext,
  checkedChips,
  chipOf,
  keptAttachment,
  MAX_CHIPS,
  MAX_QUERY_CHARS,
  MAX_SYMBOLS,
  mentionAt,
  mentionParams,
  mentionSymbols,
  optionsOf,
  problemsOption,
  withoutMention,
} from "../src/mentions";
import type { MentionChip, Range, TurnRecord } from "../src/protocol";

const at = (l1: number, c1: number, l2: number, c2: number): Range => ({ start: { line: l1, character: c1 }, end: { line: l2, character: c2 } });
const APP = "file:///w/src/app.py";
const problem = (line: number, severity: number): EditorProblem => ({ range: at(line, 0, line, 4), message: `problem on ${line}`, severity });
const editor = (extra: Partial<EditorState> = {}): EditorState => ({
  uri: APP,
  scheme: "file",
  relativePath: "src/app.py",
  selection: at(0, 0, 0, 0),
  visible: at(0, 0, 29, 0),
  problems: [problem(4, 0), problem(9, 1)],
  ...extra,
});

test("the query is what follows an @ at the start or after a space, up to the caret", () => {
  assert.deepEqual(mentionAt("@app", 4), { start: 0, query: "app" });
  assert.deepEqual(mentionAt("what does @src/ap do", 17), { start: 10, query: "src/ap" });
  assert.deepEqual(mentionAt("look at @", 9), { start: 8, query: "" });
  assert.deepEqual(mentionAt("line one\n@.env", 14), { start: 9, query: ".env" });
  // Not a mention: an address, a space after the word, nothing typed after the caret counts.
  assert.equal(mentionAt("mail me@example.com", 19), undefined);
  assert.equal(mentionAt("@app and", 8), undefined);
  assert.deepEqual(mentionAt("@application", 4), { start: 0, query: "app" });
  assert.equal(mentionAt(`@${"x".repeat(MAX_QUERY_CHARS + 1)}`, MAX_QUERY_CHARS + 2), undefined);
});

test("a taken mention leaves the text, the caret where its @ was", () => {
  assert.deepEqual(withoutMention("explain @app please", 8, 12), { text: "explain  please", caret: 8 });
  assert.deepEqual(withoutMention("@app", 0, 4), { text: "", caret: 0 });
});

test("VS Code's workspace symbols go to the server as the contract's symbols, at most 200", () => {
  const uri = { toString: () => "file:///w/src/app.ts" };
  const found = [
    { name: "close", kind: 5, containerName: "Session", location: { uri, range: at(11, 2, 14, 3) } },
    { name: "nowhere", kind: 11 }, // no location: left out
    { name: "run", kind: 11, containerName: "", location: { uri, range: at(20, 0, 22, 1) } },
  ];
  assert.deepEqual(mentionSymbols(found), [
    { name: "close", kind: "method", containerName: "Session", uri: "file:///w/src/app.ts", range: at(11, 2, 14, 3) },
    { name: "run", kind: "function", uri: "file:///w/src/app.ts", range: at(20, 0, 22, 1) },
  ]);
  const many = Array.from({ length: 500 }, (_, i) => ({ name: `s${i}`, kind: 11, location: { uri, range: at(i, 0, i, 1) } }));
  assert.equal(mentionSymbols(many).length, MAX_SYMBOLS);
  assert.deepEqual(mentionSymbols(undefined), []);
});

test("@problems names the active file and its count; it is refused, with why, when there is nothing to send", () => {
  assert.deepEqual(problemsOption(editor(), ""), { kind: "problems", label: "Problems in app.py (2)", uri: APP });
  assert.deepEqual(problemsOption(editor(), "PROB"), { kind: "problems", label: "Problems in app.py (2)", uri: APP });
  assert.equal(problemsOption(editor(), "app"), undefined);
  assert.equal(problemsOption(editor(), "problemsx"), undefined);
  assert.match(problemsOption(editor({ problems: [] }), "pro")?.refused ?? "", /app\.py has no problems/);
  assert.match(problemsOption(undefined, "")?.refused ?? "", /No file is open/);
  assert.match(problemsOption(editor({ relativePath: undefined }), "")?.refused ?? "", /not in the workspace/);
  assert.match(problemsOption(editor({ scheme: "untitled" }), "")?.refused ?? "", /not in the workspace/);
});

test("the server's suggestions become rows; a malformed one is left out, a refused one keeps its reason", () => {
  const items = [
    { kind: "file", label: "src/app.py", uri: APP },
    { kind: "folder", label: "src/", uri: "file:///w/src" },
    { kind: "file", label: ".env", uri: "file:///w/.env", refused: ".env may hold secrets: Lantern never reads it." },
    { kind: "symbol", label: "Session.close", detail: "src/app.ts:12", uri: "file:///w/src/app.ts", range: at(11, 2, 14, 3) },
    { kind: "symbol", label: "bad range", uri: "file:///w/x.ts", range: { start: { line: -1, character: 0 } } },
    { kind: "problems", label: "not the server's", uri: APP },
    { kind: "file", label: "", uri: APP },
    { kind: "file", label: "no uri" },
    null,
    "src/app.py",
  ];
  assert.deepEqual(optionsOf(items), [
    { kind: "file", label: "src/app.py", uri: APP },
    { kind: "folder", label: "src/", uri: "file:///w/src" },
    { kind: "file", label: ".env", uri: "file:///w/.env", refused: ".env may hold secrets: Lantern never reads it." },
    { kind: "symbol", label: "Session.close", detail: "src/app.ts:12", uri: "file:///w/src/app.ts", range: at(11, 2, 14, 3) },
    { kind: "symbol", label: "bad range", uri: "file:///w/x.ts" },
  ]);
  assert.deepEqual(optionsOf({ items }), []);
});

test("a taken row becomes a chip (a symbol with where it is); a refused row never does", () => {
  assert.deepEqual(chipOf({ kind: "file", label: "src/app.py", uri: APP }), { kind: "file", label: "src/app.py", uri: APP });
  assert.deepEqual(chipOf({ kind: "symbol", label: "Session.close", detail: "src/app.ts:12", uri: "file:///w/src/app.ts", range: at(11, 2, 14, 3) }), {
    kind: "symbol",
    label: "Session.close (src/app.ts:12)",
    uri: "file:///w/src/app.ts",
    range: at(11, 2, 14, 3),
  });
  assert.equal(chipOf({ kind: "file", label: ".env", uri: "file:///w/.env", refused: "secrets" }), undefined);
  assert.equal(chipOf({ kind: "problems", label: "Problems in app.py", uri: APP, refused: "app.py has no problems." }), undefined);
});

test("the chips of an ask are checked: well formed, file: URIs, a symbol with its range, no repeats, at most 20", () => {
  const file: MentionChip = { kind: "file", label: "src/app.py", uri: APP };
  const symbol: MentionChip = { kind: "symbol", label: "close", uri: "file:///w/src/app.ts", range: at(1, 0, 2, 0) };
  const checked = checkedChips([
    file,
    { ...file, label: "again" },
    symbol,
    { kind: "symbol", label: "no range", uri: "file:///w/src/app.ts" },
    { kind: "file", label: "remote", uri: "vscode-remote://host/w/a.py" },
    { kind: "folder", label: "x", uri: "file:///w/x", range: "all" },
    { kind: "secret", label: "x", uri: APP },
    { kind: "problems", label: "Problems in app.py (2)", uri: APP },
  ]);
  assert.deepEqual(checked, [file, symbol, { kind: "folder", label: "x", uri: "file:///w/x" }, { kind: "problems", label: "Problems in app.py (2)", uri: APP }]);
  const many = Array.from({ length: 50 }, (_, i) => ({ kind: "file", label: `f${i}`, uri: `file:///w/f${i}` }));
  assert.equal(checkedChips(many).length, MAX_CHIPS);
  assert.deepEqual(checkedChips("not a list"), []);
});

test("file, folder and symbol chips are sent as mentions; @problems is not one", () => {
  const chips: MentionChip[] = [
    { kind: "file", label: "src/app.py", uri: APP },
    { kind: "folder", label: "src/", uri: "file:///w/src" },
    { kind: "symbol", label: "close", uri: "file:///w/src/app.ts", range: at(11, 2, 14, 3) },
    { kind: "problems", label: "Problems in app.py (2)", uri: APP },
  ];
  assert.deepEqual(mentionParams(chips), [{ uri: APP }, { uri: "file:///w/src" }, { uri: "file:///w/src/app.ts", range: at(11, 2, 14, 3) }]);
  assert.equal(mentionParams([chips[3]]), undefined);
  assert.equal(mentionParams(undefined), undefined);
});

test("@problems sends the file's problems as they are now in context, even with the editor's context left out", () => {
  const problems = new Map([[APP, [problem(9, 1), problem(4, 0)]]]);
  const problemsOf = (uri: string): EditorProblem[] => problems.get(uri) ?? [];
  const chip: MentionChip[] = [{ kind: "problems", label: "Problems in app.py (2)", uri: APP }];
  // No editor context (its × was used, or the setting is off): the problems alone.
  const alone = askContext(undefined, chip, problemsOf);
  assert.equal(alone?.uri, APP);
  assert.deepEqual(
    alone?.diagnostics?.map((d) => [d.range.start.line, d.severity]),
    [
      [4, 1],
      [9, 2],
    ],
  );
  // With the same file's context: it is kept, with the problems as they are now.
  const attachment: TurnRecord["attachment"] = { path: "src/app.py", startLine: 10, endLine: 12, uri: APP, context: { uri: APP, range: at(9, 0, 12, 0), diagnostics: [] } };
  const both = askContext(attachment, chip, problemsOf);
  assert.deepEqual(both?.range, at(9, 0, 12, 0));
  assert.equal(both?.diagnostics?.length, 2);
  assert.deepEqual(attachment.context?.diagnostics, [], "the stored attachment is not changed");
  // Capped as the editor context's are.
  const lots = Array.from({ length: 80 }, (_, i) => problem(i, 1));
  assert.equal(askContext(undefined, chip, () => lots)?.diagnostics?.length, MAX_DIAGNOSTICS);
  // Problems gone by the time of a Retry: the file, without a stale list.
  assert.deepEqual(askContext(attachment, chip, () => []), { uri: APP, range: at(9, 0, 12, 0) });
});

test("without @problems the editor's context goes as it was; @problems of another file replaces it", () => {
  const other: TurnRecord["attachment"] = { path: "src/b.py", startLine: 1, endLine: 3, uri: "file:///w/src/b.py", range: at(0, 0, 2, 0) };
  assert.deepEqual(askContext(other, [{ kind: "file", label: "src/app.py", uri: APP }], () => []), { uri: "file:///w/src/b.py", range: at(0, 0, 2, 0) });
  const chip: MentionChip[] = [{ kind: "problems", label: "Problems in app.py (1)", uri: APP }];
  assert.deepEqual(askContext(other, chip, () => [problem(2, 0)])?.uri, APP);
  assert.equal(keptAttachment(other, chip), undefined);
  assert.equal(keptAttachment(other, undefined), other);
  const same: TurnRecord["attachment"] = { ...other, uri: APP };
  assert.equal(keptAttachment(same, chip), same);
});
