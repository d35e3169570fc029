// @-mention chips, in the question box (with a × each) and on a sent turn, and the rows of
// the @ completion list. The kind is a word, not an icon font.

import type { MentionChip, MentionOption } from "../src/protocol";
import { button, element } from "./dom";

const KIND_WORDS: Record<MentionChip["kind"], string> = { file: "file", folder: "folder", symbol: "symbol", problems: "problems" };

/** A chip: its kind, its label, and a × when it can still be removed. */
export function mentionChip(chip: MentionChip, remove?: () => void): HTMLElement {
  const node = element("span", `chip mention mention-${chip.kind}`);
  node.title = chip.kind === "problems" ? chip.label : `${KIND_WORDS[chip.kind]} ${chip.label}`;
  // "Problems in app.py (2)" says its kind already.
  if (chip.kind !== "problems") node.append(element("span", "mention-kind", KIND_WORDS[chip.kind]));
  node.append(element("span", "mention-label", chip.label));
  if (remove) node.append(button("mention-remove", "×", remove, `Remove the mention ${node.title}`));
  return node;
}

/** The chips of a sent turn (a list, as in the question box). */
export function turnMentions(chips: readonly MentionChip[]): HTMLElement {
  const row = element("div", "mention-row turn-mentions");
  row.setAttribute("role", "list");
  row.setAttribute("aria-label", "Mentioned with the question");
  for (const chip of chips) row.append(listItem(mentionChip(chip)));
  return row;
}

export function listItem(chip: HTMLElement): HTMLElement {
  chip.setAttribute("role", "listitem");
  return chip;
}

/** One row of the completion list: an option, disabled with its reason when refused. */
export function mentionOption(option: MentionOption, id: string, active: boolean): HTMLElement {
  const row = element("li", `mention-option${option.refused ? " refused" : ""}${active ? " active" : ""}`);
  row.id = id;
  row.setAttribute("role", "option");
  row.setAttribute("aria-selected", String(active));
  if (option.refused) row.setAttribute("aria-disabled", "true");
  if (option.kind !== "problems") row.append(element("span", "mention-kind", KIND_WORDS[option.kind]));
  row.append(element("span", "mention-label", option.label));
  if (option.detail) row.append(element("span", "mention-detail", option.detail));
  // In the row's text, so it is read with it: a refused row says why.
  if (option.refused) row.append(element("span", "mention-refused", `cannot be mentioned: ${option.refused}`));
  return row;
}
