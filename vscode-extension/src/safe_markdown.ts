// Markdown that a viewer shows as the panel does: text stays text. An answer is Markdown
// from a model (it may hold `<img onerror>`, `<script>`, `[x](javascript:…)`); the panel
// renders it with raw HTML off and sanitizes the result, but a Markdown file is opened in
// viewers that render HTML and follow links. So outside code, every `<` is escaped (no
// HTML, no autolink) and every `[` too (no link, image or reference definition), except
// for a plain `[text](https://…)` link, kept live; code (fenced blocks, one-line spans)
// is left exactly as written. Text that is not Markdown at all (a question, an error's
// words) is escaped whole. Pure functions, no VS Code API.

/** A part of the answer: code (left as written) or Markdown text (made safe). */
export interface Part {
  start: number;
  end: number;
  code: boolean;
}

const FENCE_OPEN = /^( {0,3})(`{3,}|~{3,})(.*)$/;

/** Where a line ends (its `\n` included) and the line without it (and without a `\r`). */
function lineAt(text: string, at: number): { end: number; line: string } {
  const nl = text.indexOf("\n", at);
  const end = nl < 0 ? text.length : nl + 1;
  return { end, line: text.slice(at, nl < 0 ? text.length : nl).replace(/\r$/, "") };
}

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

/** The end of the fenced block that opens at `at` (its closing line included), or
 * undefined when a viewer might end it sooner than its closing line: a fence indented by
 * 1–3 spaces may sit in a list item, which a less indented line closes. */
function fenceEnd(text: string, at: number, indent: number, fence: string): number | undefined {
  const closer = new RegExp(`^ {0,3}${fence[0] === "`" ? "`" : "~"}{${fence.length},}[ \\t]*$`);
  let pos = lineAt(text, at).end;
  while (pos < text.length) {
    const { end, line } = lineAt(text, pos);
    if (closer.test(line)) return end;
    if (line.trim() && indentOf(line) < indent) return undefined;
    pos = end;
  }
  return text.length;
}

/** A code span starting with the backtick run at `at` of `line` (one line only): its end. */
function spanEnd(line: string, at: number, run: number): number | undefined {
  let pos = at + run;
  while (pos < line.length) {
    const next = line.indexOf("`", pos);
    if (next < 0) return undefined;
    let stop = next;
    while (line[stop] === "`") stop++;
    if (stop - next === run) return stop;
    pos = stop;
  }
  return undefined;
}

/** The code spans of one line outside fences, as offsets into the line. */
function lineSpans(line: string): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  let pos = 0;
  while (pos < line.length) {
    const ch = line[pos];
    if (ch === "\\") {
      pos += 2; // an escaped character: an escaped backtick opens nothing
      continue;
    }
    if (ch !== "`") {
      pos++;
      continue;
    }
    let run = pos;
    while (line[run] === "`") run++;
    const end = spanEnd(line, pos, run - pos);
    if (end !== undefined) spans.push([pos, end]);
    pos = end ?? run;
  }
  return spans;
}

/** The answer cut into code and text, in order. A part is code only where every viewer
 * agrees it is: a fenced block (closing line included) or a code span within one line. */
export function segments(text: string): Part[] {
  const found: Part[] = [];
  let textStart = 0;
  const code = (start: number, end: number): void => {
    if (start > textStart) found.push({ start: textStart, end: start, code: false });
    if (end > start) found.push({ start, end, code: true });
    textStart = end;
  };
  let pos = 0;
  while (pos < text.length) {
    const { end, line } = lineAt(text, pos);
    const fence = FENCE_OPEN.exec(line);
    const opens = fence && !(fence[2][0] === "`" && fence[3].includes("`"));
    const close = opens ? fenceEnd(text, pos, fence[1].length, fence[2]) : undefined;
    if (close !== undefined) {
      code(pos, close);
      pos = close;
      continue;
    }
    for (const [a, b] of lineSpans(line)) code(pos + a, pos + b);
    pos = end;
  }
  if (textStart < text.length) found.push({ start: textStart, end: text.length, code: false });
  return found;
}

const HTTPS_LINK = /^\[([^[\]\\\n`]*)\]\((https:\/\/[^\s()<>\\`]*)\)/;

/** Markdown text (no code in it) made safe: `<` and `[` escaped, but for `[text](https://…)`
 * links (not images), kept with their text made safe too. Escapes already there are kept. */
export function safeText(text: string): string {
  let out = "";
  let pos = 0;
  while (pos < text.length) {
    const ch = text[pos];
    if (ch === "\\" && pos + 1 < text.length && /[!-/:-@[-`{-~]/.test(text[pos + 1])) {
      out += text.slice(pos, pos + 2);
      pos += 2;
      continue;
    }
    if (ch === "[" && text[pos - 1] !== "!") {
      const link = HTTPS_LINK.exec(text.slice(pos));
      if (link) {
        out += `[${link[1].replace(/</g, "\\<")}](${link[2]})`;
        pos += link[0].length;
        continue;
      }
    }
    out += ch === "<" || ch === "[" ? `\\${ch}` : ch;
    pos++;
  }
  return out;
}

/** Text that is not Markdown (a question, an error's words, a path), to be shown as it is. */
export function plainText(text: string): string {
  return text
    .replace(/[\\`*_[\]<>!|~&$#]/g, "\\$&")
    .replace(/^([ \t]*)([-+=]|\d+(?=[.)]))/gm, (_m, space: string, mark: string) => `${space}${/^\d/.test(mark) ? `${mark}\\` : `\\${mark}`}`);
}

/** One-line plain text: whitespace runs (line breaks too) as one space. */
export function plainLine(text: string): string {
  return plainText(text.replace(/\s+/g, " ").trim());
}
