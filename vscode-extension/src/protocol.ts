// The LSP surface of `lantern serve`, as the extension sees it. Every interface that
// names a message of the wire (docs/protocol.md) is held against the server's Python
// types by tests/unit/test_protocol_drift.py: the same fields, and `?` exactly where the
// server may leave one out (or where an older server did not send it: say so on its line).

export interface Position {
  line: number;
  character: number;
}

export interface Range {
  start: Position;
  end: Position;
}

export interface Reference {
  uri?: string | null; // only on a verified reference
  range?: Range; // only on a verified reference
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
  summary?: string; // as in the tool event (absent from older servers)
  status: ToolStatus;
  code?: string;
  bytes: number;
  ms: number;
  waitMs?: number; // time the call waited for the user's approval (not in `ms`)
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

/** How full the context window is: the tokens the last request and its reply took (`used`)
 * of the `window`, and where the window came from (`source`, e.g. "the maxContextTokens
 * setting"). In each `usage` event and in the result (docs/protocol.md#lanternask). */
export interface ContextFill {
  used: number;
  window: number;
  source: string;
}

/** What one compaction of the history did to fit the window: `turns` earlier questions
 * summarized or dropped, `outputs` old tool outputs shortened, the history's tokens `before`
 * and `after`; `summary` is the model's summary (plain text), `why` why the turns were not
 * summarized instead. */
export interface Compaction {
  how: "summarized" | "shortened" | "dropped";
  before: number;
  after: number;
  turns: number;
  outputs: number;
  summary?: string;
  why?: string;
}

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  estimated?: boolean; // the endpoint sent no counts: Lantern estimated them
}

export interface AskResult {
  conversationId: string;
  answer: string;
  references: Reference[];
  toolCalls: ToolCall[];
  usage: Usage;
  stopReason: StopReason;
  error?: string;
  errorCode?: string;
  detail?: Detail;
  warnings?: Detail[];
  model?: string | null; // the model that answered (absent from older servers)
  context?: ContextFill; // how full the window was after the last request (absent from older servers)
  compactions?: Compaction[]; // present when the history was compacted during the question
}

/** One earlier exchange, sent so a server that does not know the conversation (after a
 * reload or a restart) starts it with the model's context intact. */
export interface HistoryTurn {
  question: string;
  answer: string;
}

/** One of the active file's problems, in LSP's shape (`severity` 1 error … 4 hint). */
export interface EditorDiagnostic {
  range: Range;
  message: string;
  severity?: number;
  source?: string;
}

/** What the editor showed when the user asked (docs/protocol.md, `lantern/ask`). */
export interface AskContext {
  uri: string; // a file: URI inside a workspace folder
  range?: Range; // the selection, when not empty
  visibleRange?: Range;
  diagnostics?: EditorDiagnostic[];
}

/** The view's chip for what the next question carries ("app.py:10-12 · 2 problems"). */
export interface ContextChip {
  label: string;
  title: string;
}

/** A file or folder the user named with the question (`@file`, `@folder`, `@symbol`): a
 * file read, a folder listed, with it without another prompt, through the same read path;
 * `range`: some of a file's lines (a symbol's range). */
export interface MentionParam {
  uri: string;
  range?: Range;
}

/** `lantern/suggestMentions`: the completion list for `@` in the question box (docs/protocol.md). */
export const SUGGEST_MENTIONS = "lantern/suggestMentions";

/** One of the editor's workspace symbols for the query, passed on for the server to check. */
export interface MentionSymbol {
  name: string;
  kind?: string;
  containerName?: string;
  uri: string;
  range: Range;
}

export interface SuggestMentionsParams {
  query: string; // what follows `@`; only its first 200 characters are matched
  symbols?: MentionSymbol[]; // only the first 200 are looked at
}

/** One completion item; `refused`: it cannot be mentioned, and why (for people). */
export interface MentionSuggestion {
  kind: "file" | "folder" | "symbol";
  label: string; // file/folder: the path as the model writes it ("src/app.ts", "src/"); symbol: its name
  detail?: string; // symbol: "src/app.ts:12"
  uri: string;
  range?: Range; // symbol only, as the client sent it
  refused?: string;
}

