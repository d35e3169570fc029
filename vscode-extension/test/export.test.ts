import assert from "node:assert/strict";
import { test } from "node:test";
import MarkdownIt from "markdown-it";
import { conversationMarkdown, relativeLink } from "../src/export";
import type { Reference } from "../src/protocol";
import type { StoredConversation } from "../src/store";

function ref(path: string, start: number, end: number, span: [number, number], verified = true): Reference {
  return {
    uri: verified ? `file:///ws/${path}` : null,
    range: { start: { line: start - 1, character: 0 }, end: { line: end, character: 0 } },
    path,
    startLine: start,
    endLine: end,
    verified,
    seen: true,
    span,
  };
}

test("an exported conversation keeps verified references as links, and marks the others", () => {
  const answer = "The handler is in src/app.py:10-12 and not in lib/gone.py:3.";
  const refs = [ref("src/app.py", 10, 12, [18, 34]), ref("lib/gone.py", 3, 3, [46, 59], false)];
  const conversation: StoredConversation = {
    id: "c",
    title: "Where is the handler?",
    created: Date.UTC(2026, 11, 1, 12, 0),
    updated: 0,
    turns: [
      {
        key: "k",
        question: "Where is the handler?",
        askedAt: 0,
        state: "done",
        tools: [],
        answer,
        result: { conversationId: "c", answer, references: refs, toolCalls: [], usage: { promptTokens: 1, completionTokens: 1 }, stopReason: "done" },
      },
    ],
  };
  const md = conversationMarkdown(conversation, (r) => (r.uri ? relativeLink("/ws", r.uri.slice("file://".length), r) : undefined));
  assert.match(md, /^# Where is the handler\?\n/);
  assert.match(md, /> Where is the handler\?/);
  assert.match(md, /The handler is in \[src\/app\.py:10-12\]\(src\/app\.py#L10-L12\) and not in lib\/gone\.py:3\./);
  assert.match(md, /- \[src\/app\.py:10-12\]\(src\/app\.py#L10-L12\)/);
  assert.match(md, /- lib\/gone\.py:3 \(unverified: not found in the workspace\)/);
  assert.match(md, /2026-12-01 12:00 UTC/);
});

test("a citation inside code stays code", () => {
  const answer = "See `src/app.py:10`.";
  const refs = [ref("src/app.py", 10, 10, [5, 18])];
  const md = conversationMarkdown(
    { id: "c", title: "t", created: 0, updated: 0, turns: [{ key: "k", question: "q", askedAt: 0, state: "done", tools: [], answer, result: { conversationId: "c", answer, references: refs, toolCalls: [], usage: { promptTokens: 0, completionTokens: 0 }, stopReason: "done" } }] },
    () => "src/app.py#L10",
  );
  assert.match(md, /See `src\/app\.py:10`\./);
});

test("links are relative to where the file is saved", () => {
  const r = ref("src/app.py", 10, 10, [0, 1]);
  assert.equal(relativeLink("/ws/notes", "/ws/src/app.py", r), "../src/app.py#L10");
  assert.equal(relativeLink("/ws", "/ws/src/my app.py", { ...r, endLine: 12 }), "src/my%20app.py#L10-L12");
});

test("an exported turn names what was mentioned with it", () => {
  const answer = "It reads the body.";
  const md = conversationMarkdown(
    {
      id: "c",
      title: "t",
      created: 0,
      updated: 0,
      turns: [
        {
          key: "k",
          question: "What does it do?",
          askedAt: 0,
          state: "done",
          tools: [],
          answer,
          mentions: [
            { kind: "file", label: "src/app.py", uri: "file:///ws/src/app.py" },
            { kind: "problems", label: "Problems in app.py (2)", uri: "file:///ws/src/app.py" },
          ],
          result: { conversationId: "c", answer, references: [], toolCalls: [], usage: { promptTokens: 0, completionTokens: 0 }, stopReason: "done" },
        },
      ],
    },
    () => undefined,
  );
  assert.match(md, /> What does it do\?\n\n_Mentioned: src\/app\.py, Problems in app\.py \(2\)_\n\nIt reads the body\./);
});

// --- what a hostile answer or error becomes in the exported file ----------------------------

function doneTurn(answer: string, refs: Reference[] = [], extra: Partial<StoredConversation["turns"][number]> = {}): StoredConversation["turns"][number] {
  return {
    key: "k",
    question: "q",
    askedAt: 0,
    state: "done",
    tools: [],
    answer,
    result: { conversationId: "c", answer, references: refs, toolCalls: [], usage: { promptTokens: 0, completionTokens: 0 }, stopReason: "done" },
    ...extra,
  };
}

function exported(turn: StoredConversation["turns"][number], title = "t"): string {
  const conversation: StoredConversation = { id: "c", title, created: 0, updated: 0, turns: [turn] };
  return conversationMarkdown(conversation, (r) => (r.uri ? relativeLink("/ws", r.uri.slice("file://".length), r) : undefined));
}

/** The exported file as a Markdown viewer that allows raw HTML shows it; `linkify`: one
 * that also links bare URLs (VS Code's preview, GitHub). */
function rendered(md: string, linkify = false): string {
  return new MarkdownIt({ html: true, linkify }).render(md);
}

/** Bare URLs a viewer links are never more than web addresses. */
function onlyWebLinks(md: string): void {
  for (const href of liveLinks(rendered(md, true))) assert.match(href, /^(https?:\/\/|src\/)/, href);
}

function liveLinks(html: string): string[] {
  return Array.from(html.matchAll(/<a\s[^>]*href="([^"]*)"/g), (m) => m[1]);
}

const HOSTILE = [
  "Here: <img src=x onerror=alert(1)> and <script>alert(2)</script>.",
  "[click](javascript:alert(3)) [data](data:text/html;base64,PHNjcmlwdD4=) [cmd](command:workbench.action.terminal.new)",
  "[plain http](http://example.com/x) ![pixel](https://tracker.example/p.png) <https://auto.example/>",
  "[ref][1] and <a href=\"javascript:alert(4)\">a</a>",
  "",
  "[1]: javascript:alert(5)",
  "",
  "<details><summary>x</summary><iframe src=\"https://evil.example\"></iframe></details>",
  "",
  "Docs: [the guide](https://docs.example.com/guide). Code: `<b>bold</b>` and src/app.py:10.",
  "",
  "```html",
  "<script>inside code</script>",
  "```",
].join("\n");

test("an exported answer shows its HTML as text and keeps only https and workspace links live", () => {
  const at = HOSTILE.indexOf("src/app.py:10");
  const md = exported(doneTurn(HOSTILE, [ref("src/app.py", 10, 10, [at, at + "src/app.py:10".length])]));
  const html = rendered(md);
  assert.doesNotMatch(html, /<(img|script|iframe|details|summary)\b/i);
  assert.doesNotMatch(html, /<[^>]*\son\w+=/i);
  onlyWebLinks(md);
  assert.deepEqual(liveLinks(html).sort(), ["https://docs.example.com/guide", "src/app.py#L10", "src/app.py#L10"].sort());
  // What the view shows as text is still there, as text.
  assert.match(html, /&lt;img src=x onerror=alert\(1\)&gt;/);
  assert.match(html, /&lt;script&gt;alert\(2\)&lt;\/script&gt;/);
  assert.match(html, /\[click\]\(javascript:alert\(3\)\)/);
  // Code stays code, untouched.
  assert.match(md, /```html\n<script>inside code<\/script>\n```/);
  assert.match(md, /`<b>bold<\/b>`/);
  assert.match(html, /<code>&lt;b&gt;bold&lt;\/b&gt;<\/code>/);
});

test("an error summary, a question and a title are exported as text", () => {
  const evil = "<img src=x onerror=alert(1)> [x](javascript:alert(2))";
  const failed = doneTurn("", [], {
    question: `Why?\n# not a heading ${evil}`,
    failure: { message: `Server said: ${evil}`, cancelled: false },
    attachment: { path: "src/<b>.py", startLine: 1, endLine: 2, label: evil },
  });
  const stopped = doneTurn("partial", [], {});
  const result = stopped.result;
  assert.ok(result);
  stopped.result = { ...result, stopReason: "max_steps", detail: { code: "max_steps", message: "m", summary: `Stopped by ${evil}`, fixes: [] } };
  for (const md of [exported(failed, `Title ${evil}`), exported(stopped)]) {
    const html = rendered(md);
    assert.doesNotMatch(html, /<img|<h1>not a heading|href="javascript/i, html);
    assert.deepEqual(liveLinks(html), []);
    onlyWebLinks(md);
  }
  const html = rendered(exported(failed, `Title ${evil}`));
  assert.match(html, /Server said: &lt;img src=x onerror=alert\(1\)&gt; \[x\]\(javascript:alert\(2\)\)/);
  assert.match(html, /# not a heading/);
});

test("tricky shapes stay inert: escapes, images, fences a list item closes, unmatched backticks", () => {
  const answer = [
    "\\\\[escaped backslash](http://evil.example/a) ![img](https://tracker.example/p.png)",
    "- item",
    "  ```",
    "  code",
    "<img src=x onerror=alert(1)>",
    "",
    "``a` <img src=y onerror=alert(2)> `b``c",
    "",
    "Look !src/app.py:10 too.",
  ].join("\n");
  const at = answer.indexOf("src/app.py:10");
  const md = exported(doneTurn(answer, [ref("src/app.py", 10, 10, [at, at + "src/app.py:10".length])]));
  const html = rendered(md);
  assert.doesNotMatch(html, /<img/i, html);
  assert.deepEqual(liveLinks(html).sort(), ["src/app.py#L10", "src/app.py#L10"]);
  assert.match(html, /!<a href="src\/app\.py#L10">/);
  onlyWebLinks(md);
});
