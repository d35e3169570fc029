// A pending approval in its turn: the prompt, its four actions as buttons (the one that
// never grants focused, so a bare Enter denies; arrow keys move between them) and the time
// left, counted down in place so the turn is not drawn again every second. Escape leaves
// it unanswered (as closing its notification does) for the question box. Answered here,
// or run out, it shows the choice and no buttons, and the focus goes to the question box.

import { formatTimeLeft } from "../src/activity";
import type { PanelApproval } from "../src/protocol";
import { button, element } from "./dom";
import { focusQuestionBox, viewHasFocus } from "./focus";
import { send } from "./host";

const answered = new Map<string, string>(); // approval id → the action picked in this view
const focused = new Set<string>(); // approvals whose first button took the focus once
let timer: number | undefined;

export function approvalSignature(approval: PanelApproval | undefined): string {
  if (!approval) return "";
  return JSON.stringify([approval.id, approval.message, approval.actions, approval.expiresAt, answered.get(approval.id) ?? ""]);
}

function moveFocus(event: KeyboardEvent, buttons: HTMLButtonElement[]): void {
  const at = buttons.indexOf(document.activeElement as HTMLButtonElement);
  if (at < 0) return;
  let to = at;
  if (event.key === "ArrowRight" || event.key === "ArrowDown") to = (at + 1) % buttons.length;
  else if (event.key === "ArrowLeft" || event.key === "ArrowUp") to = (at - 1 + buttons.length) % buttons.length;
  else if (event.key === "Home") to = 0;
  else if (event.key === "End") to = buttons.length - 1;
  else return;
  event.preventDefault();
  buttons[to].focus();
}

function settled(box: HTMLElement, text: string): void {
  const hadFocus = box.contains(document.activeElement);
  box.querySelector(".approval-actions")?.remove();
  box.querySelector(".approval-time")?.remove();
  box.classList.add("answered");
  let note = box.querySelector(".approval-answered");
  if (!note) {
    note = element("p", "approval-answered");
    box.append(note);
  }
  note.textContent = text;
  if (hadFocus) focusQuestionBox();
}

function tick(): void {
  const clocks = Array.from(document.querySelectorAll<HTMLElement>(".approval-time[data-expires]"));
  for (const clock of clocks) {
    const left = Number(clock.dataset.expires) - Date.now();
    const box = clock.closest<HTMLElement>(".approval");
    if (left <= 0 && box) settled(box, "No answer in time: Lantern does not read it.");
    else clock.textContent = formatTimeLeft(left);
  }
  if (clocks.length === 0 && timer !== undefined) {
    window.clearInterval(timer);
    timer = undefined;
  }
}

export function renderApproval(approval: PanelApproval): HTMLElement {
  const box = element("div", "approval card");
  box.dataset.id = approval.id;
  box.setAttribute("role", "group");
  const message = element("p", "approval-message", approval.message);
  message.id = `approval-${approval.id}`;
  box.setAttribute("aria-labelledby", message.id);
  box.append(message);
  const choice = answered.get(approval.id);
  if (choice !== undefined) {
    settled(box, `You chose ${choice}.`);
    return box;
  }
  const actions = element("div", "approval-actions");
  const buttons = approval.actions.map((action) => {
    const node = button("approval-action", action, () => {
      answered.set(approval.id, action);
      send({ type: "approve", id: approval.id, action });
      settled(box, `You chose ${action}.`);
    });
    if (action === approval.safe) node.dataset.safe = "true";
    return node;
  });
  buttons[0]?.classList.add("primary");
  actions.addEventListener("keydown", (event) => moveFocus(event, buttons));
  box.addEventListener("keydown", (event) => {
    if (event.key !== "Escape" || !box.contains(actions)) return;
    event.preventDefault();
    focusQuestionBox();
  });
  actions.append(...buttons);
  const clock = element("span", "approval-time", formatTimeLeft(approval.expiresAt - Date.now()));
  clock.dataset.expires = String(approval.expiresAt);
  clock.setAttribute("aria-hidden", "true"); // counted every second: not for screen readers
  box.tabIndex = -1;
  box.append(actions, clock);
  if (timer === undefined) timer = window.setInterval(tick, 1000);
  return box;
}

/** Focus the action of an approval that just appeared that never grants (Deny), unless
 * the user is typing a question (text in the focused box) or is outside the view; with
 * none known, the approval itself, so Enter picks nothing. */
export function focusNewApproval(root: HTMLElement, input: HTMLTextAreaElement): void {
  const typing = document.activeElement === input && input.value.trim() !== "";
  for (const box of Array.from(root.querySelectorAll<HTMLElement>(".approval[data-id]"))) {
    const id = box.dataset.id ?? "";
    if (focused.has(id)) continue;
    if (!box.querySelector("button.approval-action")) continue;
    const safe = box.querySelector<HTMLButtonElement>("button.approval-action[data-safe]");
    focused.add(id);
    if (!typing && viewHasFocus()) (safe ?? box).focus({ preventScroll: true });
  }
}
