// The question box's @-mentions: typing `@` opens a completion list (an ARIA listbox the
// box points into with aria-activedescendant), filled by the extension; arrows move,
// Enter or Tab take, Escape closes; a taken row becomes a chip above the box, removed with
// its × or Backspace at the start of the box. The chips go with the next question.

import { sameChip, chipOf } from "../src/mentions";
import { MentionList } from "../src/mention_list";
import type { MentionChip, ToPanel } from "../src/protocol";
import { announce } from "./announcer";
import { savedChips, saveChips, saveDraft, send } from "./host";
import { listItem, mentionChip, mentionOption } from "./render_mentions";
import type { Shell } from "./shell";

/** Typing pauses this long before the extension is asked. */
const DEBOUNCE_MS = 120;

type Suggestions = Extract<ToPanel, { type: "suggestions" }>;

export class Mentions {
  chips: MentionChip[] = savedChips();
  private readonly list = new MentionList();
  private timer: number | undefined;

  constructor(private readonly ui: Shell) {
    const input = ui.input;
    // Capture: before the box's own Enter (which asks), and nothing else sees a key used here.
    input.addEventListener("keydown", (event) => this.keydown(event), { capture: true });
    input.addEventListener("input", () => this.typed());
    input.addEventListener("click", () => this.typed());
    input.addEventListener("keyup", (event) => {
      if (["ArrowLeft", "ArrowRight", "Home", "End"].includes(event.key)) this.typed();
    });
    input.addEventListener("blur", () => this.close());
    // A click on a row takes it; the box keeps the focus.
    ui.mentionList.addEventListener("mousedown", (event) => event.preventDefault());
    ui.mentionList.addEventListener("click", (event) => {
      const row = (event.target as HTMLElement).closest<HTMLElement>("li[role=option]");
      if (!row) return;
      this.list.active = Array.from(ui.mentionList.children).indexOf(row);
      this.take();
    });
    this.drawChips();
  }

  /** The chips are sent with a question: the box starts again with none. */
  sent(): void {
    this.chips = [];
    saveChips([]);
    this.drawChips();
    this.close();
  }

  receive(message: Suggestions): void {
    if (!Array.isArray(message.items)) return;
    if (!this.list.answered(message.seq, message.items, message.note, message.pending === true)) return;
    this.draw();
    if (message.pending) return;
    const count = this.list.items.length;
    announce(this.ui.announcer, [count === 0 ? "No mention suggestions" : `${count} mention suggestion${count === 1 ? "" : "s"}`]);
  }

  private typed(): void {
    const input = this.ui.input;
    const wasOpen = this.list.open;
    // A selection is not a caret after an @: no completion.
    const caret = input.selectionStart === input.selectionEnd ? input.selectionStart : -1;
    const query = caret >= 0 ? this.list.typed(input.value, caret) : undefined;
    if (caret < 0) this.list.close();
    if (query !== undefined) {
      window.clearTimeout(this.timer);
      this.timer = window.setTimeout(() => {
        if (this.list.open) send({ type: "suggest", seq: this.list.seq, query: this.list.at?.query ?? "" });
      }, DEBOUNCE_MS);
    }
    if (query !== undefined || wasOpen !== this.list.open) this.draw();
  }

  private keydown(event: KeyboardEvent): void {
    if (event.isComposing) return;
    const open = this.list.open;
    const used = (): void => {
      event.preventDefault();
      event.stopImmediatePropagation();
    };
    if (open && (event.key === "ArrowDown" || event.key === "ArrowUp") && this.list.items.length) {
      used();
      this.list.move(event.key === "ArrowDown" ? 1 : -1);
      this.draw();
    } else if (open && (event.key === "Enter" || event.key === "Tab") && !event.shiftKey && this.list.items.length) {
      const refused = this.list.items[this.list.active]?.refused;
      if (this.list.takeable()) {
        used();
        this.take();
      } else if (refused && event.key === "Enter") {
        used(); // a refused row is not taken, and Enter does not ask the question either
        announce(this.ui.announcer, [`Cannot be mentioned: ${refused}`]);
      } else if (event.key === "Tab") {
        this.close(); // nothing to take: Tab moves on
      }
    } else if (open && event.key === "Escape") {
      used(); // closes the list only: a running answer goes on
      this.list.dismiss();
      this.draw();
    } else if (event.key === "Backspace" && this.chips.length && this.ui.input.selectionStart === 0 && this.ui.input.selectionEnd === 0) {
      used();
      this.remove(this.chips.length - 1);
    }
  }

  /** The active row becomes a chip, and its `@query` leaves the text. */
  private take(): void {
    const option = this.list.takeable();
    const at = this.list.at;
    const chip = option && chipOf(option);
    if (!chip || !at) return;
    const input = this.ui.input;
    const end = at.start + 1 + at.query.length;
    input.value = input.value.slice(0, at.start) + input.value.slice(end);
    input.setSelectionRange(at.start, at.start);
    saveDraft(input.value);
    if (!this.chips.some((c) => sameChip(c, chip))) this.chips.push(chip);
    saveChips(this.chips);
    this.list.close();
    this.drawChips();
    this.draw();
    announce(this.ui.announcer, [`Mentioned ${chip.kind === "problems" ? chip.label : `${chip.kind} ${chip.label}`}`]);
    input.focus();
  }

  private remove(index: number): void {
    const [chip] = this.chips.splice(index, 1);
    saveChips(this.chips);
    this.drawChips();
    if (chip) announce(this.ui.announcer, [`Removed the mention ${chip.label}`]);
    this.ui.input.focus();
  }

  private close(): void {
    if (!this.list.open) return;
    this.list.close();
    this.draw();
  }

  private drawChips(): void {
    const row = this.ui.mentionRow;
    row.hidden = this.chips.length === 0;
    row.replaceChildren(...this.chips.map((chip, i) => listItem(mentionChip(chip, () => this.remove(i)))));
  }

  /** The popup as the list's state says: rows, the active one, and a note. */
  private draw(): void {
    const { ui, list } = this;
    const input = ui.input;
    ui.mentionPopup.hidden = !list.open;
    if (!list.open) {
      ui.mentionList.replaceChildren();
      input.removeAttribute("aria-activedescendant");
      return;
    }
    const rows = list.items.map((item, i) => mentionOption(item, `mention-option-${i}`, i === list.active));
    ui.mentionList.replaceChildren(...rows);
    const active = rows[list.active];
    if (active) {
      input.setAttribute("aria-activedescendant", active.id);
      active.scrollIntoView({ block: "nearest" });
    } else {
      input.removeAttribute("aria-activedescendant");
    }
    const query = list.at?.query ?? "";
    let note = list.note ?? "";
    if (!note && list.pending && rows.length === 0) note = "Looking…";
    else if (!note && !list.pending && rows.length === 0) note = `Nothing to mention matches “${query}”.`;
    ui.mentionNote.textContent = note;
    ui.mentionNote.hidden = note === "";
  }
}
