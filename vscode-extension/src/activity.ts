// How one tool call reads in the answer panel. Pure functions, no VS Code API.

import type { ToolEvent, ToolStatus } from "./protocol";

export interface ActivityRow {
  tool: string;
  target: string;
  status: ToolStatus;
  statusText: string;
  detail: string; // the tool's own figures: bytes and time (without the wait for the user)
  waited: string; // "waited 12 s for you" when the call waited for an approval, else ""
}

const STATUS_TEXT: Record<ToolStatus, string> = {
  awaiting_approval: "awaiting approval",
  running: "running",
  done: "done",
  error: "refused",
  denied: "denied",
};

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** A human wait: "0.4 s", "12 s", "2 min 5 s". */
export function formatSeconds(ms: number): string {
  const seconds = Math.max(0, ms) / 1000;
  if (seconds < 1) return `${seconds.toFixed(1)} s`;
  const whole = Math.round(seconds);
  if (whole < 60) return `${whole} s`;
  const rest = whole % 60;
  return `${Math.floor(whole / 60)} min${rest ? ` ${rest} s` : ""}`;
}

/** What is left of an approval's time, e.g. "1:45 left"; "" once it is over. */
export function formatTimeLeft(ms: number): string {
  if (!(ms > 0)) return "";
  const seconds = Math.ceil(ms / 1000);
  if (seconds < 60) return `${seconds} s left`;
  return `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")} left`;
}

function statusText(event: ToolEvent): string {
  if (event.status === "denied") {
    if (event.code === "approval_timeout") return "denied (no answer in time)";
    if (event.code === "cancelled") return "cancelled";
    return "denied by you";
  }
  if (event.status === "error" && event.code === "stopped") return "stopped";
  if (event.status === "error" && event.code) return `refused: ${event.code}`;
  return STATUS_TEXT[event.status] ?? event.status;
}

/** The server renders what a call asks for (`summary`, e.g. `src/app.py · lines 1–400`), so the
 * panel, the CLI and the progress notification read alike; this adds the status and figures.
 * The time the call waited for the user is shown apart from the tool's own time. */
export function activityRow(event: ToolEvent): ActivityRow {
  const settled = event.status !== "running" && event.status !== "awaiting_approval";
  const parts: string[] = [];
  if (typeof event.bytes === "number" && settled) parts.push(formatBytes(event.bytes));
  if (typeof event.ms === "number" && settled) parts.push(`${Math.round(event.ms)} ms`);
  const waitMs = event.waitMs ?? 0;
  return {
    tool: event.name,
    target: event.summary ?? "",
    status: event.status,
    statusText: statusText(event),
    detail: parts.join(" · "),
    waited: waitMs > 0 && event.status !== "awaiting_approval" ? `waited ${formatSeconds(waitMs)} for you` : "",
  };
}

/** `text` for display in a narrow row: a number range (`1–400`) is kept on one line by word
 * joiners around its dash, which screen readers do not read; the rest may wrap anywhere. */
export function unbrokenRanges(text: string): string {
  return text.replace(/(\d)–(?=\d)/g, "$1\u2060–\u2060");
}
