// @-mentions in the question box (docs/vscode.md#mentions): what follows an `@` is a query
// for `lantern/suggestMentions` (files, folders, and the workspace symbols VS Code found,
// each checked by the server) and for `@problems`; a taken row is a chip, and a question's
// chips are sent as `mentions` (file, folder, symbol) and `context.diagnostics` (problems).
// Pure: src/mention_suggest.ts asks VS Code and the server, media/mentions.ts draws.

import { basename, diagnosticsOf, type EditorProblem, type EditorState } from "./editor_context";
import { toSymbols } from "./navigate";
import type { AskContext, MentionChip, MentionOption, MentionParam, MentionSuggestion, MentionSymbol, Position, Range, TurnRecord } from "./protocol";

/** The contract's bounds: the longest query and the most symbols the server takes. */
export const MAX_QUERY_CHARS = 200;
export const MAX_SYMBOLS = 200;
/** The most chips one question carries (more from the view are not sent). */
export const MAX_CHIPS = 20;
/** The word that names the active file's problems. */
export const PROBLEMS = "problems";

const KINDS: readonly MentionChip["kind"][] = ["file", "folder", "symbol", "problems"];

/** The `@query` just before the caret: an `@` at the start or after a space, then no space. */
export function mentionAt(text: string, caret: number): { start: number; query: string } | undefined {
  const before = text.slice(0, caret);
  const found = /(?:^|\s)@(\S*)$/.exec(before);
  if (!found || found[1].length > MAX_QUERY_CHARS) return undefined;
  return { start: caret - found[1].length - 1, query: found[1] };
}

/** The text with `text[start, caret)` (the `@query` taken) removed, and where the caret goes. */
export function withoutMention(text: string, start: number, caret: number): { text: string; caret: number } {
  return { text: text.slice(0, start) + text.slice(caret), caret: start };
}

/** VS Code's workspace symbols as the request's `symbols`: at most `MAX_SYMBOLS`. */
export function mentionSymbols(found: unknown): MentionSymbol[] {
  return toSymbols(found, MAX_SYMBOLS).map(({ name, kind, containerName, location }) => {
    const symbol: MentionSymbol = { name, uri: location.uri, range: location.range };
    if (kind) symbol.kind = kind;
    if (containerName) symbol.containerName = containerName;
    return symbol;
  });
}

/** `@problems` for the active editor, when the query could be its start (or is empty);
 * refused, with why, when there is no such file or it has no problems. */
export function problemsOption(state: EditorState | undefined, query: string): MentionOption | undefined {
  if (!PROBLEMS.startsWith(query.toLowerCase())) return undefined;
  const label = "Problems in the active file";
  if (!state) return { kind: "problems", label, refused: "No file is open in the editor." };
  if (state.scheme !== "file" || state.relativePath === undefined) {
    return { kind: "problems", label, refused: "The active file is not in the workspace." };
  }
  const name = basename(state.relativePath);
  const count = state.problems.length;
  if (count === 0) return { kind: "problems", label: `Problems in ${name}`, uri: state.uri, refused: `${name} has no problems.` };
  return { kind: "problems", label: `Problems in ${name} (${count})`, uri: state.uri };
}

const isText = (v: unknown): v is string => typeof v === "string" && v.length > 0;
const isIndex = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;

function position(value: unknown): Position | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { line, character } = value as Record<string, unknown>;
  return isIndex(line) && isIndex(character) ? { line, character } : undefined;
}

function range(value: unknown): Range | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { start, end } = value as Record<string, unknown>;
  const s = position(start);
  const e = position(end);
  return s && e ? { start: s, end: e } : undefined;
}

