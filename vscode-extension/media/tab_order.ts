// The view's Tab order, which is not the page's: the question box sits at the bottom but
// comes first. Tab goes question box → Ask → Stop → the box's chips → the header (model)
// → the conversation's controls in reading order (tool rows, links, Copy, Retry…) → the
// buttons of a pending approval, and round again; Shift+Tab goes back. A key another
// handler took (the question box's own completion) is left alone, and so is Tab from a
// control outside the order (the browser moves on from there).

import type { Shell } from "./shell";

/** The controls of the view, in groups, each in page order. */
export interface TabGroups<T> {
  box: T[]; // the question box, Ask, Stop
  boxRest: T[]; // the rest of the question box's form (chips and their ×)
  header: T[];
  conversation: T[];
  approvals: T[]; // the buttons of pending approvals
}

export function tabOrder<T>(groups: TabGroups<T>): T[] {
  return [...groups.box, ...groups.boxRest, ...groups.header, ...groups.conversation, ...groups.approvals];
}

/** Where Tab (or Shift+Tab, `back`) goes from `current`: the next stop, round from the last
 * to the first; the first (last) when nothing has the focus; undefined when `current` is
 * not a stop or there are none (the browser's own order then). */
export function nextStop<T>(order: readonly T[], current: T | null, back: boolean): T | undefined {
  if (order.length === 0) return undefined;
  if (current === null) return back ? order[order.length - 1] : order[0];
  const at = order.indexOf(current);
  if (at < 0) return undefined;
  return order[(at + (back ? order.length - 1 : 1)) % order.length];
}

const TABBABLE = "a[href], button, textarea, input, select, summary, [tabindex]";

function usable(el: HTMLElement): boolean {
  return el.tabIndex >= 0 && !(el as HTMLButtonElement).disabled && el.getClientRects().length > 0;
}

function tabbable(root: Element): HTMLElement[] {
  return Array.from(root.querySelectorAll<HTMLElement>(TABBABLE)).filter(usable);
}

function groups(ui: Shell): TabGroups<HTMLElement> {
  const ask = ui.form.querySelector<HTMLElement>('button[type="submit"]');
  const box = [ui.input, ask, ui.stop].filter((el): el is HTMLElement => el !== null && usable(el));
  const isApproval = (el: HTMLElement): boolean => el.matches(".approval button.approval-action");
  const inConversation = tabbable(ui.scroller);
  const header = ui.stop.parentElement;
  return {
    box,
    boxRest: tabbable(ui.form).filter((el) => !box.includes(el)),
    header: header ? tabbable(header).filter((el) => el !== ui.stop) : [],
    conversation: inConversation.filter((el) => !isApproval(el)),
    approvals: inConversation.filter(isApproval),
  };
}

/** Tab and Shift+Tab move through the view in `tabOrder`. */
export function installTabOrder(ui: Shell): void {
  document.addEventListener("keydown", (event) => {
    if (event.key !== "Tab" || event.defaultPrevented || event.ctrlKey || event.altKey || event.metaKey) return;
    const active = document.activeElement;
    const current = active === null || active === document.body ? null : (active as HTMLElement);
    const next = nextStop(tabOrder(groups(ui)), current, event.shiftKey);
    if (!next) return;
    event.preventDefault();
    next.focus();
  });
}
