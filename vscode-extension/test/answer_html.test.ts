import assert from "node:assert/strict";
import { test } from "node:test";
import { answerHtml, highlightBlock, languageNames } from "../src/answer_html";
import type { Reference } from "../src/protocol";

test("a fenced block is highlighted for its language, inside pre > code.hljs", () => {
  const html = answerHtml("Here:\n\n```python\ndef retry(n):\n    return n + 1\n```\n", []);
  assert.match(html, /<pre><code class="hljs language-python">/);
  assert.match(html, /<span class="hljs-keyword">def<\/span>/);
  assert.match(html, /<span class="hljs-title function_">retry<\/span>/);
});

test("unknown languages and plain text stay escaped, still in code.hljs; indented blocks too", () => {
  const html = answerHtml("```klingon\n<b>qapla'</b>\n```\n\n    indented <i>code</i>\n", []);
  assert.match(html, /<pre><code class="hljs language-klingon">&lt;b&gt;qapla&#39;&lt;\/b&gt;\n<\/code><\/pre>/);
  assert.match(html, /<pre><code class="hljs">indented &lt;i&gt;code&lt;\/i&gt;\n<\/code><\/pre>/);
  assert.doesNotMatch(html, /<b>|<i>/);
});

test("raw HTML in the answer is text, not markup", () => {
  const html = answerHtml('<script>alert(1)</script> <img src=x onerror="y">', []);
  assert.doesNotMatch(html, /<script|<img/);
  assert.match(html, /&lt;script&gt;/);
});

test("a language attribute cannot break out of the class", () => {
  assert.equal(highlightBlock("x", 'a" onclick="y'), '<pre><code class="hljs">x</code></pre>\n');
});

test("citations stay links, in text and in code", () => {
  const answer = "See src/app.py:3 and\n\n```\ncall(src/app.py:3)\n```\n";
  const first = answer.indexOf("src/app.py:3");
  const second = answer.indexOf("src/app.py:3", first + 1);
  const ref = (start: number): Reference => ({
    uri: "file:///ws/src/app.py",
    range: { start: { line: 2, character: 0 }, end: { line: 2, character: 0 } },
    path: "src/app.py",
    startLine: 3,
    endLine: 3,
    verified: true,
    seen: true,
    span: [start, start + "src/app.py:3".length],
  });
  const html = answerHtml(answer, [ref(first), ref(second)]);
  assert.match(html, /<a href="#" class="lantern-ref" data-ref="0"[^>]*>src\/app.py:3<\/a>/);
  assert.match(html, /<code class="hljs[^"]*">[\s\S]*<a href="#" class="lantern-ref" data-ref="1"[^>]*>src\/app.py:3<\/a>/);
});

test("only a few common languages are bundled", () => {
  const names = languageNames();
  for (const name of ["python", "typescript", "javascript", "json", "bash", "go", "rust"]) assert.ok(names.includes(name), name);
  assert.ok(names.length <= 16, names.join(", "));
});
