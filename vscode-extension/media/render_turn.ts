// One turn on screen: `article.turn[data-key]`. A turn is drawn as parts (a compaction's
// divider, question, tools, approval, answers, references, stop, error, warnings); drawing
// it again replaces only the parts whose content changed, so streaming does not reset the
// approval clock or an opened divider, and a replaced part gives the focus to the same
// control in its successor (media/focus.ts).

import { activityRow, unbrokenRanges } from "../src/activity";
import { referenceTitle } from "../src/citations";
import type { ToolEvent, TurnRecord } from "../src/protocol";
import { approvalSignature, renderApproval } from "./approval";
import { answerElement } from "./code_blocks";
import { button, element, rovingFocus } from "./dom";
import { focusIn, restoreFocus } from "./focus";
import { send } from "./host";
import { renderCompactions } from "./render_compaction";
import { renderFailure, renderStop, renderWarnings } from "./render_error";
import { turnMentions } from "./render_mentions";

interface Part {
  id: string;
  signature: string;
  build: () => HTMLElement | undefined;
}

const signatures = new WeakMap<Element, string>();

function header(turn: TurnRecord): HTMLElement {
  const head = element("div", "turn-head");
  head.append(element("h2", "question", turn.question));
  const a = turn.attachment;
  if (a) {
    const lines = a.startLine === a.endLine ? `${a.startLine}` : `${a.startLine}-${a.endLine}`;
    const chip = element("span", "chip attachment", a.label ?? `${a.path}:${lines}`);
    chip.title = a.label ? `Sent with the question: ${a.path} (${a.label})` : `Asked about ${a.path}, ${a.startLine === a.endLine ? `line ${a.startLine}` : `lines ${a.startLine}–${a.endLine}`}`;
    head.append(chip);
  }
  if (turn.mentions?.length) head.append(turnMentions(turn.mentions));
  if (turn.state === "queued") {
    const row = element("div", "queued-row");
    row.append(
      element("span", "queued-label", "Queued"),
      button("remove-queued", "Remove", () => send({ type: "removeQueued", key: turn.key }), "Remove this queued question"),
    );
    head.append(row);
  }
  return head;
}

/** The turn's tool calls, one row each: one Tab stop, the arrow keys between rows; a
 * focused row shows its whole target. */
function tools(list: readonly ToolEvent[]): HTMLElement {
  const box = element("ul", "tools");
  box.setAttribute("aria-label", "What Lantern read");
  const rows = list.map((event) => {
    const row = activityRow(event);
    const item = element("li", `tool status-${row.status}`);
    const target = element("span", "tool-target", unbrokenRanges(row.target));
    target.title = row.target;
    item.append(element("span", "tool-name", row.tool), target, element("span", "tool-status", row.statusText));
    if (row.detail) item.append(element("span", "tool-detail", row.detail));
    if (row.waited) item.append(element("span", "tool-wait", row.waited));
    return item;
  });
  box.append(...rows);
  rovingFocus(box, rows);
  return box;
}

function interrupted(text: string): HTMLElement {
  const box = element("div", "interrupted-block");
  box.append(
    element("p", "interrupted-note", "Interrupted: the server retried; the answer below replaces this"),
    answerElement(text, [], "interrupted"),
  );
  return box;
}

function progress(turn: TurnRecord): HTMLElement | undefined {
  if (turn.state === "preparing") return element("p", "preparing", "Preparing Lantern…");
  if (turn.state === "running" && !turn.answer && !turn.approval) return element("p", "thinking", "Thinking…");
  return undefined;
}

function references(turn: TurnRecord): HTMLElement | undefined {
  const refs = turn.result?.references ?? [];
  if (refs.length === 0) return undefined;
  const section = element("section", "references");
  section.append(element("h3", undefined, "References"));
  const list = element("ul");
  refs.forEach((ref, index) => {
    const lines = ref.startLine === ref.endLine ? `${ref.startLine}` : `${ref.startLine}-${ref.endLine}`;
    const label = `${ref.path || "(outside the workspace)"}:${lines}`;
    const item = element("li");
    if (ref.verified) {
      const link = element("a", "lantern-ref", label);
      link.href = "#";
      link.title = referenceTitle(ref);
      link.dataset.ref = String(index);
      item.append(link);
      if (!ref.seen) item.append(element("span", "note", " (not read by Lantern)"));
    } else {
      item.append(element("span", "lantern-ref unverified", label), element("span", "note", " unverified: not found in the workspace"));
    }
    list.append(item);
  });
  section.append(list);
  return section;
}

