// Answers `lantern/navigate` with VS Code's own language features (src/navigate.ts turns
// their answers into the wire's JSON). `lantern.navigation` off: not offered, and null.

import * as vscode from "vscode";
import type { LanguageClient } from "vscode-languageclient/node";
import { answerSummary, parseNavigate, PROVIDER_COMMANDS, sourceFor, toResult, type NavigateRequest } from "./navigate";
import type { NavigateResult } from "./protocol";
import { onUnlessTurnedOff } from "./trust";

/** `lantern.navigation`: on unless any level turns it off (a workspace can only narrow). */
export function navigationEnabled(): boolean {
  return onUnlessTurnedOff(vscode.workspace.getConfiguration("lantern").inspect<boolean>("navigation"));
}

async function ask(request: NavigateRequest): Promise<NavigateResult | null> {
  if (request.op === "workspaceSymbols") {
    const found = await vscode.commands.executeCommand<unknown>(PROVIDER_COMMANDS.workspaceSymbols, request.query);
    return toResult(request, found, sourceFor(undefined));
  }
  const uri = vscode.Uri.parse(request.uri, true);
  const document = await vscode.workspace.openTextDocument(uri);
  const position = new vscode.Position(request.position.line, request.position.character);
  const found = await vscode.commands.executeCommand<unknown>(PROVIDER_COMMANDS[request.op], uri, position);
  return toResult(request, found, sourceFor(document.languageId));
}

/** Registers the handler on a client before it starts. Any failure is "no answer" (null):
 * the server then falls back to its own syntax-only lookup. Each request is logged (one
 * line: the op and what was answered, never the locations). */
export function answerNavigation(client: LanguageClient, output: vscode.LogOutputChannel): void {
  client.onRequest("lantern/navigate", async (params: unknown, token: vscode.CancellationToken) => {
    const request = parseNavigate(params);
    if (!request) {
      output.info("lantern/navigate: not a request this client answers (a file: URI and a position, or a query): no answer");
      return null;
    }
    if (!navigationEnabled()) {
      output.info(`lantern/navigate ${request.op}: lantern.navigation is off: no answer`);
      return null;
    }
    try {
      const result = await ask(request);
      if (token.isCancellationRequested) return null;
      output.info(`lantern/navigate ${request.op}: ${answerSummary(result)}`);
      return result;
    } catch (error) {
      output.info(`lantern/navigate ${request.op}: no answer from the language features: ${String(error)}`);
      return null;
    }
  });
}
