// Answers the view's @ completion (src/mentions.ts): `@problems` from the active editor,
// the workspace symbols VS Code's providers find for the query, and `lantern/suggestMentions`,
// which lists the workspace's files and folders and checks each symbol's file. A newer query
// cancels the one before it; the view also drops any answer but the newest query's.

import * as vscode from "vscode";
import type { Server } from "./client";
import type { EditorTracker } from "./editor_tracker";
import { MAX_QUERY_CHARS, mentionSymbols, optionsOf, problemsOption } from "./mentions";
import { SUGGEST_MENTIONS, type MentionOption, type MentionSymbol, type SuggestMentionsParams, type ToPanel } from "./protocol";

/** How long the symbol providers may take before the list is shown without their symbols. */
export const SYMBOLS_WAIT_MS = 1_500;

export interface SuggestParts {
  server: Pick<Server, "connected" | "running">;
  editors: Pick<EditorTracker, "active">;
  post(message: ToPanel): void;
  output: Pick<vscode.LogOutputChannel, "info">;
}

export class MentionSuggester implements vscode.Disposable {
  private current: vscode.CancellationTokenSource | undefined;

  constructor(private readonly parts: SuggestParts) {}

  async suggest(seq: number, raw: string): Promise<void> {
    this.current?.cancel();
    this.current?.dispose();
    const cancel = (this.current = new vscode.CancellationTokenSource());
    const query = raw.slice(0, MAX_QUERY_CHARS);
    const problems = problemsOption(this.parts.editors.active(), query);
    const first: MentionOption[] = problems ? [problems] : [];
    const post = (items: MentionOption[], note?: string, pending = false): void => {
      if (!cancel.token.isCancellationRequested) this.parts.post({ type: "suggestions", seq, items, note, pending });
    };
    if (!this.parts.server.running) post(first, "Starting Lantern…", true);
    const [symbols, client] = await Promise.all([this.symbols(query), this.parts.server.connected()]);
    if (cancel.token.isCancellationRequested) return;
    if (!client) {
      post(first, "Files and symbols need Lantern's server, which did not start.");
      return;
    }
    const params: SuggestMentionsParams = { query };
    if (symbols.length) params.symbols = symbols;
    try {
      const result = await client.sendRequest<{ items?: unknown }>(SUGGEST_MENTIONS, params, cancel.token);
      post([...first, ...optionsOf(result?.items)]);
    } catch (error) {
      if (cancel.token.isCancellationRequested) return;
      this.parts.output.info(`${SUGGEST_MENTIONS}: ${String(error)}`);
      post(first, "Lantern's server did not list files (an older server?).");
    }
  }

  /** The workspace symbols for `query` (none for an empty one), or none after `SYMBOLS_WAIT_MS`. */
  private async symbols(query: string): Promise<MentionSymbol[]> {
    if (!query) return [];
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), SYMBOLS_WAIT_MS)));
    try {
      const asked = Promise.resolve(vscode.commands.executeCommand<unknown>("vscode.executeWorkspaceSymbolProvider", query)).catch(() => undefined);
      return mentionSymbols(await Promise.race([asked, late]));
    } finally {
      clearTimeout(timer);
    }
  }

  dispose(): void {
    this.current?.cancel();
    this.current?.dispose();
  }
}
