// VS Code settings → what the server gets. One vocabulary: `lantern.<name>` here
// is `<name>` in initializationOptions. Pure functions.

import { ADD_ONLY, LOWER_ONLY } from "./trust";

/** Settings the server understands, as dotted names; the limits and lists come from the trust rule. */
export const SERVER_SETTINGS = ["model", "baseUrl", "headers", "maxOutputTokens", "approval.mode", "approval.allow", "toolProtocol", "projectInstructions", ...ADD_ONLY, ...LOWER_ONLY] as const;

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

/** The server command from `lantern.server.command`; unset or empty means the bundled server. */
export function serverCommand(value: unknown): { command?: string; args: string[]; problem?: string } {
  if (Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === "string" && v.length > 0)) {
    return { command: value[0], args: value.slice(1) };
  }
  const unset = value === undefined || value === null || (Array.isArray(value) && value.length === 0);
  return { args: [], problem: unset ? undefined : "lantern.server.command must be a list of strings; using the bundled server" };
}
