import assert from "node:assert/strict";
import { test } from "node:test";
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
