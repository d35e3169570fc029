// The status bar item: which model answers, what the answers cost in tokens and how full
// the context window is. Pure.

import type { Meter } from "./context_meter";
import { iconSafe } from "./model_items";
import type { AskResult } from "./protocol";

export interface Usage {
  promptTokens: number;
  completionTokens: number;
}

export interface StatusInput {
  /** `lantern.model` as the server gets it ("" or null: not set). */
  configured: string | null;
  /** The last answer in this conversation, when there is one. */
  last?: Pick<AskResult, "model" | "usage">;
  /** The whole conversation's tokens. */
  total: Usage;
  /** How full the context window is (the view's meter), once a request was measured. */
  meter?: Pick<Meter, "label">;
}

export interface StatusView {
  text: string;
  tooltip: string;
  command: "lantern.pickModel" | "lantern.connectModel";
}

export function tokens(n: number): string {
  return n >= 1000 ? `${(n / 1000).toFixed(1)}k` : `${n}`;
}

/**
 * The model shown is the one that answered last, unless the setting now names another
 * (then the next answer comes from that one). With no model set and none that answered,
 * the item offers to connect one.
 */
export function statusView({ configured, last, total, meter }: StatusInput): StatusView {
  const setting = configured || null;
  const answered = last?.model || null;
  const model = setting && answered !== setting ? setting : (answered ?? setting);
  if (!model) {
    return {
      text: "$(lightbulb) Lantern: connect a model",
      tooltip: "Lantern has no model set. Click to connect one (a local server such as Ollama, or an OpenAI-compatible API).",
      command: "lantern.connectModel",
    };
  }
  const lines = [`Lantern asks ${model}${setting ? " (lantern.model)" : " (found on this machine: lantern.model is not set)"}.`];
  let text = `$(lightbulb) ${iconSafe(model)}`; // a name from a server: no icon of its own
  if (last && answered === model) {
    text += ` · ${tokens(last.usage.promptTokens)}↑ ${tokens(last.usage.completionTokens)}↓`;
    lines.push(`Last answer: ${last.usage.promptTokens} tokens in (sent), ${last.usage.completionTokens} out (written).`);
  } else if (last) {
    lines.push(`The last answer came from ${answered ?? "another model"}; the next comes from ${model}.`);
  }
  if (last) lines.push(`This conversation: ${total.promptTokens} tokens in, ${total.completionTokens} out.`);
  if (meter) lines.push(meter.label);
  lines.push("Click to pick another model.");
  return { text, tooltip: lines.join("\n"), command: "lantern.pickModel" };
}
