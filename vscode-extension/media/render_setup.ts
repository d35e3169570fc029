// The header's model chip, and the empty view: a "connect a model" card while no model is
// set, else a short hint. Plain words and buttons; no command lines.

import type { ContextChip, SetupState } from "../src/protocol";
import { button, element } from "./dom";
import { send } from "./host";
import type { Shell } from "./shell";

export function renderModelChip(shell: Shell, model: string | null): void {
  const chip = shell.modelChip;
  chip.classList.toggle("no-model", !model);
  chip.textContent = model ?? "No model";
  const label = model ? `Model: ${model}. Pick another model` : "No model. Pick a model";
  chip.setAttribute("aria-label", label);
  chip.title = label;
}

let shownContext = "";

/** Above the question box: what the next question carries from the editor, with a × to
 * leave it out of that question. */
export function renderContextChip(shell: Shell, chip: ContextChip | null): void {
  const key = JSON.stringify(chip);
  if (key === shownContext) return; // drawn again only when it changes: the × keeps the focus
  shownContext = key;
  const row = shell.contextRow;
  row.hidden = !chip;
  if (!chip) {
    row.replaceChildren();
    return;
  }
  const label = element("span", "chip attachment context-chip", chip.label);
  label.title = `Sent with the next question: ${chip.title}`;
  label.setAttribute("aria-label", label.title);
  const drop = button("context-drop", "×", () => send({ type: "dropContext" }), "Leave the editor context out of the next question");
  row.replaceChildren(label, drop);
}

function setupCard(setup: SetupState): HTMLElement[] {
  const title = element("h2", "setup-title", "Connect a model");
  title.id = "setup-title";
  const what = element(
    "p",
    "setup-text",
    "Lantern answers with a language model you choose: a local server such as Ollama, LM Studio or llama.cpp, " +
      "or an OpenAI-compatible API (OpenAI or another provider) with an API key.",
  );
  const where = element("p", "setup-status");
  if (setup.baseUrl) where.textContent = `Endpoint: ${setup.baseUrl} (lantern.baseUrl). No model is chosen yet (lantern.model).`;
  else where.textContent = "No endpoint or model is set yet (lantern.baseUrl, lantern.model).";
  if (setup.hasKey) where.textContent += " An API key is set.";
  const actions = element("div", "setup-actions");
  actions.append(
    button("setup-action primary", "Connect a Model…", () => send({ type: "fix", action: "connect" })),
    button("setup-action", "Set API Key…", () => send({ type: "fix", action: "setApiKey" })),
    button("setup-action", "Open Settings", () => send({ type: "fix", action: "openSettings" })),
  );
  return [title, what, where, actions];
}

let shownSetup = "";

/** The setup card when `setup` is present; else the hint while there are no turns. */
export function renderEmptyState(shell: Shell, setup: SetupState | undefined, hasTurns: boolean): void {
  const key = setup ? JSON.stringify(setup) : "";
  if (key !== shownSetup) {
    // Drawn again only when it changes, so a focused button keeps the focus.
    shownSetup = key;
    shell.setup.replaceChildren(...(setup ? setupCard(setup) : []));
  }
  shell.setup.hidden = !setup;
  shell.empty.hidden = setup !== undefined || hasTurns;
}
