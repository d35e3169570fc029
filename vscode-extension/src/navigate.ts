// `lantern/navigate` (docs/protocol.md): the server asks what the editor's language
// features know — definitions, references, hover — and this turns VS Code's answers into
// the wire's JSON. Pure functions: the values are VS Code's shapes, described structurally
// (src/navigation.ts calls the providers). Positions stay in VS Code's unit, UTF-16 code
// units, the encoding the language client negotiates; lines are 0-based on both sides.

import type { NavigateLocation, NavigateParams, NavigateResult, NavigateSymbol, Position, Range } from "./protocol";

/** The ops this client answers, in the order of the contract. */
export const NAVIGATION_OPS = ["definition", "references", "implementation", "typeDefinition", "hover", "workspaceSymbols"] as const;
export type NavigateOp = (typeof NAVIGATION_OPS)[number];

/** Most locations or symbols sent in one answer: a runaway provider is cut here. */
export const MAX_LOCATIONS = 5_000;
/** Most characters of hover text sent (the server caps it again). */
export const MAX_HOVER_CHARS = 32_000;
/** Longest workspace-symbol query passed on. */
export const MAX_QUERY_CHARS = 1_000;

/** `capabilities.experimental.lantern` for this client: navigation only when it is on. */
export function lanternCapabilities(navigation: boolean): Record<string, unknown> {
  const capabilities: Record<string, unknown> = { approvalRequests: true, showsErrors: true };
  if (navigation) capabilities.navigation = [...NAVIGATION_OPS];
  return capabilities;
}

/** What one request asks, checked: a document position, or a workspace-symbol query. */
export type NavigateRequest = { op: Exclude<NavigateOp, "workspaceSymbols">; uri: string; position: Position } | { op: "workspaceSymbols"; query: string };

const isOp = (v: unknown): v is NavigateOp => typeof v === "string" && (NAVIGATION_OPS as readonly string[]).includes(v);
const isIndex = (v: unknown): v is number => typeof v === "number" && Number.isSafeInteger(v) && v >= 0;

/** The request, or undefined when it is not one this client answers (a `file:` URI and a position, or a query). */
export function parseNavigate(params: unknown): NavigateRequest | undefined {
  if (typeof params !== "object" || params === null) return undefined;
  const { op, uri, position, query } = params as Partial<Record<keyof NavigateParams, unknown>>;
  if (!isOp(op)) return undefined;
  if (op === "workspaceSymbols") return typeof query === "string" ? { op, query: query.slice(0, MAX_QUERY_CHARS) } : undefined;
  if (typeof uri !== "string" || !uri.startsWith("file:")) return undefined;
  if (typeof position !== "object" || position === null) return undefined;
  const { line, character } = position as Record<string, unknown>;
  if (!isIndex(line) || !isIndex(character)) return undefined;
  return { op, uri, position: { line, character } };
}

/** VS Code's shapes, as far as they are read here. */
export interface UriLike {
  toString(): string;
}
export interface RangeLike {
  start: Position;
  end: Position;
}
export interface LocationLike {
  uri: UriLike;
  range: RangeLike;
}
export interface LocationLinkLike {
  targetUri: UriLike;
  targetRange: RangeLike;
  targetSelectionRange?: RangeLike;
}
export type MarkedStringLike = string | { language?: string; value: string };
export interface HoverLike {
  contents: MarkedStringLike[];
}
export interface SymbolLike {
  name: string;
  kind?: number;
  containerName?: string;
  location?: LocationLike;
}

function range(r: RangeLike | undefined): Range | undefined {
  if (!r || !r.start || !r.end) return undefined;
  const { start, end } = r;
  if (![start.line, start.character, end.line, end.character].every(isIndex)) return undefined;
  return { start: { line: start.line, character: start.character }, end: { line: end.line, character: end.character } };
}

/** One Location or LocationLink (a link points at its name: the selection range, else the whole target). */
function location(item: unknown): NavigateLocation | undefined {
  if (typeof item !== "object" || item === null) return undefined;
  const link = item as Partial<LocationLinkLike>;
  if (link.targetUri) {
    const r = range(link.targetSelectionRange) ?? range(link.targetRange);
    return r && { uri: link.targetUri.toString(), range: r };
  }
  const plain = item as Partial<LocationLike>;
  const r = range(plain.range);
  return plain.uri && r ? { uri: plain.uri.toString(), range: r } : undefined;
}

/** What a definition, reference, implementation or type-definition provider returned
 * (one location, a list of locations or links, or nothing), at most `max` of them. */
export function toLocations(found: unknown, max = MAX_LOCATIONS): NavigateLocation[] {
  const items = Array.isArray(found) ? found : found ? [found] : [];
  const out: NavigateLocation[] = [];
  for (const item of items) {
    if (out.length >= max) break;
    const converted = location(item);
    if (converted) out.push(converted);
  }
  return out;
}

