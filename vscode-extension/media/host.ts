// The webview's line to the extension: messages out, and the little state the view keeps
// across a hide/show or reload (the question being typed).

import type { FromPanel } from "../src/protocol";

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
}

export function savedDraft(): string {
  const state = api.getState() as ViewState | undefined;
  return typeof state?.draft === "string" ? state.draft : "";
}

export function saveDraft(draft: string): void {
  api.setState({ draft } satisfies ViewState);
}
