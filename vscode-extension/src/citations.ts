// Citations in an answer become links by their character span.
// The answer is Markdown: each cited span is swapped for an inert placeholder,
// the Markdown is rendered, then each placeholder becomes a link (verified) or a
// marked span (unverified). Pure functions, no VS Code API.

import type { Reference } from "./protocol";

const PLACEHOLDER = /LANTERNREF(\d+)X/g;
const HREF_PLACEHOLDER = /href="LANTERNREF(\d+)X"/g;

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}

/** References whose spans are valid for `answer`, in order, without overlaps. */
export function usableReferences(answer: string, refs: readonly Reference[]): number[] {
  const order = refs
    .map((ref, index) => ({ ref, index }))
    .filter(({ ref }) => {
      const [start, end] = ref.span;
      return Number.isInteger(start) && Number.isInteger(end) && 0 <= start && start < end && end <= answer.length;
    })
    .sort((a, b) => a.ref.span[0] - b.ref.span[0]);
  const kept: number[] = [];
  let last = -1;
  for (const { ref, index } of order) {
    if (ref.span[0] >= last) {
      kept.push(index);
      last = ref.span[1];
    }
  }
  return kept;
}

/** The answer with each usable citation replaced by `LANTERNREF<index>X`. */
export function markCitations(answer: string, refs: readonly Reference[]): string {
  let out = "";
  let at = 0;
  for (const index of usableReferences(answer, refs)) {
    const [start, end] = refs[index].span;
    out += answer.slice(at, start) + `LANTERNREF${index}X`;
    at = end;
  }
  return out + answer.slice(at);
}

/** What a reference's link says on hover (and to a screen reader, as its description). */
export function referenceTitle(ref: Reference): string {
  const lines = ref.startLine === ref.endLine ? `line ${ref.startLine}` : `lines ${ref.startLine}–${ref.endLine}`;
  if (!ref.verified) return `${ref.path || "this path"}: not found in the workspace`;
  return `Open ${ref.path}, ${lines}${ref.seen ? "" : " (not read by Lantern)"}`;
}

/** Rendered HTML with placeholders turned into links or unverified marks. */
export function expandCitations(html: string, answer: string, refs: readonly Reference[]): string {
  const withHrefs = html.replace(HREF_PLACEHOLDER, (_match, n: string) => {
    const ref = refs[Number(n)];
    return ref?.verified ? `href="#" data-ref="${Number(n)}" class="lantern-ref"` : 'href="#" class="lantern-ref unverified"';
  });
  return withHrefs.replace(PLACEHOLDER, (_match, n: string) => {
    const index = Number(n);
    const ref = refs[index];
    if (!ref) return "";
    const text = escapeHtml(answer.slice(ref.span[0], ref.span[1]));
    const title = escapeHtml(referenceTitle(ref));
    if (ref.verified) {
      return `<a href="#" class="lantern-ref${ref.seen ? "" : " unseen"}" data-ref="${index}" title="${title}">${text}</a>`;
    }
    return `<span class="lantern-ref unverified" title="${title}">${text}</span>`;
  });
}
