// What the one polite live region says: an answer once, when it is complete, an approval
// when it appears, and a compaction or a warning as it is said. Short plain text, never the streamed chunks. Pure functions.

import { compactionText } from "./context_meter";
import { editorWords } from "./fixes";
import type { StatusEvent, TurnRecord } from "./protocol";

const LIMIT = 200;

/** Markdown → what a screen reader should hear: text without the markup. */
export function plainText(markdown: string): string {
  return markdown
    .replace(/```[^\n]*\n[\s\S]*?(```|$)/g, " (code) ") // a code block is named, not read out
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1") // links and images: their text
    .replace(/^\s{0,3}(#{1,6}|>|[-*+]|\d+[.)])\s+/gm, "") // headings, quotes, list marks
    .replace(/(\*\*|__|~~|`)/g, "")
    .replace(/(^|[\s(])[*_]([^*_\s][^*_]*)[*_](?=[\s.,;:!?)]|$)/g, "$1$2") // *emphasis*
    .replace(/\s+/g, " ")
    .trim();
}

/** The first ~200 characters, cut at a word. */
export function preview(text: string, limit = LIMIT): string {
  if (text.length <= limit) return text;
  const cut = text.slice(0, limit);
  const space = cut.lastIndexOf(" ");
  return `${(space > limit / 2 ? cut.slice(0, space) : cut).replace(/[\s,;:.]+$/, "")}…`;
}

/** Said once when a turn completes; undefined while it is not done. */
export function completionAnnouncement(turn: TurnRecord): string | undefined {
  if (turn.state !== "done") return undefined;
  if (turn.failure) {
    if (turn.failure.cancelled) return "Lantern stopped.";
    const message = turn.failure.message.trim();
    return preview(/^lantern\b/i.test(message) ? message : `Lantern failed: ${message}`);
  }
  const result = turn.result;
  if (result?.stopReason === "error") {
    return `Lantern failed: ${preview(result.detail?.summary || result.error || "unknown error")}`;
  }
  const text = plainText(turn.answer || result?.answer || "");
  return text ? `Answer ready: ${preview(text)}` : "Answer ready, with no text.";
}

export function approvalAnnouncement(message: string): string {
  return `Lantern needs your approval: ${preview(message)}`;
}

/** A status event worth hearing as it comes: the history compacted, or the prompt cut. */
export function statusAnnouncement(event: StatusEvent): string | undefined {
  if (event.status === "compacted" && event.compaction) return `Lantern: ${compactionText(event.compaction)}.`;
  if (event.status === "warning" && event.detail) return `Lantern warns: ${preview(editorWords(event.detail.summary || event.detail.message))}`;
  return undefined;
}
