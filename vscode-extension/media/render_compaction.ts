// A divider where the history was compacted to fit the context window, drawn at the top
// of the turn whose question needed it: "Earlier turns summarized (12,400 → 900 tokens)",
// opening (a native <details>, so Enter and Space toggle it) to the model's summary that now
// stands for those turns. Every text goes in as text, never as HTML.

import { compactionText } from "../src/context_meter";
import type { Compaction } from "../src/protocol";
import { element } from "./dom";

function divider(compaction: Compaction): HTMLElement {
  const text = compactionText(compaction);
  const summary = compaction.summary?.trim();
  if (!summary) return element("p", "compaction compaction-line", text);
  const box = element("details", "compaction");
  const head = element("summary", "compaction-line", text);
  const n = compaction.turns;
  const what = n > 0 ? `What the model keeps of ${n} earlier question${n === 1 ? "" : "s"}, in its own words:` : "What the model keeps of the earlier turns, in its own words:";
  box.append(head, element("p", "compaction-what", what), element("p", "compaction-summary", summary));
  return box;
}

/** The dividers of a turn's compactions, oldest first; undefined when there were none. */
export function renderCompactions(compactions: readonly Compaction[]): HTMLElement | undefined {
  if (compactions.length === 0) return undefined;
  const box = element("div", "compactions");
  box.append(...compactions.map(divider));
  return box;
}
