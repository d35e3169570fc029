// The webview's line to the extension: messages out, and the little state the view keeps
// across a hide/show or reload (the question being typed and its @-mention chips).

import type { FromPanel, MentionChip } from "../src/protocol";

interface VsCodeApi {
  postMessage(message: unknown): void;
  getState(): unknown;
  setState(state: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const api = acquireVsCodeApi();

export function send(message: FromPanel): void {
  api.postMessage(message);
}

interface ViewState {
  draft?: string;
  chips?: MentionChip[];
}

function saved(): ViewState {
  const state = api.getState() as ViewState | undefined;
  return typeof state === "object" && state !== null ? state : {};
}

export function savedDraft(): string {
  const { draft } = saved();
  return typeof draft === "string" ? draft : "";
}

export function saveDraft(draft: string): void {
  api.setState({ ...saved(), draft } satisfies ViewState);
}

/** The chips of the question being typed (the extension checks them again when it is asked). */
export function savedChips(): MentionChip[] {
  const { chips } = saved();
  return Array.isArray(chips) ? chips : [];
}

export function saveChips(chips: MentionChip[]): void {
  api.setState({ ...saved(), chips } satisfies ViewState);
}
