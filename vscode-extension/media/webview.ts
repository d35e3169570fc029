// The conversation view's script: draws what the extension posts and sends back what the
// user does. The extension owns the conversation; this keeps a copy (src/panel_model.ts)
// and applies streamed events to it with the same reducer (src/turns.ts).

import { conversationMeter } from "../src/context_meter";
import { PanelModel, type PanelChange } from "../src/panel_model";
import type { ToPanel } from "../src/protocol";
import { announce } from "./announcer";
import { focusNewApproval } from "./approval";
import { setQuestionBox } from "./focus";
import { Mentions } from "./mentions";
import { savedDraft, saveDraft, send } from "./host";
import { renderMeter } from "./render_meter";
import { renderTurn } from "./render_turn";
import { renderContextChip, renderEmptyState, renderModelChip } from "./render_setup";
import { Follower } from "./scroll";
import { shell } from "./shell";
import { installTabOrder } from "./tab_order";

const ui = shell();
setQuestionBox(ui.input);
installTabOrder(ui);
const model = new PanelModel();
const follower = new Follower(ui.scroller);
const mentions = new Mentions(ui);

function drawTurns(change: PanelChange): void {
  if (change.all) {
    const keep = new Set(model.turns.map((t) => t.key));
    for (const node of Array.from(ui.turns.children) as HTMLElement[]) {
      if (!keep.has(node.dataset.key ?? "")) node.remove();
    }
    // In the conversation's order: each turn before the next one's article.
    let next: Element | null = null;
    for (const turn of [...model.turns].reverse()) {
      const node = renderTurn(ui.turns, turn, next);
      if (node.nextElementSibling !== next) ui.turns.insertBefore(node, next);
      next = node;
    }
    return;
  }
  for (const key of change.removed) ui.turns.querySelector(`:scope > article.turn[data-key="${CSS.escape(key)}"]`)?.remove();
  for (const key of new Set(change.turns)) {
    const turn = model.turn(key);
    if (turn) renderTurn(ui.turns, turn);
  }
}

function drawChrome(): void {
  renderModelChip(ui, model.model);
  renderMeter(ui, conversationMeter(model.turns));
  renderContextChip(ui, model.context);
  renderEmptyState(ui, model.setup, model.turns.length > 0);
  ui.stop.hidden = !model.busy;
}

const FOLLOW_RANK = { none: 0, newest: 1, new: 2 } as const;
let pending: PanelChange | undefined;

function merge(a: PanelChange, b: PanelChange): PanelChange {
  return {
    all: a.all || b.all,
    turns: [...a.turns, ...b.turns],
    removed: [...a.removed, ...b.removed],
    follow: FOLLOW_RANK[b.follow] > FOLLOW_RANK[a.follow] ? b.follow : a.follow,
    announce: [...a.announce, ...b.announce],
  };
}

function flush(): void {
  const change = pending;
  pending = undefined;
  if (!change) return;
  drawTurns(change);
  drawChrome();
  focusNewApproval(ui.turns, ui.input);
  if (change.follow === "new") follower.jump();
  else if (change.follow === "newest") follower.changed();
  announce(ui.announcer, change.announce);
}

/** Apply at once; draw once per frame, so a fast stream of chunks is drawn as one change. */
function receive(message: ToPanel): void {
  const change = model.apply(message);
  const first = pending === undefined;
  pending = pending ? merge(pending, change) : change;
  if (!first) return;
  requestAnimationFrame(flush);
  window.setTimeout(flush, 200); // a hidden view gets no frames: draw anyway
}

window.addEventListener("message", (event: MessageEvent<ToPanel>) => {
  const message = event.data;
  if (message?.type === "focus") ui.input.focus();
  else if (message?.type === "suggestions") mentions.receive(message);
  else if (message && typeof message === "object" && typeof message.type === "string") receive(message);
});

// Reference links, in answers and in References: opened by the extension, which checks them.
ui.turns.addEventListener("click", (event) => {
  const target = (event.target as HTMLElement).closest<HTMLElement>("a.lantern-ref[data-ref]");
  if (!target) return;
  event.preventDefault();
  const turn = target.closest<HTMLElement>("article.turn");
  if (turn?.dataset.key) send({ type: "open", key: turn.dataset.key, index: Number(target.dataset.ref) });
});

ui.modelChip.addEventListener("click", () => send({ type: "fix", action: "pickModel" }));
ui.stop.addEventListener("click", () => send({ type: "stop" }));

// The question box: Enter asks, Shift+Enter is a new line. The text is cleared only when it
// is sent (the extension queues it behind a running answer), and kept across a reload.
ui.input.value = savedDraft();

/** The box as tall as its text, or, empty, as its placeholder (which a narrow view wraps). */
function fitInput(): void {
  const empty = ui.input.value === "";
  if (empty) ui.input.value = ui.input.placeholder; // measured as text; no input event
  ui.input.style.height = "auto";
  ui.input.style.height = `${Math.min(ui.input.scrollHeight + 2, 200)}px`;
  if (empty) ui.input.value = "";
}

ui.form.addEventListener("submit", (event) => {
  event.preventDefault();
  const question = ui.input.value.trim();
  if (!question) return;
  send({ type: "ask", question, mentions: mentions.chips });
  mentions.sent();
  ui.input.value = "";
  saveDraft("");
  fitInput();
  follower.jump();
});
ui.input.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    ui.form.requestSubmit();
  }
});
ui.input.addEventListener("input", () => {
  saveDraft(ui.input.value);
  fitInput();
});
fitInput();
window.addEventListener("resize", fitInput); // a narrower view wraps the text onto more lines
renderModelChip(ui, null);

send({ type: "ready" });
