// The @ completion list's state in the view: the query being typed, which answer belongs to
// the newest query (an older answer never replaces it), the rows and the active one.
// Pure: media/mentions.ts owns the timer and the DOM.

import { mentionAt } from "./mentions";
import type { MentionOption } from "./protocol";

export class MentionList {
  /** The rows shown; empty while the first answer is awaited. */
  items: MentionOption[] = [];
  /** The active row (aria-activedescendant), -1 for none. */
  active = -1;
  note: string | undefined;
  /** Waiting for an answer to the newest query. */
  pending = false;
  /** Where the `@query` being completed starts, and what it is; undefined: the list is closed. */
  at: { start: number; query: string } | undefined;
  private asked = 0; // the newest query's number
  private dismissed: number | undefined; // the `@` that Escape closed: not reopened until the text leaves it

  get open(): boolean {
    return this.at !== undefined;
  }

  /** The text or caret changed: the query to ask for (the list opens, and answers to earlier
   * queries are no longer taken), or undefined (nothing new to ask: the same query, or no `@`
   * before the caret, which closes the list). */
  typed(text: string, caret: number): string | undefined {
    const found = mentionAt(text, caret);
    if (!found || found.start === this.dismissed) {
      if (!found) this.dismissed = undefined;
      this.close();
      return undefined;
    }
    this.dismissed = undefined;
    const same = this.at?.start === found.start && this.at.query === found.query;
    this.at = found;
    if (same) return undefined;
    this.pending = true;
    this.asked += 1;
    return found.query;
  }

  /** The newest query's number: the only one whose answer is taken. */
  get seq(): number {
    return this.asked;
  }

  /** An answer came: taken when it is for the newest query and the list is open. */
  answered(seq: number, items: MentionOption[], note?: string, pending = false): boolean {
    if (seq !== this.asked || !this.open) return false;
    const activeKey = this.items[this.active] && key(this.items[this.active]);
    this.items = items;
    this.note = note;
    this.pending = pending;
    const kept = activeKey === undefined ? -1 : items.findIndex((item) => key(item) === activeKey);
    this.active = kept >= 0 ? kept : firstEnabled(items);
    return true;
  }

  /** Arrow keys: the next or previous row, round the ends; a refused row too (its reason is read). */
  move(delta: 1 | -1): void {
    const n = this.items.length;
    if (n === 0) return;
    this.active = this.active < 0 ? (delta > 0 ? 0 : n - 1) : (this.active + delta + n) % n;
  }

  /** The active row, if it can be taken (not refused). */
  takeable(): MentionOption | undefined {
    const item = this.items[this.active];
    return item && !item.refused ? item : undefined;
  }

  /** Escape: closed, and not reopened for this `@` until the text moves away from it. */
  dismiss(): void {
    this.dismissed = this.at?.start;
    this.close();
  }

  close(): void {
    this.at = undefined;
    this.items = [];
    this.active = -1;
    this.note = undefined;
    this.pending = false;
  }
}

function key(item: MentionOption): string {
  return JSON.stringify([item.kind, item.uri, item.range, item.label]);
}

function firstEnabled(items: readonly MentionOption[]): number {
  const at = items.findIndex((item) => !item.refused);
  return at >= 0 ? at : items.length ? 0 : -1;
}
