// The view's fixed parts. The extension's HTML provides them (src/view.ts); any that are
// missing are made here, so the view works with an older page too.

import { element } from "./dom";

export interface Shell {
  header: HTMLElement;
  modelChip: HTMLButtonElement;
  stop: HTMLButtonElement;
  scroller: HTMLElement; // the part that scrolls: setup card, hint and turns
  setup: HTMLElement;
  empty: HTMLElement;
  turns: HTMLElement;
  announcer: HTMLElement;
  form: HTMLFormElement;
  contextRow: HTMLElement; // the chip of what the next question carries from the editor
  input: HTMLTextAreaElement;
}

function byId<T extends HTMLElement>(id: string, make: () => T): T {
  const found = document.getElementById(id);
  if (found) return found as T;
  const made = make();
  made.id = id;
  return made;
}

export function shell(): Shell {
  const body = document.body;
  const header = byId("header", () => {
    const h = element("header");
    body.prepend(h);
    return h;
  });
  const modelChip = byId("model-chip", () => {
    const b = element("button", "chip", "No model");
    b.type = "button";
    header.append(b);
    return b;
  });
  const stop = byId("stop", () => {
    const b = element("button", undefined, "Stop");
    b.type = "button";
    b.hidden = true;
    header.append(b);
    return b;
  });
  const turns = byId("turns", () => {
    const m = element("div");
    header.after(m);
    return m;
  });
  // `#turns` is never a live region: the announcer says what is worth hearing.
  turns.removeAttribute("aria-live");
  turns.removeAttribute("role");
  const scroller = byId("conversation", () => {
    const m = element("div");
    turns.before(m);
    m.append(turns);
    return m;
  });
  const setup = byId("setup", () => {
    const s = element("section");
    s.hidden = true;
    scroller.prepend(s);
    return s;
  });
  const empty =
    (scroller.querySelector(".empty") as HTMLElement | null) ??
    (() => {
      const p = element("p", "empty", "Ask about the code in this workspace: type a question below, or run Lantern: Ask… from the Command Palette.");
      setup.after(p);
      return p;
    })();
  // The hint sits beside the turns, not among them (drawing the turns would remove it).
  if (turns.contains(empty)) turns.before(empty);
  const form = byId("follow-up", () => {
    const f = element("form");
    scroller.after(f);
    return f;
  });
  const input = byId("follow-up-text", () => {
    const t = element("textarea");
    t.rows = 2;
    t.setAttribute("aria-label", "Question");
    form.prepend(t);
    return t;
  });
  const contextRow = byId("context-row", () => {
    const d = element("div", "context-row");
    d.hidden = true;
    form.prepend(d);
    return d;
  });
  const announcer = byId("announcer", () => {
    const d = element("div", "visually-hidden");
    body.append(d);
    return d;
  });
  announcer.setAttribute("aria-live", "polite");
  announcer.setAttribute("aria-atomic", "true");
  return { header, modelChip, stop, scroller, setup, empty, turns, announcer, form, contextRow, input };
}
