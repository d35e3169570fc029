// The answer panel's script: renders what the extension posts. Markdown is rendered
// with raw HTML disabled and then sanitized; citations become links by their span.

import DOMPurify from "dompurify";
import MarkdownIt from "markdown-it";
import { activityRow } from "../src/activity";
import { expandCitations, markCitations } from "../src/citations";
import type { AskResult, FromPanel, ToolEvent, ToPanel } from "../src/protocol";

interface VsCodeApi {
  postMessage(message: unknown): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

interface Turn {
  key: string;
  question: string;
  tools: Map<string, ToolEvent>;
  answer: string;
  result?: AskResult;
  failure?: { message: string; cancelled: boolean };
  status?: string;
}

const vscode = acquireVsCodeApi();
const markdown = new MarkdownIt({ html: false, linkify: false, breaks: false });
const turns = new Map<string, Turn>();
const container = document.getElementById("turns") as HTMLElement;
const STOP_TEXT: Record<string, string> = {
  max_steps: "Stopped: step limit reached (maxSteps). The answer may be incomplete.",
  budget: "Stopped: tool output budget used up (maxToolOutputBytes). The answer may be incomplete.",
  timeout: "Stopped: the question took too long (questionTimeoutSeconds). Partial answer.",
  cancelled: "Cancelled.",
};

function send(message: FromPanel | { type: "ready" }): void {
  vscode.postMessage(message);
}

function element<K extends keyof HTMLElementTagNameMap>(tag: K, className?: string, text?: string): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function renderAnswer(turn: Turn): HTMLElement {
  const box = element("div", "answer");
  const answer = turn.result?.answer ?? turn.answer;
  const refs = turn.result?.references ?? [];
  const html = expandCitations(markdown.render(markCitations(answer, refs)), answer, refs);
  box.innerHTML = DOMPurify.sanitize(html, { ADD_ATTR: ["data-ref"], FORBID_TAGS: ["style", "img", "form", "input"] });
  return box;
}

function renderTools(turn: Turn): HTMLElement {
  const list = element("ul", "tools");
  for (const event of turn.tools.values()) {
    const row = activityRow(event);
    const item = element("li", `tool status-${row.status}`);
    item.append(element("span", "tool-name", row.tool), element("span", "tool-target", row.target));
    item.append(element("span", "tool-status", row.statusText));
    if (row.detail) item.append(element("span", "tool-detail", row.detail));
    list.append(item);
  }
  return list;
}

function renderReferences(turn: Turn): HTMLElement | undefined {
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

function render(turn: Turn): void {
  let node = document.getElementById(`turn-${turn.key}`);
  if (!node) {
    node = element("article", "turn");
    node.id = `turn-${turn.key}`;
    node.dataset.key = turn.key;
    container.append(node);
  }
  node.replaceChildren();
  node.append(element("h2", "question", turn.question));
  if (turn.tools.size > 0) node.append(renderTools(turn));
  if (turn.result?.answer || turn.answer) node.append(renderAnswer(turn));
  else if (!turn.result && !turn.failure) node.append(element("p", "thinking", turn.status === "retrying" ? "Retrying…" : "Thinking…"));
  const refs = renderReferences(turn);
  if (refs) node.append(refs);
  const stop = turn.result?.stopReason;
  if (stop && stop !== "done") {
    node.append(element("p", `stop stop-${stop}`, stop === "error" ? `Error: ${turn.result?.error ?? "unknown"}` : STOP_TEXT[stop] ?? stop));
  }
  if (turn.failure) node.append(element("p", turn.failure.cancelled ? "stop stop-cancelled" : "stop stop-error", turn.failure.message));
  node.scrollIntoView({ block: "end" });
}

window.addEventListener("message", (event: MessageEvent<ToPanel>) => {
  const message = event.data;
  if (message.type === "reset") {
    turns.clear();
    container.replaceChildren();
    return;
  }
  if (message.type === "question") {
    container.querySelector(".empty")?.remove();
    const turn: Turn = { key: message.key, question: message.question, tools: new Map(), answer: "" };
    turns.set(turn.key, turn);
    render(turn);
    return;
  }
  const turn = turns.get(message.key);
  if (!turn) return;
  if (message.type === "event") {
    const e = message.event;
    if (e.kind === "tool") turn.tools.set(e.callId, e);
    else if (e.kind === "answerDelta") turn.answer += e.text;
    else if (e.kind === "status") {
      turn.status = e.status;
      if (e.resetAnswer) turn.answer = "";
      if (e.status === "thinking") turn.answer = ""; // text before a tool call is not the answer
    }
  } else if (message.type === "result") {
    turn.result = message.result;
    for (const call of message.result.toolCalls) {
      turn.tools.set(call.id, { kind: "tool", callId: call.id, name: call.name, arguments: call.arguments, summary: call.summary, status: call.status, code: call.code, bytes: call.bytes, ms: call.ms });
    }
  } else if (message.type === "failed") {
    turn.failure = { message: message.message, cancelled: message.cancelled };
  }
  render(turn);
});

container.addEventListener("click", (event) => {
  const target = (event.target as HTMLElement).closest("a.lantern-ref[data-ref]") as HTMLElement | null;
  if (!target) return;
  event.preventDefault();
  const turn = target.closest("article.turn") as HTMLElement | null;
  if (turn?.dataset.key) send({ type: "open", key: turn.dataset.key, index: Number(target.dataset.ref) });
});

const form = document.getElementById("follow-up") as HTMLFormElement;
const input = document.getElementById("follow-up-text") as HTMLTextAreaElement;
form.addEventListener("submit", (event) => {
  event.preventDefault();
  const question = input.value.trim();
  if (question) {
    send({ type: "ask", question });
    input.value = "";
  }
});
input.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey) {
    event.preventDefault();
    form.requestSubmit();
  }
});

send({ type: "ready" });