export interface SuggestMentionsResult {
  items: MentionSuggestion[]; // at most 50 files and folders, then the symbols
}

export interface AskParams {
  question: string;
  conversationId?: string;
  context?: AskContext;
  workDoneToken?: string;
  history?: HistoryTurn[];
  mentions?: MentionParam[];
}

export interface ResetParams {
  conversationId: string;
}

export interface ResetResult {
  reset: boolean;
}

export interface GrantsParams {
  conversationId?: string;
}

export interface GrantsResult {
  grants: Grant[];
}

export interface RevokeGrantParams {
  id: string;
}

export interface RevokeGrantResult {
  revoked: boolean;
}

export interface LocalServersResult {
  servers: LocalServer[];
}

/** `lantern/approve`: the server asks the editor about one read (docs/protocol.md#approvals). */
export interface ApproveParams {
  conversationId: string;
  callId: string | null;
  tool: string;
  message: string;
  path: string;
  folder: boolean;
  pattern?: string;
  startLine?: number;
  endLine?: number;
  size?: number;
  actions: string[];
  timeoutSeconds: number;
}

/** The editor's answer to `lantern/approve`: one of its `actions`; anything else denies. */
export interface ApproveResult {
  action?: string | null;
}

/** `lantern/navigate`: the server asks the editor's language features (docs/protocol.md). */
export interface NavigateParams {
  op: "definition" | "references" | "implementation" | "typeDefinition" | "hover" | "workspaceSymbols";
  uri?: string; // all ops but workspaceSymbols
  position?: Position; // 0-based, UTF-16
  query?: string; // workspaceSymbols only
}

export interface NavigateLocation {
  uri: string;
  range: Range;
}

export interface NavigateSymbol {
  name: string;
  kind?: string;
  containerName?: string;
  location: NavigateLocation;
}

/** The editor's answer to `lantern/navigate` (or null: no answer); the server trusts none of it. */
export interface NavigateResult {
  source?: string; // who answered, for people
  locations?: NavigateLocation[];
  hover?: string;
  symbols?: NavigateSymbol[];
}

export interface Grant {
  id: string;
  scope: "always" | "conversation";
  kind: "workspace" | "file" | "folder";
  tool?: string;
  path?: string;
  workspace: string;
  since?: number;
}

export interface ModelList {
  baseUrl: string;
  models: string[];
  detail?: Detail;
}

export interface LocalServer {
  name: string;
  baseUrl: string;
  models: string[];
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
  waitMs?: number;
  message?: string;
}

export interface AnswerDeltaEvent {
  kind: "answerDelta";
  text: string;
}

/** A thinking model's private reasoning: never shown as the answer. */
export interface ReasoningEvent {
  kind: "reasoning";
  text: string;
}

export interface UsageEvent {
  kind: "usage";
  promptTokens: number;
  completionTokens: number;
  estimated?: boolean;
  context?: ContextFill; // how full the window is (absent from older servers)
}

/** `thinking` (with `step`), `retrying` (with `resetAnswer`), `protocol` (with `protocol`),
 * `warning` (with `detail`: the endpoint cut the prompt), `compacted` (with `compaction`: what
 * was done to fit the window, said in `message`), or the final status: the `stopReason` (with
 * `detail` as in the result). */
export interface StatusEvent {
  kind: "status";
  status: string;
  step?: number;
  message?: string | null;
  resetAnswer?: boolean;
  protocol?: string;
  detail?: Detail;
  compaction?: Compaction;
}

/** What every `lantern/event` carries beside the event's own fields. */
export interface EventEnvelope {
  conversationId: string;
  requestId: number | string;
}

export type LanternEvent = EventEnvelope & (ToolEvent | AnswerDeltaEvent | ReasoningEvent | UsageEvent | StatusEvent);


export interface ServerInfo {
  version: string;
  model: string | null;
  auditLog: string;
  readMaxLines?: number; // the most lines one read_file call shows (absent from older servers)
}

