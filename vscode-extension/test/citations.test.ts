import assert from "node:assert/strict";
import { test } from "node:test";
import { escapeHtml, expandCitations, markCitations, usableReferences } from "../src/citations";
import type { Reference } from "../src/protocol";

function ref(answer: string, text: string, verified = true, seen = true, from = 0): Reference {
  const start = answer.indexOf(text, from);
  assert.ok(start >= 0, `${text} not in answer`);
  const [path, lines] = text.split(":");
  const [a, b] = lines.split("-").map(Number);
  return {
    uri: verified ? `file:///ws/${path}` : null,
    range: { start: { line: a - 1, character: 0 }, end: { line: (b ?? a) - 1, character: 0 } },
    path,
    startLine: a,
    endLine: b ?? a,
    verified,
    seen,
    span: [start, start + text.length],
  };
}

test("each citation span becomes one link that keeps its text", () => {
  const answer = "Retries live in src/retry.py:10-20 and are called from `src/app.py:3`.";
  const refs = [ref(answer, "src/retry.py:10-20"), ref(answer, "src/app.py:3")];
  const marked = markCitations(answer, refs);
  assert.equal(marked, "Retries live in LANTERNREF0X and are called from `LANTERNREF1X`.");
  const html = expandCitations(`<p>${marked}</p>`, answer, refs);
  assert.match(html, /<a href="#" class="lantern-ref" data-ref="0" title="Open src\/retry.py, lines 10–20">src\/retry.py:10-20<\/a>/);
  assert.match(html, /data-ref="1"[^>]*>src\/app.py:3<\/a>/);
});

test("unverified citations are marked, not linked", () => {
  const answer = "See missing.py:4.";
  const html = expandCitations(`<p>${markCitations(answer, [ref(answer, "missing.py:4", false, false)])}</p>`, answer, [
    ref(answer, "missing.py:4", false, false),
  ]);
  assert.doesNotMatch(html, /<a /);
  assert.match(html, /<span class="lantern-ref unverified" title="missing.py: not found in the workspace">missing.py:4<\/span>/);
});

test("a verified but unseen citation is linked and says it was not read", () => {
  const answer = "Maybe src/x.py:9";
  const refs = [ref(answer, "src/x.py:9", true, false)];
  const html = expandCitations(markCitations(answer, refs), answer, refs);
  assert.match(html, /class="lantern-ref unseen"/);
  assert.match(html, /not read by Lantern/);
});

test("overlapping, out-of-range and reversed spans are skipped, order follows the text", () => {
  const answer = "a.py:1 b.py:2";
  const good = ref(answer, "a.py:1");
  const second = ref(answer, "b.py:2");
  const overlap: Reference = { ...good, span: [2, 9] };
  const outside: Reference = { ...good, span: [5, 500] };
  const reversed: Reference = { ...good, span: [6, 2] };
  assert.deepEqual(usableReferences(answer, [second, overlap, good, outside, reversed]), [2, 0]);
});

test("a citation used as a Markdown link target becomes a reference link", () => {
  const answer = "[the handler](src/app.py:3)";
  const refs = [ref(answer, "src/app.py:3")];
  const marked = markCitations(answer, refs);
  const html = expandCitations(`<p><a href="${marked.slice(14, -1)}">the handler</a></p>`, answer, refs);
  assert.equal(html, '<p><a href="#" data-ref="0" class="lantern-ref">the handler</a></p>');
});

test("citation text is HTML-escaped", () => {
  const answer = "x <b>.py:1";
  const refs: Reference[] = [{ ...ref("<b>.py:1", "<b>.py:1"), span: [2, 10] }];
  const html = expandCitations(markCitations(answer, refs), answer, refs);
  assert.ok(html.includes("&lt;b&gt;.py:1"));
  assert.ok(!html.includes("<b>"));
  assert.equal(escapeHtml(`"'&`), "&quot;&#39;&amp;");
});
