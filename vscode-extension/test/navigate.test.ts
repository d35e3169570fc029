import assert from "node:assert/strict";
import { test } from "node:test";
import {
  answerSummary,
  hoverText,
  lanternCapabilities,
  MAX_HOVER_CHARS,
  NAVIGATION_OPS,
  parseNavigate,
  sourceFor,
  toLocations,
  toResult,
  toSymbols,
} from "../src/navigate";

/** A vscode.Uri as far as the conversion sees it. */
const uri = (text: string) => ({ toString: () => text });
const r = (l1: number, c1: number, l2: number, c2: number) => ({ start: { line: l1, character: c1 }, end: { line: l2, character: c2 } });
const A = "file:///w/src/a.ts";

test("the navigation capability lists every op when the setting is on, and is absent when off", () => {
  assert.deepEqual(lanternCapabilities(true), {
    approvalRequests: true,
    showsErrors: true,
    navigation: ["definition", "references", "implementation", "typeDefinition", "hover", "workspaceSymbols"],
  });
  const off = lanternCapabilities(false);
  assert.equal("navigation" in off, false);
  assert.deepEqual(off, { approvalRequests: true, showsErrors: true });
});

test("a request is answered only for a known op with a file: URI and a whole position, or a query", () => {
  assert.deepEqual(parseNavigate({ op: "references", uri: A, position: { line: 3, character: 7 } }), {
    op: "references",
    uri: A,
    position: { line: 3, character: 7 },
  });
  assert.deepEqual(parseNavigate({ op: "workspaceSymbols", query: "run" }), { op: "workspaceSymbols", query: "run" });
  assert.equal(parseNavigate({ op: "rename", uri: A, position: { line: 0, character: 0 } }), undefined);
  assert.equal(parseNavigate({ op: "definition", uri: "untitled:Untitled-1", position: { line: 0, character: 0 } }), undefined);
  assert.equal(parseNavigate({ op: "definition", uri: A, position: { line: -1, character: 0 } }), undefined);
  assert.equal(parseNavigate({ op: "definition", uri: A, position: { line: 1.5, character: 0 } }), undefined);
  assert.equal(parseNavigate({ op: "definition", uri: A }), undefined);
  assert.equal(parseNavigate({ op: "workspaceSymbols" }), undefined);
  assert.equal(parseNavigate(null), undefined);
  assert.equal((parseNavigate({ op: "workspaceSymbols", query: "x".repeat(5000) }) as { query: string }).query.length, 1000);
});

test("locations and location links become the wire's locations, 0-based, a link at its name", () => {
  const found = [
    { uri: uri(A), range: r(4, 2, 4, 5) },
    { targetUri: uri("file:///w/src/b.ts"), targetRange: r(10, 0, 20, 1), targetSelectionRange: r(10, 6, 10, 9) },
    { targetUri: uri("file:///w/src/c.ts"), targetRange: r(1, 0, 2, 0) },
  ];
  assert.deepEqual(toLocations(found), [
    { uri: A, range: r(4, 2, 4, 5) },
    { uri: "file:///w/src/b.ts", range: r(10, 6, 10, 9) },
    { uri: "file:///w/src/c.ts", range: r(1, 0, 2, 0) },
  ]);
  // A single Location (some providers answer one) and nothing at all.
  assert.deepEqual(toLocations({ uri: uri(A), range: r(0, 0, 0, 1) }), [{ uri: A, range: r(0, 0, 0, 1) }]);
  assert.deepEqual(toLocations(undefined), []);
});

test("malformed locations are dropped and a runaway provider is cut at the cap", () => {
  const bad = [null, 7, { uri: uri(A) }, { uri: uri(A), range: r(-1, 0, 0, 0) }, { range: r(0, 0, 0, 0) }];
  assert.deepEqual(toLocations(bad), []);
  const many = Array.from({ length: 12_000 }, (_, i) => ({ uri: uri(A), range: r(i, 0, i, 1) }));
  const cut = toLocations(many);
  assert.equal(cut.length, 5_000);
  assert.deepEqual(cut[4_999], { uri: A, range: r(4_999, 0, 4_999, 1) });
});

