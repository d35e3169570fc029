// A repository can tighten Lantern, never loosen it. Settings that widen what is
// read or where it is sent come only from the user's own (user, machine or remote)
// settings; workspace and folder settings may only narrow. Pure functions.

/** What `WorkspaceConfiguration.inspect()` reports for one setting. */
export interface Inspected {
  defaultValue?: unknown;
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
}

export type Inspect = (name: string) => Inspected | undefined;

/** Honoured from user settings only: they choose the program run, the endpoint, skip prompts, or offer a repository's text. */
export const USER_ONLY = ["server.command", "baseUrl", "model", "headers", "maxOutputTokens", "approval.mode", "approval.allow", "projectInstructions"] as const;

/** Limits a workspace may lower but not raise. */
export const LOWER_ONLY = [
  "approval.timeoutSeconds",
  "maxSteps",
  "maxToolOutputBytes",
  "maxContextTokens",
  "requestTimeoutSeconds",
  "questionTimeoutSeconds",
] as const;

/** Lists a workspace may add to but not shorten. */
export const ADD_ONLY = ["approval.deny"] as const;

/** An extension-only switch a workspace may turn off but not on (`editorContext`,
 * `navigation`): the user's value (else the default), and off if a workspace or folder
 * turns it off; a workspace's `true` changes nothing. */
export function onUnlessTurnedOff(info: Inspected | undefined): boolean {
  const user = info?.globalValue ?? info?.defaultValue;
  return user !== false && info?.workspaceValue !== false && info?.workspaceFolderValue !== false;
}

/** Limits counted in whole numbers (the server rejects a fraction; the rest are seconds or sizes > 0). */
const COUNTS = new Set<string>(["maxSteps", "maxToolOutputBytes", "maxContextTokens"]);

export interface Trusted {
  /** The value to use for each setting, by dotted name (as in SERVER_SETTINGS). */
  values: Record<string, unknown>;
  /** Widening settings a workspace or folder tried to set; they were ignored. */
  ignored: string[];
}

const set = (v: unknown): boolean => v !== undefined && v !== null;

function userValue(info: Inspected): unknown {
  return set(info.globalValue) ? info.globalValue : info.defaultValue;
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
}

/**
 * Deny globs a workspace adds. The server reads the list gitignore-style, where a
 * later `!pattern` re-includes what an earlier one denied, and rejects a list with
 * a blank entry whole (falling back to its default): either would undo the user's
 * own globs, so a workspace's `!` and blank entries are dropped.
 */
function addedGlobs(v: unknown): string[] {
  return strings(v)
    .map((g) => g.trim())
    .filter((g) => g !== "" && !g.startsWith("!"));
}

/** A value the server accepts for this limit; anything else it would replace with its default. */
function validLimit(name: string, v: unknown): v is number {
  return typeof v === "number" && Number.isFinite(v) && v > 0 && (!COUNTS.has(name) || Number.isInteger(v));
}

/** The settings to use, given how each is set at each level. `others` (settings that
 * neither widen nor narrow access) follow VS Code's usual precedence. */
export function trustedSettings(inspect: Inspect, others: readonly string[] = []): Trusted {
  const values: Record<string, unknown> = {};
  const ignored: string[] = [];
  for (const name of others) {
    const info = inspect(name) ?? {};
    values[name] = [info.workspaceFolderValue, info.workspaceValue, info.globalValue, info.defaultValue].find(set);
  }
  for (const name of USER_ONLY) {
    const info = inspect(name) ?? {};
    values[name] = userValue(info);
    if (set(info.workspaceValue) || set(info.workspaceFolderValue)) ignored.push(`lantern.${name}`);
  }
  values.baseUrl = canonicalUrl(values.baseUrl);
  for (const name of LOWER_ONLY) {
    const info = inspect(name) ?? {};
    // A limit the user left unset (the context window: the endpoint's own) stays unset.
    let value = userValue(info);
    for (const local of [info.workspaceValue, info.workspaceFolderValue]) {
      if (!validLimit(name, local)) continue;
      if (typeof value === "number" && local < value) value = local;
    }
    values[name] = value;
  }
  for (const name of ADD_ONLY) {
    const info = inspect(name) ?? {};
    const all = [...strings(userValue(info)), ...addedGlobs(info.workspaceValue), ...addedGlobs(info.workspaceFolderValue)];
    values[name] = [...new Set(all)];
  }
  return { values, ignored };
}

const USER_ONLY_KEY = new RegExp(`"lantern\\.(${USER_ONLY.map((n) => n.replace(".", "\\.")).join("|")})"\\s*:`, "g");

/**
 * The user-only settings that a workspace settings file (JSON with comments) sets.
 * VS Code itself drops them (their scope is machine or application), so this is
 * how Lantern can tell the user that a repository tried.
 */
export function userOnlyKeysIn(text: string): string[] {
  const found = new Set<string>();
  for (const m of text.matchAll(USER_ONLY_KEY)) found.add(`lantern.${m[1]}`);
  return [...found].sort();
}

/**
 * An http(s) URL as WHATWG parses it (the form the key's origin check uses), so the
 * server's HTTP client cannot read another host out of it: `https://a\@b/` is host
 * `a` here but `b` to Python's urlsplit. Anything else is left for the server to reject.
 */
export function canonicalUrl(url: unknown): unknown {
  if (typeof url !== "string" || url.trim() === "") return url;
  try {
    const u = new URL(url.trim());
    return u.protocol === "http:" || u.protocol === "https:" ? u.href : url;
  } catch {
    return url;
  }
}

/** `scheme://host:port` of a URL, or "" for none; undefined when it does not parse. */
export function originOf(url: unknown): string | undefined {
  if (url === undefined || url === null || url === "") return "";
  if (typeof url !== "string") return undefined;
  try {
    const u = new URL(url);
    return u.origin === "null" ? undefined : u.origin;
  } catch {
    return undefined;
  }
}

/** A stored API key with the endpoint origin it was entered for ("" = no `lantern.baseUrl`). */
export interface StoredKey {
  origin: string;
  key: string;
}

export function parseStoredKey(text: string | undefined): StoredKey | undefined {
  if (!text) return undefined;
  try {
    const v = JSON.parse(text) as unknown;
    if (typeof v === "object" && v !== null) {
      const { origin, key } = v as Record<string, unknown>;
      if (typeof origin === "string" && typeof key === "string" && key) return { origin, key };
    }
  } catch {
    // an older, unbound key: never sent anywhere
  }
  return undefined;
}

/** The key to send to `baseUrl`, or why none is sent. */
export function keyFor(stored: StoredKey | undefined, baseUrl: unknown): { key?: string; problem?: string } {
  if (!stored) return {};
  const origin = originOf(baseUrl);
  if (origin === stored.origin) return { key: stored.key };
  const saved = stored.origin || "the default endpoint";
  const now = origin || "the default endpoint";
  return { problem: `the API key was saved for ${saved}, not ${now}; it is not sent. Run "Lantern: Set API Key" to save one for ${now}.` };
}