function parts(turn: TurnRecord): Part[] {
  const result = turn.result;
  const refs = result?.references ?? [];
  const approval = turn.state === "done" ? undefined : turn.approval;
  const warnings = turn.warnings ?? result?.warnings ?? [];
  return [
    { id: "compactions", signature: JSON.stringify(turn.compactions ?? []), build: () => renderCompactions(turn.compactions ?? []) },
    { id: "head", signature: JSON.stringify([turn.question, turn.attachment, turn.mentions, turn.state === "queued"]), build: () => header(turn) },
    { id: "tools", signature: JSON.stringify(turn.tools), build: () => (turn.tools.length ? tools(turn.tools) : undefined) },
    { id: "approval", signature: approvalSignature(approval), build: () => (approval ? renderApproval(approval) : undefined) },
    { id: "interrupted", signature: turn.interrupted ?? "", build: () => (turn.interrupted ? interrupted(turn.interrupted) : undefined) },
    { id: "progress", signature: `${turn.state}:${!turn.answer}:${!approval}`, build: () => progress(turn) },
    { id: "answer", signature: JSON.stringify([turn.answer, refs]), build: () => (turn.answer ? answerElement(turn.answer, refs) : undefined) },
    { id: "references", signature: JSON.stringify(refs), build: () => references(turn) },
    { id: "stop", signature: JSON.stringify([result?.stopReason, result?.detail, turn.failure]), build: () => renderStop(turn) },
    {
      id: "failure",
      signature: JSON.stringify([turn.failure, result?.stopReason === "error" ? [result.detail, result.error, result.errorCode] : null]),
      build: () => renderFailure(turn),
    },
    { id: "warnings", signature: JSON.stringify(warnings), build: () => renderWarnings(turn.key, warnings) },
  ];
}

/** Draw `turn` into its article (made when missing), changing only the parts that differ. */
export function renderTurn(container: HTMLElement, turn: TurnRecord, before: Element | null = null): HTMLElement {
  let node = container.querySelector<HTMLElement>(`:scope > article.turn[data-key="${CSS.escape(turn.key)}"]`);
  if (!node) {
    node = element("article", "turn");
    node.dataset.key = turn.key;
    node.id = `turn-${turn.key}`;
    container.insertBefore(node, before);
  }
  node.className = `turn state-${turn.state}${turn.state === "queued" ? " queued" : ""}`;
  node.setAttribute("aria-label", `Question: ${turn.question.length > 80 ? `${turn.question.slice(0, 80)}…` : turn.question}`);
  const old = new Map<string, HTMLElement>();
  for (const child of Array.from(node.children) as HTMLElement[]) {
    if (child.dataset.part) old.set(child.dataset.part, child);
    else child.remove();
  }
  let previous: Element | null = null;
  for (const part of parts(turn)) {
    let el = old.get(part.id);
    old.delete(part.id);
    if (!el || signatures.get(el) !== part.signature) {
      const fresh = part.build();
      if (fresh) {
        fresh.dataset.part = part.id;
        signatures.set(fresh, part.signature);
      }
      const focused = el && focusIn(el);
      if (el && fresh) el.replaceWith(fresh);
      else el?.remove();
      if (focused !== undefined) restoreFocus(fresh, focused);
      el = fresh;
    }
    if (!el) continue;
    const want: Element | null = previous ? previous.nextElementSibling : node.firstElementChild;
    if (want !== el) node.insertBefore(el, want);
    previous = el;
  }
  for (const el of old.values()) {
    const focused = focusIn(el);
    el.remove();
    if (focused !== undefined) restoreFocus(undefined, focused);
  }
  return node;
}
