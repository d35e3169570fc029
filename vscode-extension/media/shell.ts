// The view's fixed parts, made once as the script starts: the header (the page's heading
// for screen readers, model chip, context meter, Stop), the conversation that scrolls (setup card, hint, turns), the question box
// (with its @-mention chips and completion list) and the live region. Each is a landmark
// (banner, main, a named form) a screen reader can jump to. The page the extension writes
// (src/view.ts) holds only this script.

export interface Shell {
  modelChip: HTMLButtonElement;
  meter: HTMLElement; // how full the context window is: a bar and its percent
  meterFill: HTMLElement;
  meterText: HTMLElement;
  stop: HTMLButtonElement;
  scroller: HTMLElement; // the part that scrolls: setup card, hint and turns
  setup: HTMLElement;
  empty: HTMLElement;
  turns: HTMLElement; // never a live region: the announcer says what is worth hearing
  announcer: HTMLElement;
  form: HTMLFormElement;
  contextRow: HTMLElement; // the chip of what the next question carries from the editor
  mentionRow: HTMLElement; // the chips of what the user @-mentioned for the next question
  mentionPopup: HTMLElement; // the @ completion: its listbox and a note (looking, no match)
  mentionList: HTMLElement;
  mentionNote: HTMLElement;
  input: HTMLTextAreaElement;
}

/** An element with its properties (id, class, type, text…) and `aria-*` attributes. */
function part<K extends keyof HTMLElementTagNameMap>(tag: K, props: Partial<HTMLElementTagNameMap[K]>, aria: Record<string, string> = {}): HTMLElementTagNameMap[K] {
  const node = Object.assign(document.createElement(tag), props);
  for (const [name, value] of Object.entries(aria)) node.setAttribute(`aria-${name}`, value);
  return node;
}

export function shell(): Shell {
  const modelChip = part("button", { id: "model-chip", className: "chip model-chip", type: "button", textContent: "No model" });
  const stop = part("button", { id: "stop", type: "button", title: "Stop the answer", hidden: true, textContent: "Stop" }, { label: "Stop the answer" });
  // A meter, not a button: its words are in its label and tooltip (render_meter.ts).
  const meter = part("div", { id: "context-meter", className: "context-meter", hidden: true }, { valuemin: "0", valuemax: "100" });
  meter.setAttribute("role", "meter");
  const meterFill = part("span", { className: "meter-fill" });
  const meterBar = part("span", { className: "meter-bar" });
  meterBar.append(meterFill);
  const meterText = part("span", { className: "meter-text" }, { hidden: "true" });
  meter.append(meterBar, meterText);
  const header = part("header", { id: "header" });
  // The workbench shows the view's title; a screen reader gets it as the page's heading.
  header.append(part("h1", { className: "visually-hidden", textContent: "Lantern" }), modelChip, meter, stop);

  const setup = part("section", { id: "setup", className: "card", hidden: true }, { labelledby: "setup-title" });
  // The hint sits beside the turns, not among them (drawing the turns would remove it).
  const empty = part("p", { className: "empty", hidden: true });
  empty.append("Ask about the code in this workspace: type a question below, or run ", part("b", { textContent: "Lantern: Ask…" }), " from the Command Palette.");
  const turns = part("div", { id: "turns" });
  const scroller = part("main", { id: "conversation" }, { label: "Conversation" });
  scroller.append(setup, empty, turns);

  const contextRow = part("div", { id: "context-row", className: "context-row", hidden: true });
  const mentionRow = part("div", { id: "mention-row", className: "mention-row", hidden: true }, { label: "Mentioned with the next question" });
  mentionRow.setAttribute("role", "list");
  const mentionList = part("ul", { id: "mention-list", className: "mention-list" }, { label: "Mention suggestions" });
  mentionList.setAttribute("role", "listbox");
  const mentionNote = part("p", { className: "mention-note" });
  const mentionPopup = part("div", { id: "mention-popup", className: "mention-popup", hidden: true });
  mentionPopup.append(mentionList, mentionNote);
  const input = part(
    "textarea",
    { id: "follow-up-text", rows: 2, placeholder: "Ask a question about this workspace… (@ to mention)" },
    { label: "Question", autocomplete: "list", controls: "mention-list" },
  );
  const form = part("form", { id: "follow-up" }, { label: "Ask Lantern" });
  form.append(contextRow, mentionRow, mentionPopup, input, part("button", { type: "submit", textContent: "Ask" }));

  const announcer = part("div", { id: "announcer", className: "visually-hidden" }, { live: "polite", atomic: "true" });
  document.body.prepend(header, scroller, form, announcer);
  return { modelChip, meter, meterFill, meterText, stop, scroller, setup, empty, turns, announcer, form, contextRow, mentionRow, mentionPopup, mentionList, mentionNote, input };
}