test("hover contents become one markdown text, code blocks fenced, capped", () => {
  const hovers = [{ contents: [{ language: "typescript", value: "(method) A.run(): void" }, { value: "Runs A." }, "", "plain"] }, { contents: [] }];
  assert.equal(hoverText(hovers), "```typescript\n(method) A.run(): void\n```\n\nRuns A.\n\nplain");
  assert.equal(hoverText([]), undefined);
  assert.equal(hoverText([{ contents: ["x".repeat(MAX_HOVER_CHARS + 10)] }])?.length, MAX_HOVER_CHARS);
});

test("workspace symbols carry their kind's name, container and location", () => {
  const found = [
    { name: "run", kind: 5, containerName: "A", location: { uri: uri(A), range: r(2, 2, 4, 3) } },
    { name: "B", kind: 4, containerName: "", location: { uri: uri("file:///w/src/b.ts"), range: r(0, 0, 9, 1) } },
    { name: "lost", kind: 5 },
    { name: "odd", kind: 99, location: { uri: uri(A), range: r(0, 0, 0, 1) } },
  ];
  assert.deepEqual(toSymbols(found), [
    { name: "run", kind: "method", containerName: "A", location: { uri: A, range: r(2, 2, 4, 3) } },
    { name: "B", kind: "class", location: { uri: "file:///w/src/b.ts", range: r(0, 0, 9, 1) } },
    { name: "odd", location: { uri: A, range: r(0, 0, 0, 1) } },
  ]);
});

test("the answer names the language that answered, and each op fills its own field", () => {
  assert.equal(sourceFor("typescript"), "TypeScript");
  assert.equal(sourceFor("python"), "Python");
  assert.equal(sourceFor("zig"), "language features for zig");
  const refs = parseNavigate({ op: "references", uri: A, position: { line: 2, character: 2 } })!;
  assert.deepEqual(toResult(refs, [{ uri: uri(A), range: r(7, 2, 7, 5) }], "TypeScript"), {
    source: "TypeScript",
    locations: [{ uri: A, range: r(7, 2, 7, 5) }],
  });
  // No location: no answer, so the server falls back rather than report no uses.
  assert.equal(toResult(refs, [], "TypeScript"), null);
  assert.equal(toResult(refs, undefined, "TypeScript"), null);
  const hover = parseNavigate({ op: "hover", uri: A, position: { line: 2, character: 2 } })!;
  assert.deepEqual(toResult(hover, [{ contents: ["doc"] }], "TypeScript"), { source: "TypeScript", hover: "doc" });
  assert.deepEqual(toResult(hover, [], "TypeScript"), { source: "TypeScript" });
  const symbols = parseNavigate({ op: "workspaceSymbols", query: "run" })!;
  assert.deepEqual(toResult(symbols, [], "x"), { source: "x", symbols: [] });
  assert.equal(NAVIGATION_OPS.length, 6);
});

test("the log line about an answer says how much and from whom, never where", () => {
  const location = { uri: A, range: r(4, 2, 4, 5) };
  assert.equal(answerSummary({ source: "TypeScript", locations: [location, location] }), "2 location(s) from TypeScript");
  assert.equal(answerSummary({ source: "TypeScript", symbols: [] }), "0 symbol(s) from TypeScript");
  assert.equal(answerSummary({ source: "Python", hover: "def run() -> int" }), "16 characters of hover text from Python");
  assert.equal(answerSummary({ source: "Python" }), "no hover text from Python");
  assert.equal(answerSummary(null), "nothing found: no answer");
  assert.doesNotMatch(answerSummary({ locations: [location] }), /file:|\/w\//);
});