function markedText(part: unknown): string {
  if (typeof part === "string") return part;
  if (typeof part !== "object" || part === null) return "";
  const { language, value } = part as { language?: unknown; value?: unknown };
  if (typeof value !== "string") return "";
  // A MarkdownString has no language; a MarkedString with one is a code block.
  return typeof language === "string" && language ? "```" + language + "\n" + value + "\n```" : value;
}

/** The hovers' contents as one markdown text (undefined when there is none), capped. */
export function hoverText(found: unknown, max = MAX_HOVER_CHARS): string | undefined {
  const hovers = Array.isArray(found) ? found : [];
  const parts: string[] = [];
  for (const hover of hovers) {
    const contents = (hover as Partial<HoverLike> | null)?.contents;
    for (const part of Array.isArray(contents) ? contents : []) {
      const text = markedText(part).trim();
      if (text) parts.push(text);
    }
  }
  const text = parts.join("\n\n");
  if (!text) return undefined;
  return text.length > max ? text.slice(0, max) : text;
}

/** vscode.SymbolKind, by value (0-based, unlike LSP's). */
const SYMBOL_KINDS = [
  "file", "module", "namespace", "package", "class", "method", "property", "field", "constructor", "enum",
  "interface", "function", "variable", "constant", "string", "number", "boolean", "array", "object", "key",
  "null", "enumMember", "struct", "event", "operator", "typeParameter",
] as const; // prettier-ignore

/** Workspace symbols as the wire carries them, at most `max`; one without a location is left out. */
export function toSymbols(found: unknown, max = MAX_LOCATIONS): NavigateSymbol[] {
  const items = Array.isArray(found) ? found : [];
  const out: NavigateSymbol[] = [];
  for (const item of items) {
    if (out.length >= max) break;
    if (typeof item !== "object" || item === null) continue;
    const symbol = item as Partial<SymbolLike>;
    const where = location(symbol.location);
    if (typeof symbol.name !== "string" || !where) continue;
    const converted: NavigateSymbol = { name: symbol.name, location: where };
    const kind = typeof symbol.kind === "number" ? SYMBOL_KINDS[symbol.kind] : undefined;
    if (kind) converted.kind = kind;
    if (typeof symbol.containerName === "string" && symbol.containerName) converted.containerName = symbol.containerName;
    out.push(converted);
  }
  return out;
}

const LANGUAGES: Record<string, string> = {
  typescript: "TypeScript",
  typescriptreact: "TypeScript",
  javascript: "JavaScript",
  javascriptreact: "JavaScript",
  python: "Python",
  go: "Go",
  rust: "Rust",
  java: "Java",
  csharp: "C#",
  cpp: "C++",
  c: "C",
  ruby: "Ruby",
  php: "PHP",
  kotlin: "Kotlin",
  swift: "Swift",
};

/** Who answered, for people: the document's language (VS Code does not say which extension
 * answered), e.g. "TypeScript"; for a language without a known name, its id as VS Code has it. */
export function sourceFor(languageId: string | undefined): string {
  if (!languageId) return "the editor's language features";
  return LANGUAGES[languageId] ?? `language features for ${languageId}`;
}

/** The answer for `request` from what its provider returned. No location at all is no
 * answer (null): a language server that has not loaded the project yet answers with none
 * (TypeScript does for its first seconds), and the server then says it fell back. */
export function toResult(request: NavigateRequest, found: unknown, source: string): NavigateResult | null {
  if (request.op === "hover") {
    const hover = hoverText(found);
    return hover === undefined ? { source } : { source, hover };
  }
  if (request.op === "workspaceSymbols") return { source, symbols: toSymbols(found) };
  const locations = toLocations(found);
  return locations.length > 0 ? { source, locations } : null;
}

/** One line for the log about an answer: how much, from whom; never the locations. */
export function answerSummary(result: NavigateResult | null): string {
  if (!result) return "nothing found: no answer";
  const from = result.source ? ` from ${result.source}` : "";
  if (result.locations) return `${result.locations.length} location(s)${from}`;
  if (result.symbols) return `${result.symbols.length} symbol(s)${from}`;
  return `${result.hover === undefined ? "no hover text" : `${result.hover.length} characters of hover text`}${from}`;
}

/** The VS Code command that answers each op. */
export const PROVIDER_COMMANDS: Record<NavigateOp, string> = {
  definition: "vscode.executeDefinitionProvider",
  references: "vscode.executeReferenceProvider",
  implementation: "vscode.executeImplementationProvider",
  typeDefinition: "vscode.executeTypeDefinitionProvider",
  hover: "vscode.executeHoverProvider",
  workspaceSymbols: "vscode.executeWorkspaceSymbolProvider",
};
