// How full the model's context window is, in words: the view's meter by the model chip
// (its tooltip and accessible label), the status bar's tooltip, and the divider a
// compaction leaves in the conversation. Pure functions.

import type { Compaction, ContextFill, TurnRecord } from "./protocol";

/** The meter warns from here on, as the server does (docs/agent-loop.md#context-window). */
export const WARN_AT = 0.8;

export interface Meter {
  percent: number; // whole percent of the window used, rounded down
  fraction: number; // of the bar to fill, 0–1
  warn: boolean;
  /** The meter's tooltip and accessible label; the status bar's tooltip repeats it. */
  label: string;
}

function count(n: number): string {
  return n.toLocaleString("en-US");
}

/** "Earlier turns summarized (12,400 → 900 tokens)", or what was shortened or dropped, and why. */
export function compactionText(c: Compaction): string {
  const sizes = `${count(c.before)} → ${count(c.after)} tokens`;
  if (c.how === "summarized") return `Earlier turns summarized (${sizes})`;
  const parts: string[] = [];
  if (c.turns) parts.push(`${c.turns} earlier ${c.turns === 1 ? "turn" : "turns"} dropped`);
  if (c.outputs) parts.push(`${c.outputs} old tool output${c.outputs === 1 ? "" : "s"} shortened`);
  const done = parts.length ? parts.join(" and ") : c.how === "dropped" ? "earlier turns dropped" : "old tool outputs shortened";
  const text = `${done.charAt(0).toUpperCase()}${done.slice(1)} to fit the context window (${sizes})`;
  return c.why ? `${text}: ${c.why}` : text;
}

/** "3,120 of 8,192 tokens (38%) · window: the maxContextTokens setting"; undefined for no window. */
export function meterOf(fill: ContextFill, last?: Compaction): Meter | undefined {
  if (!(fill.window > 0)) return undefined;
  const percent = Math.floor((fill.used * 100) / fill.window);
  const warn = fill.used >= fill.window * WARN_AT;
  let line = `${count(fill.used)} of ${count(fill.window)} tokens (${percent}%) · window: ${fill.source}`;
  if (last) line += ` · last compaction: ${compactionText(last)}`;
  const label = warn ? `Context ${percent}% full: earlier turns will be summarized. ${line}` : `Context: ${line}`;
  return { percent, fraction: Math.min(1, Math.max(0, fill.used / fill.window)), warn, label };
}

/** The conversation's meter: the newest fill of its turns (the running question's latest
 * request, else the last result), with the newest compaction; undefined before any. */
export function conversationMeter(turns: readonly TurnRecord[]): Meter | undefined {
  let fill: ContextFill | undefined;
  let last: Compaction | undefined;
  for (const turn of turns) {
    if (turn.context) fill = turn.context;
    const done = turn.compactions ?? [];
    if (done.length) last = done[done.length - 1];
  }
  return fill ? meterOf(fill, last) : undefined;
}
