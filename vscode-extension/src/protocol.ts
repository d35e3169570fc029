// The LSP surface of `lantern serve`, as the extension sees it.

export interface Position {
  line: number;
  character: number;
}

export interface Range {
  start: Position;
  end: Position;
}

export interface Reference {
  uri: string | null;
  range: Range;
  path: string;
  startLine: number;
  endLine: number;
  verified: boolean;
  seen: boolean;
  span: [number, number];
}

export type ToolStatus = "awaiting_approval" | "running" | "done" | "error" | "denied";

export interface ToolCall {
  id: string;
  name: string;
  arguments: unknown;
  summary?: string; // as in the tool event
  status: ToolStatus;
  code?: string;
  bytes: number;
  ms: number;
}

export type StopReason =
  | "done"
  | "max_steps"
  | "budget"
  | "timeout"
  | "cancelled"
  | "error"
  | "filtered"
  | "truncated";

/** One step that fixes a failure: a setting to change (to `value`, or one of `choices`), or a change on the model server (`note` only). */
export interface Fix {
  setting?: string;
  value?: string | number;
  choices?: string[];
  note?: string;
}

/** A failure or outcome as data (docs/protocol.md#lanternask). */
export interface Detail {
  code: string;
  message: string;
  summary: string;
  status?: number;
  providerMessage?: string;
  fixes: Fix[];
}

export interface AskResult {
  conversationId: string;
  answer: string;
  references: Reference[];
  toolCalls: ToolCall[];
  usage: { promptTokens: number; completionTokens: number };
  stopReason: StopReason;
  error?: string;
  errorCode?: string;
  detail?: Detail;
  warnings?: Detail[];
}

export interface AskParams {
  question: string;
  conversationId?: string;
  context?: { uri: string; range?: Range };
  workDoneToken?: string;
}

export interface ToolEvent {
  kind: "tool";
  callId: string;
  name: string;
  arguments: unknown;
  summary?: string; // the call in one escaped line, e.g. `src/app.py · lines 1–400` (absent from older servers)
  status: ToolStatus;
  code?: string;
  bytes?: number;
  ms?: number;
  message?: string;
}

export type LanternEvent = { conversationId: string; requestId: number | string } & (
  | ToolEvent
  | { kind: "answerDelta"; text: string }
  | { kind: "usage"; promptTokens: number; completionTokens: number }
  | { kind: "status"; status: string; step?: number; message?: string | null; resetAnswer?: boolean }
);

export interface ServerInfo {
  version: string;
  model: string | null;
  auditLog: string;
  readMaxLines?: number; // the most lines one read_file call shows (absent from older servers)
}

/** Messages from the extension to the answer panel. */
export type ToPanel =
  | { type: "question"; key: string; question: string }
  | { type: "event"; key: string; event: LanternEvent }
  | { type: "result"; key: string; result: AskResult }
  | { type: "failed"; key: string; message: string; cancelled: boolean }
  | { type: "reset" };

/** Messages from the answer panel to the extension. */
export type FromPanel =
  | { type: "open"; key: string; index: number }
  | { type: "ask"; question: string };
