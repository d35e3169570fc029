import assert from "node:assert/strict";
import { test } from "node:test";
import type { AskResult, TurnRecord } from "../src/protocol";
import { ConversationStore, historyOf, storedTurn, titleOf, type KeyValue, type StoredConversation } from "../src/store";
import { settleRestored } from "../src/turns";

/** A Memento as VS Code keeps one: values go through JSON. */
class Memory implements KeyValue {
  readonly data = new Map<string, string>();
  get<T>(key: string): T | undefined {
    const text = this.data.get(key);
    return text === undefined ? undefined : (JSON.parse(text) as T);
  }
  update(key: string, value: unknown): PromiseLike<void> {
    if (value === undefined) this.data.delete(key);
    else this.data.set(key, JSON.stringify(value));
    return Promise.resolve();
  }
}

function result(answer: string): AskResult {
  return {
    conversationId: "c",
    answer,
    references: [],
    toolCalls: [{ id: "t1", name: "read_file", arguments: { path: "src/app.py" }, summary: "src/app.py · lines 1–30", status: "done", bytes: 10, ms: 2 }],
    usage: { promptTokens: 100, completionTokens: 20 },
    stopReason: "done",
    model: "m",
  };
}

function turn(key: string, question: string, answer?: string): TurnRecord {
  const t: TurnRecord = { key, question, askedAt: 1, state: "done", tools: [], answer: answer ?? "" };
  if (answer !== undefined) t.result = result(answer);
  return t;
}

function conversation(id: string, turns: TurnRecord[], updated = 1): StoredConversation {
  return { id, title: titleOf(turns[0]?.question ?? ""), created: 1, updated, turns };
}

test("a stored conversation comes back whole after a reload, without the calls' arguments", async () => {
  const memory = new Memory();
  const store = new ConversationStore(memory);
  const t = turn("k1", "Where is the retry logic?", "In `src/app.py:10-12`.");
  t.tools.push({ kind: "tool", callId: "t1", name: "read_file", arguments: { path: "src/app.py" }, summary: "src/app.py", status: "done" });
  await store.save(conversation("c1", [t]));
  await store.setCurrent("c1");
  const again = new ConversationStore(memory); // a new window: a new store over the same storage
  assert.equal(again.currentId, "c1");
  const loaded = again.load("c1");
  assert.ok(loaded);
  assert.equal(loaded.turns[0].result?.answer, "In `src/app.py:10-12`.");
  assert.equal(loaded.turns[0].tools[0].summary, "src/app.py");
  assert.equal(loaded.turns[0].tools[0].arguments, null);
  assert.equal(loaded.turns[0].result?.toolCalls[0].arguments, null);
  assert.equal(JSON.stringify([...memory.data.values()]).includes("arguments\":{"), false);
});

test("a pending approval is never stored", () => {
  const t = turn("k", "q");
  t.state = "running";
  t.approval = { id: "a", callId: "c", message: "Lantern wants to read x", actions: ["Allow"], expiresAt: 5 };
  assert.equal(storedTurn(t).approval, undefined);
});

test("the list is newest first, keeps at most the limit, and deletes", async () => {
  const memory = new Memory();
  const store = new ConversationStore(memory, 2);
  await store.save(conversation("a", [turn("1", "first")], 1));
  await store.save(conversation("b", [turn("2", "second")], 2));
  await store.save(conversation("c", [turn("3", "third")], 3));
  assert.deepEqual(store.list().map((c) => c.id), ["c", "b"]);
  assert.equal(store.load("a"), undefined, "the oldest conversation is dropped, contents too");
  await store.delete("c");
  assert.deepEqual(store.list().map((c) => c.id), ["b"]);
  assert.equal(store.load("c"), undefined);
});

test("an empty conversation is not listed", async () => {
  const store = new ConversationStore(new Memory());
  await store.save(conversation("e", []));
  assert.deepEqual(store.list(), []);
});

test("history carries answered turns only, oldest first", () => {
  const failed = turn("2", "broken");
  failed.failure = { message: "Stopped.", cancelled: true };
  const turns = [turn("1", "q1", "a1"), failed, turn("3", "q3", "a3")];
  assert.deepEqual(historyOf(turns), [
    { question: "q1", answer: "a1" },
    { question: "q3", answer: "a3" },
  ]);
});

test("a turn that was running when the window closed comes back stopped, a queued one as not asked", () => {
  const running = turn("1", "q");
  running.state = "running";
  running.tools.push({ kind: "tool", callId: "t", name: "read_file", arguments: null, status: "awaiting_approval" });
  const settled = settleRestored(running);
  assert.equal(settled.state, "done");
  assert.match(settled.failure?.message ?? "", /reloaded/);
  assert.notEqual(settled.tools[0].status, "awaiting_approval");
  const queued = turn("2", "later");
  queued.state = "queued";
  assert.match(settleRestored(queued).failure?.message ?? "", /Not asked/);
});

test("titles are one line, capped", () => {
  assert.equal(titleOf("  where\nis  it?  "), "where is it?");
  assert.equal(titleOf("x".repeat(200)).length, 80);
});

test("a turn's meter, compaction divider (with its summary) and warnings are stored and come back", async () => {
  const memory = new Memory();
  const store = new ConversationStore(memory);
  const t = turn("k1", "And the router?", "It is in `src/app.py:15-20`.");
  t.context = { used: 1800, window: 6000, source: "the maxContextTokens setting" };
  t.compactions = [{ how: "summarized", before: 7000, after: 600, turns: 2, outputs: 0, summary: "Asked where the handler is: src/app.py:10-12. <b>kept as text</b>" }];
  t.warnings = [{ code: "prompt_truncated", message: "cut", summary: "cut", fixes: [{ note: "raise the server's context window" }] }];
  await store.save(conversation("c1", [t]));
  const back = new ConversationStore(memory).load("c1")?.turns[0];
  assert.deepEqual(back?.context, t.context);
  assert.deepEqual(back?.compactions, t.compactions);
  assert.deepEqual(back?.warnings, t.warnings);
  assert.deepEqual(settleRestored(back as TurnRecord).compactions, t.compactions);
  // What the server gets after a reload is still the questions and answers.
  assert.deepEqual(historyOf([back as TurnRecord]), [{ question: "And the router?", answer: "It is in `src/app.py:15-20`." }]);
});

test("a turn's @-mention chips are stored and come back after a reload, a symbol with its lines", async () => {
  const memory = new Memory();
  const store = new ConversationStore(memory);
  const t = turn("k1", "What calls this?", "Only `src/main.ts:5`.");
  t.mentions = [
    { kind: "file", label: "src/app.py", uri: "file:///w/src/app.py" },
    { kind: "folder", label: "src/", uri: "file:///w/src" },
    { kind: "symbol", label: "A.run (src/shapes.ts:2)", uri: "file:///w/src/shapes.ts", range: { start: { line: 1, character: 2 }, end: { line: 1, character: 30 } } },
    { kind: "problems", label: "Problems in app.py (2)", uri: "file:///w/src/app.py" },
  ];
  await store.save(conversation("c1", [t]));
  const back = new ConversationStore(memory).load("c1")?.turns[0];
  assert.deepEqual(back?.mentions, t.mentions);
  assert.deepEqual(settleRestored(back as TurnRecord).mentions, t.mentions);
});
