// Conversations kept in the workspace's storage, so a reload or a server restart
// loses nothing. Only what the view showed is stored: questions, the tool rows, the
// (redacted) answers, references and errors — never a file's contents or a tool's
// arguments. No VS Code API beyond a Memento-shaped store, so it is unit-tested.

import type { AskResult, HistoryTurn, ToolEvent, TurnRecord } from "./protocol";

/** The part of `vscode.Memento` the store uses. */
export interface KeyValue {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): PromiseLike<void>;
}

export interface ConversationSummary {
  id: string;
  title: string;
  created: number;
  updated: number;
  turns: number;
}

export interface StoredConversation {
  id: string;
  title: string;
  created: number;
  updated: number;
  turns: TurnRecord[];
}

const INDEX = "lantern.conversations";
const CURRENT = "lantern.currentConversation";
const ITEM = (id: string): string => `lantern.conversation.${id}`;

/** How many conversations a workspace keeps; the oldest go first. */
export const KEPT = 100;
/** Earlier exchanges sent to a server that does not know the conversation. */
export const HISTORY_TURNS = 50;

export function titleOf(question: string): string {
  const line = question.replace(/\s+/g, " ").trim();
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

function storedTool(tool: ToolEvent): ToolEvent {
  // A call's arguments are not shown (its summary is): not stored either.
  const { arguments: _args, ...rest } = tool;
  return { ...rest, arguments: null };
}

function storedResult(result: AskResult): AskResult {
  return { ...result, toolCalls: result.toolCalls.map((c) => ({ ...c, arguments: null })) };
}

/** A turn as it is written to storage: no pending prompt, no call arguments. */
export function storedTurn(turn: TurnRecord): TurnRecord {
  const copy: TurnRecord = { ...turn, approval: undefined, tools: turn.tools.map(storedTool) };
  if (turn.result) copy.result = storedResult(turn.result);
  return copy;
}

/** The exchanges a server needs to continue the conversation: answered turns, oldest first. */
export function historyOf(turns: readonly TurnRecord[]): HistoryTurn[] {
  const answered = turns.filter((t) => t.state === "done" && t.result && t.result.answer.trim() !== "");
  return answered.slice(-HISTORY_TURNS).map((t) => ({ question: t.question, answer: t.result?.answer ?? "" }));
}

export class ConversationStore {
  constructor(
    private readonly memento: KeyValue,
    private readonly kept = KEPT,
  ) {}

  /** Newest first. */
  list(): ConversationSummary[] {
    const index = this.memento.get<ConversationSummary[]>(INDEX);
    return Array.isArray(index) ? [...index].sort((a, b) => b.updated - a.updated) : [];
  }

  load(id: string): StoredConversation | undefined {
    const item = this.memento.get<StoredConversation>(ITEM(id));
    return item && Array.isArray(item.turns) ? item : undefined;
  }

  get currentId(): string | undefined {
    return this.memento.get<string>(CURRENT);
  }

  async setCurrent(id: string): Promise<void> {
    await this.memento.update(CURRENT, id);
  }

  /** Store a conversation that has at least one turn; an empty one is not listed. */
  async save(conversation: StoredConversation): Promise<void> {
    if (conversation.turns.length === 0) return;
    const stored: StoredConversation = { ...conversation, turns: conversation.turns.map(storedTurn) };
    await this.memento.update(ITEM(stored.id), stored);
    const summary: ConversationSummary = {
      id: stored.id,
      title: stored.title,
      created: stored.created,
      updated: stored.updated,
      turns: stored.turns.length,
    };
    const others = this.list().filter((c) => c.id !== stored.id);
    const index = [summary, ...others];
    for (const dropped of index.splice(this.kept)) await this.memento.update(ITEM(dropped.id), undefined);
    await this.memento.update(INDEX, index);
  }

  async delete(id: string): Promise<void> {
    await this.memento.update(ITEM(id), undefined);
    await this.memento.update(
      INDEX,
      this.list().filter((c) => c.id !== id),
    );
  }
}