/** The server's suggestions as rows of the view: one that is not well formed is left out. */
export function optionsOf(items: unknown): MentionOption[] {
  const out: MentionOption[] = [];
  for (const item of Array.isArray(items) ? items : []) {
    if (typeof item !== "object" || item === null) continue;
    const s = item as Partial<Record<keyof MentionSuggestion, unknown>>;
    if ((s.kind !== "file" && s.kind !== "folder" && s.kind !== "symbol") || !isText(s.label) || !isText(s.uri)) continue;
    const option: MentionOption = { kind: s.kind, label: s.label, uri: s.uri };
    if (isText(s.detail)) option.detail = s.detail;
    const r = range(s.range);
    if (s.kind === "symbol" && r) option.range = r;
    if (isText(s.refused)) option.refused = s.refused;
    out.push(option);
  }
  return out;
}

/** The chip a taken row becomes; none for a refused row. */
export function chipOf(option: MentionOption): MentionChip | undefined {
  if (option.refused) return undefined;
  const chip: MentionChip = { kind: option.kind, label: option.kind === "symbol" && option.detail ? `${option.label} (${option.detail})` : option.label };
  if (option.uri) chip.uri = option.uri;
  if (option.kind === "symbol" && option.range) chip.range = option.range;
  return chip;
}

/** Whether two chips name the same thing (taking one twice adds nothing). */
export function sameChip(a: MentionChip, b: MentionChip): boolean {
  return a.kind === b.kind && a.uri === b.uri && JSON.stringify(a.range) === JSON.stringify(b.range);
}

/** The chips of an `ask` from the view, checked: well formed, `file:` URIs, at most `MAX_CHIPS`. */
export function checkedChips(value: unknown): MentionChip[] {
  const out: MentionChip[] = [];
  for (const item of Array.isArray(value) ? value : []) {
    if (out.length >= MAX_CHIPS) break;
    if (typeof item !== "object" || item === null) continue;
    const c = item as Partial<Record<keyof MentionChip, unknown>>;
    if (!KINDS.includes(c.kind as MentionChip["kind"]) || !isText(c.label) || !isText(c.uri) || !c.uri.startsWith("file:")) continue;
    const chip: MentionChip = { kind: c.kind as MentionChip["kind"], label: c.label, uri: c.uri };
    const r = range(c.range);
    if (chip.kind === "symbol") {
      if (!r) continue;
      chip.range = r;
    }
    if (!out.some((o) => sameChip(o, chip))) out.push(chip);
  }
  return out;
}

/** A question's `mentions`: its file, folder and symbol chips (a symbol as its file's lines). */
export function mentionParams(chips: readonly MentionChip[] | undefined): MentionParam[] | undefined {
  const params: MentionParam[] = [];
  for (const chip of chips ?? []) {
    if (chip.kind === "problems" || !chip.uri) continue;
    params.push(chip.range ? { uri: chip.uri, range: chip.range } : { uri: chip.uri });
  }
  return params.length ? params : undefined;
}

/** The file an `@problems` chip names, if the question has one. */
export function problemsFile(chips: readonly MentionChip[] | undefined): string | undefined {
  return chips?.find((c) => c.kind === "problems" && c.uri)?.uri;
}

/** A question's `context`: what went with it from the editor and, with `@problems`, that
 * file's problems as they are when it is sent (`problemsOf`). `@problems` of another file
 * than the editor's context replaces that context (the turn then keeps no attachment). */
export function askContext(
  attachment: TurnRecord["attachment"],
  chips: readonly MentionChip[] | undefined,
  problemsOf: (uri: string) => readonly EditorProblem[],
): AskContext | undefined {
  const base = attachment?.context ?? (attachment?.uri ? { uri: attachment.uri, range: attachment.range } : undefined);
  const file = problemsFile(chips);
  if (!file) return base;
  const context: AskContext = base?.uri === file ? { ...base } : { uri: file };
  const diagnostics = diagnosticsOf(problemsOf(file));
  if (diagnostics.length) context.diagnostics = diagnostics;
  else delete context.diagnostics;
  return context;
}

/** What a question keeps of the editor's context beside its chips (see `askContext`). */
export function keptAttachment(attachment: TurnRecord["attachment"], chips: readonly MentionChip[] | undefined): TurnRecord["attachment"] {
  const file = problemsFile(chips);
  return file && attachment && attachment.uri !== file ? undefined : attachment;
}
