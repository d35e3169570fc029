// A conversation as a Markdown file: each question, its answer, and the references
// Lantern verified as links to the files and lines. What the panel shows, as safe as it
// is there (`safe_markdown.ts`): an answer's HTML is text, and only workspace links and
// plain `https:` links are live; questions and errors are text. Pure functions: `link`
// turns a reference into the relative address the file will use.

import { usableReferences } from "./citations";
import type { Reference, TurnRecord } from "./protocol";
import { plainLine, plainText, safeText, segments } from "./safe_markdown";
import type { StoredConversation } from "./store";

/** Where a verified reference points from the exported file, e.g. `../src/app.py#L10-L12`. */
export type Linker = (ref: Reference) => string | undefined;

function lines(ref: Reference): string {
  return ref.startLine === ref.endLine ? `${ref.startLine}` : `${ref.startLine}-${ref.endLine}`;
}

/** The answer made safe, each verified citation made a link (not inside code, where a
 * link would show raw). */
function linkedAnswer(answer: string, refs: readonly Reference[], link: Linker): string {
  const cited = usableReferences(answer, refs);
  let out = "";
  for (const part of segments(answer)) {
    if (part.code) {
      out += answer.slice(part.start, part.end);
      continue;
    }
    let at = part.start;
    for (const index of cited) {
      const ref = refs[index];
      const [start, end] = ref.span;
      const target = start >= at && end <= part.end && ref.verified ? link(ref) : undefined;
      if (!target) continue;
      out += safeText(answer.slice(at, start));
      if (/(^|[^\\])!$/.test(out)) out = `${out.slice(0, -1)}\\!`; // not an image
      out += `[${plainText(answer.slice(start, end))}](${target})`;
      at = end;
    }
    out += safeText(answer.slice(at, part.end));
  }
  return out;
}

function quoteQuestion(question: string): string {
  return question
    .split(/\r?\n/)
    .map((line) => `> ${plainText(line)}`)
    .join("\n");
}

function turnMarkdown(turn: TurnRecord, link: Linker): string {
  const parts = [quoteQuestion(turn.question)];
  const a = turn.attachment;
  if (a) parts.push(`_Attached: ${plainLine(a.label ? `${a.path} (${a.label})` : `${a.path}:${a.startLine}-${a.endLine}`)}_`);
  if (turn.mentions?.length) parts.push(`_Mentioned: ${plainLine(turn.mentions.map((m) => m.label).join(", "))}_`);
  const refs = turn.result?.references ?? [];
  const answer = turn.result?.answer ?? turn.answer;
  if (answer.trim()) parts.push(linkedAnswer(answer, refs, link));
  if (turn.failure) parts.push(`_${plainLine(turn.failure.message)}_`);
  else if (turn.result && turn.result.stopReason !== "done") {
    parts.push(`_Stopped: ${plainLine(turn.result.detail?.summary ?? turn.result.error ?? turn.result.stopReason)}_`);
  }
  if (refs.length > 0) {
    const items = refs.map((ref) => {
      const label = plainLine(`${ref.path || "(outside the workspace)"}:${lines(ref)}`);
      const target = ref.verified ? link(ref) : undefined;
      return target ? `- [${label}](${target})` : `- ${label} (unverified: not found in the workspace)`;
    });
    parts.push(`**References**\n\n${items.join("\n")}`);
  }
  return parts.join("\n\n");
}

export function conversationMarkdown(conversation: StoredConversation, link: Linker): string {
  const date = new Date(conversation.created).toISOString().slice(0, 16).replace("T", " ");
  const head = `# ${plainLine(conversation.title)}\n\n_Lantern conversation, ${date} UTC_`;
  const turns = conversation.turns.filter((t) => t.state === "done").map((t) => turnMarkdown(t, link));
  return `${[head, ...turns].join("\n\n---\n\n")}\n`;
}

/** A relative link from `fromDir` to `file` (POSIX paths), with the lines as a GitHub-style fragment. */
export function relativeLink(fromDir: string, file: string, ref: Reference): string {
  const from = fromDir.split("/").filter(Boolean);
  const to = file.split("/").filter(Boolean);
  let common = 0;
  while (common < from.length && common < to.length - 1 && from[common] === to[common]) common++;
  const up = from.slice(common).map(() => "..");
  const rel = [...up, ...to.slice(common)].map(encodeURIComponent).join("/");
  const fragment = ref.startLine === ref.endLine ? `#L${ref.startLine}` : `#L${ref.startLine}-L${ref.endLine}`;
  return `${rel}${fragment}`;
}
