// A failure as the editor shows it: what happened, the provider's own words, one line per
// fix worded with VS Code setting names (`lantern.baseUrl`), and the buttons that act on
// them. Never a command-line flag. Pure functions, no VS Code API.

import type { AskResult, Detail, Fix, FixAction, StopReason } from "./protocol";

export type FixLabel = "Open Setting" | "Pick Model" | "Set API Key" | "Connect a Model" | "Retry";

export interface FixButton {
  label: FixLabel;
  action: FixAction;
  setting?: string; // "lantern.<name>" for Open Setting
}

export interface FixView {
  summary: string;
  providerMessage?: string;
  lines: string[];
  buttons: FixButton[];
}

/** The VS Code setting for a server setting name: `baseUrl` → `lantern.baseUrl`. */
export function settingId(name: string): string {
  return name.startsWith("lantern.") ? name : `lantern.${name}`;
}

const API_KEY_WORDS = "the API key (Lantern: Set API Key)";

/** Lantern's own command-line flags, as an older server may still write them, in editor words. */
const FLAG_WORDS: Record<string, string> = {
  "--base-url": "lantern.baseUrl",
  "--model": "lantern.model",
  "--api-key": API_KEY_WORDS,
  "--max-steps": "lantern.maxSteps",
  "--max-output-tokens": "lantern.maxOutputTokens",
  "--max-context-tokens": "lantern.maxContextTokens",
  "--tool-protocol": "lantern.toolProtocol",
  "--request-timeout": "lantern.requestTimeoutSeconds",
};

/** Settings the server names in its messages (docs/settings.md), as the editor calls them. */
const SETTINGS = [
  "model",
  "baseUrl",
  "maxOutputTokens",
  "maxContextTokens",
  "toolProtocol",
  "headers",
  "requestTimeoutSeconds",
  "questionTimeoutSeconds",
  "maxSteps",
  "maxToolOutputBytes",
];

const FLAG = /(?<![\w-])--(?:base-url|model|api-key|max-steps|max-output-tokens|max-context-tokens|tool-protocol|request-timeout)(?![\w-])(?:[ =](?:URL|NAME|KEY|N)\b)?/g;
const QUOTED_SETTING = new RegExp("`(" + [...SETTINGS, "apiKey"].join("|") + ")`", "g");

/** Server text in the editor's words: `baseUrl` → lantern.baseUrl, `--model` → lantern.model. */
export function editorWords(text: string): string {
  return text
    .replace(FLAG, (match) => FLAG_WORDS[match.split(/[ =]/)[0]] ?? match)
    .replace(QUOTED_SETTING, (_m, name: string) => (name === "apiKey" ? API_KEY_WORDS : settingId(name)));
}

function withNote(text: string, note: string | undefined): string {
  const words = note ? editorWords(note.trim()) : "";
  return words ? `${text}: ${words}` : text;
}

function shownChoices(choices: readonly string[]): string {
  const first = choices.slice(0, 8).join(", ");
  return choices.length > 8 ? `${first} and ${choices.length - 8} more` : first;
}

/** One fix as a line of text; undefined for an empty fix. */
export function fixLine(fix: Fix): string | undefined {
  const setting = fix.setting;
  if (!setting) return fix.note?.trim() ? editorWords(fix.note.trim()) : undefined;
  if (setting === "apiKey") return withNote("Set the API key (Lantern: Set API Key)", fix.note);
  const id = settingId(setting);
  if (fix.choices && fix.choices.length > 0) {
    return withNote(`Set ${id} to one of the endpoint's models: ${shownChoices(fix.choices)}`, fix.note);
  }
  if (fix.value !== undefined && fix.value !== "") return withNote(`Set ${id} to ${fix.value}`, fix.note);
  if (setting === "model" && !fix.note) return `Set ${id} to a model your endpoint offers`;
  return withNote(`Check ${id}`, fix.note);
}

function buttonFor(fix: Fix): FixButton | undefined {
  if (!fix.setting) return undefined;
  if (fix.setting === "model" || (fix.choices && fix.choices.length > 0)) return { label: "Pick Model", action: { action: "pickModel" } };
  if (fix.setting === "apiKey") return { label: "Set API Key", action: { action: "setApiKey" } };
  const setting = settingId(fix.setting);
  return { label: "Open Setting", action: { action: "openSetting", setting }, setting };
}

function sameButton(a: FixButton, b: FixButton): boolean {
  return a.label === b.label && a.setting === b.setting;
}

export interface FailureInput {
  key: string; // the turn, for Retry
  detail?: Detail;
  message?: string; // the human text when there is no detail (or its summary is empty)
  code?: string; // errorCode, when there is no detail
  retry: boolean; // an error the user may try again (not a cancel, not a stop)
}

/** Detail (or an older server's message and code) → what the error card shows. */
export function failureView(input: FailureInput): FixView {
  const { detail } = input;
  const code = detail?.code ?? input.code;
  const summary = editorWords((detail?.summary || detail?.message || input.message || "Lantern failed.").trim());
  const lines: string[] = [];
  const buttons: FixButton[] = [];
  const add = (button: FixButton | undefined): void => {
    if (button && !buttons.some((b) => sameButton(b, button))) buttons.push(button);
  };
  if (code === "no_model") add({ label: "Connect a Model", action: { action: "connect" } });
  for (const fix of detail?.fixes ?? []) {
    const line = fixLine(fix);
    if (line && !lines.includes(line)) lines.push(line);
    add(buttonFor(fix));
  }
  if (!detail) {
    // An older server: its message is all there is; offer what the code implies.
    if (code === "no_model") add({ label: "Pick Model", action: { action: "pickModel" } });
    if (code === "model_auth") add({ label: "Set API Key", action: { action: "setApiKey" } });
    if (code === "model_not_found") add({ label: "Pick Model", action: { action: "pickModel" } });
  }
  if (input.retry) add({ label: "Retry", action: { action: "retry", key: input.key } });
  const provider = detail?.providerMessage?.trim();
  return { summary, providerMessage: provider || undefined, lines, buttons };
}

const STOP_TEXT: Partial<Record<StopReason, string>> = {
  max_steps: "Stopped: step limit reached (lantern.maxSteps). The answer may be incomplete.",
  budget: "Stopped: tool output budget used up (lantern.maxToolOutputBytes). The answer may be incomplete.",
  timeout: "Stopped: the question took too long (lantern.questionTimeoutSeconds). Partial answer.",
  cancelled: "Cancelled.",
  filtered: "Stopped: the provider's content filter ended the answer.",
  truncated: "Stopped: the answer reached the model's output limit.",
};

/** The line for a stop other than done/error; filtered and truncated say what the server said. */
export function stopText(result: Pick<AskResult, "stopReason" | "detail">): string {
  const { stopReason, detail } = result;
  if ((stopReason === "filtered" || stopReason === "truncated") && detail?.summary) {
    return `Stopped: ${editorWords(detail.summary)}`;
  }
  return STOP_TEXT[stopReason] ?? `Stopped: ${stopReason}.`;
}
