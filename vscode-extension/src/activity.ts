// How one tool call reads in the answer panel. Pure functions, no VS Code API.

import type { ToolEvent, ToolStatus } from "./protocol";

export interface ActivityRow {
  tool: string;
  target: string;
  status: ToolStatus;
  statusText: string;
  detail: string;
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

/** The server renders what a call asks for (`summary`, e.g. `src/app.py · lines 1–400`), so the
 * panel, the CLI and the progress notification read alike; this adds the status and figures. */
export function activityRow(event: ToolEvent): ActivityRow {
  let statusText = STATUS_TEXT[event.status] ?? event.status;
  if (event.status === "denied") {
    statusText = event.code === "approval_timeout" ? "denied (no answer in time)" : "denied by you";
  } else if (event.status === "error" && event.code) {
    statusText = `refused: ${event.code}`;
  }
  const parts: string[] = [];
  if (typeof event.bytes === "number" && event.status !== "running") parts.push(formatBytes(event.bytes));
  if (typeof event.ms === "number" && event.status !== "running") parts.push(`${Math.round(event.ms)} ms`);
  return {
    tool: event.name,
    target: event.summary ?? "",
    status: event.status,
    statusText,
    detail: parts.join(" · "),
  };
}