/** A pending approval shown in its turn; answerable until `expiresAt` (ms since the epoch). */
export interface PanelApproval {
  id: string;
  callId: string | null;
  message: string;
  actions: string[];
  /** The action focused when the approval appears: one that never grants (so Enter denies). */
  safe?: string;
  expiresAt: number;
}

export type TurnState = "queued" | "preparing" | "running" | "done";

/** What the user @-mentioned with a question (docs/vscode.md#mentions): a file, a folder or a
 * symbol's lines, sent as `mentions`; or the active file's problems, sent in `context`. */
export interface MentionChip {
  kind: "file" | "folder" | "symbol" | "problems";
  label: string;
  uri?: string; // problems: the file they are of
  range?: Range; // symbol: its lines
}

/** One row of the view's @ completion: a suggestion of the server's, or `@problems`. */
export interface MentionOption {
  kind: MentionChip["kind"];
  label: string;
  detail?: string;
  uri?: string;
  range?: Range;
  refused?: string; // cannot be mentioned: why, for people
}

/** One question and everything shown for it: what the view renders and what is stored. */
export interface TurnRecord {
  key: string;
  question: string;
  askedAt: number; // ms since the epoch
  state: TurnState;
  /** What went with the question: a selection, or the editor's context (`label` is its chip). */
  attachment?: { path: string; startLine: number; endLine: number; uri?: string; range?: Range; label?: string; context?: AskContext };
  /** What the user @-mentioned: shown as the turn's chips, sent again on Retry. */
  mentions?: MentionChip[];
  tools: ToolEvent[]; // the latest event of each call, in the order the calls started
  answer: string; // streamed so far (the result's answer once done)
  interrupted?: string; // a partial answer kept when the server retried, shown marked
  result?: AskResult;
  failure?: { message: string; cancelled: boolean };
  approval?: PanelApproval;
  /** How full the window was after this question's latest request (its result's, once done). */
  context?: ContextFill;
  /** What was compacted to fit the window while this question ran: a divider before it. */
  compactions?: Compaction[];
  /** What to know although the question went on (the endpoint cut the prompt), as it is said. */
  warnings?: Detail[];
}

/** What the empty view offers while no model is set; absent once one is. */
export interface SetupState {
  baseUrl: string; // "" when unset
  hasKey: boolean;
}

/** Everything the view shows, sent whole on (re)open or when another conversation is opened. */
export interface PanelState {
  conversationId: string;
  title: string;
  turns: TurnRecord[];
  model: string | null; // shown in the model chip
  setup?: SetupState;
  context?: ContextChip | null; // what the next question carries from the editor
}

/** Messages from the extension to the answer panel. */
export type ToPanel =
  | { type: "state"; state: PanelState }
  | { type: "turn"; turn: TurnRecord } // a new or changed turn (replaces the one with its key)
  | { type: "event"; key: string; event: LanternEvent } // streamed while a turn runs
  | { type: "model"; model: string | null; setup?: SetupState }
  | { type: "context"; chip: ContextChip | null } // what the next question carries
  | { type: "suggestions"; seq: number; items: MentionOption[]; note?: string; pending?: boolean } // the @ completion for the view's query `seq`
  | { type: "focus" }; // put the cursor in the question box

/** What a fix button asks the extension to do. */
export type FixAction =
  | { action: "openSetting"; setting: string }
  | { action: "pickModel" }
  | { action: "setApiKey" }
  | { action: "connect" }
  | { action: "retry"; key: string }
  | { action: "openSettings" };

/** Messages from the answer panel to the extension. */
export type FromPanel =
  | { type: "ready" }
  | { type: "open"; key: string; index: number }
  | { type: "ask"; question: string; mentions?: MentionChip[] }
  | { type: "suggest"; seq: number; query: string } // the @ completion for what follows the @
  | { type: "stop" }
  | { type: "removeQueued"; key: string }
  | { type: "approve"; id: string; action: string }
  | { type: "copy"; text: string }
  | { type: "dropContext" } // leave the editor's context out of the next question
  | ({ type: "fix" } & FixAction);
