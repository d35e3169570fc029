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

function describeTarget(name: string, args: unknown): string {
  if (typeof args !== "object" || args === null) return "(malformed arguments)";
  const a = args as Record<string, unknown>;
  const path = typeof a.path === "string" ? a.path : ".";
  if (name === "read_file") {
    const offset = typeof a.offset === "number" ? a.offset : 1;
    const limit = typeof a.limit === "number" ? Math.min(a.limit, 400) : 400;
    return `${path} · lines ${offset}–${offset + limit - 1}`;
  }
  if (name === "search") {
    const pattern = typeof a.pattern === "string" ? a.pattern : "";
    const glob = typeof a.glob === "string" ? ` (${a.glob})` : "";
    return `/${pattern}/ in ${path}${glob}`;
  }
  if (name === "list_files") {
    return typeof a.glob === "string" ? `${path} (${a.glob})` : path;
  }
  return path;
}

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
    target: describeTarget(event.name, event.arguments),
    status: event.status,
    statusText,
    detail: parts.join(" · "),
  };
}
