// VS Code settings → what the server gets. One vocabulary (DESIGN section 10):
// `lantern.<name>` here is `<name>` in initializationOptions. Pure functions.

export const DEFAULT_COMMAND: readonly string[] = ["lantern", "serve"];

/** Settings the server understands, dotted names as in DESIGN section 10. */
export const SERVER_SETTINGS = [
  "model",
  "baseUrl",
  "approval.mode",
  "approval.allow",
  "approval.deny",
  "approval.timeoutSeconds",
  "maxSteps",
  "maxToolOutputBytes",
  "maxContextTokens",
  "requestTimeoutSeconds",
  "questionTimeoutSeconds",
] as const;

type Getter = (name: string) => unknown;

/** Nested initializationOptions from a settings getter; unset values are left out. */
export function toServerOptions(get: Getter): Record<string, unknown> {
  const options: Record<string, unknown> = {};
  for (const name of SERVER_SETTINGS) {
    const value = get(name);
    if (value === undefined || value === null || value === "") continue;
    const parts = name.split(".");
    let node = options;
    for (const part of parts.slice(0, -1)) {
      node = (node[part] ??= {}) as Record<string, unknown>;
    }
    node[parts[parts.length - 1]] = value;
  }
  return options;
}

/** The server command from `lantern.server.command`, or the default with a reason. */
export function serverCommand(value: unknown): { command: string; args: string[]; problem?: string } {
  if (Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === "string" && v.length > 0)) {
    return { command: value[0], args: value.slice(1) };
  }
  const problem =
    value === undefined || value === null ? undefined : "lantern.server.command must be a non-empty list of strings";
  return { command: DEFAULT_COMMAND[0], args: DEFAULT_COMMAND.slice(1), problem };
}

/** The status bar text: model and the last answer's tokens. */
export function statusText(model: string | null, tokens?: { promptTokens: number; completionTokens: number }): string {
  const name = model ?? "no model";
  if (!tokens) return `$(lightbulb) ${name}`;
  const total = tokens.promptTokens + tokens.completionTokens;
  const shown = total >= 1000 ? `${(total / 1000).toFixed(1)}k` : `${total}`;
  return `$(lightbulb) ${name} · ${shown} tokens`;
}
