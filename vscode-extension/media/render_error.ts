// A failure in its turn: `.error-card` with what happened, the provider's words, one line
// per fix (setting names, never command-line flags) and buttons that act on them.

import { failureView, stopText, type FixButton, type FixView } from "../src/fixes";
import type { AskResult, Detail, TurnRecord } from "../src/protocol";
import { button, element } from "./dom";
import { send } from "./host";

function fixButton(fix: FixButton): HTMLButtonElement {
  const label = fix.setting ? `${fix.label} ${fix.setting}` : undefined;
  const node = button("fix-action", fix.label, () => send({ type: "fix", ...fix.action }), label);
  if (fix.setting) node.dataset.setting = fix.setting;
  if (fix.label === "Retry") node.classList.add("primary");
  return node;
}

function fixList(view: FixView, into: HTMLElement): void {
  if (view.lines.length > 0) {
    const list = element("ul", "error-fixes");
    for (const line of view.lines) list.append(element("li", "error-fix", line));
    into.append(list);
  }
  if (view.buttons.length > 0) {
    const actions = element("div", "fix-actions");
    actions.append(...view.buttons.map(fixButton));
    into.append(actions);
  }
}

function errorCard(view: FixView): HTMLElement {
  const card = element("div", "error-card card");
  card.setAttribute("role", "group");
  card.setAttribute("aria-label", "Lantern could not answer");
  card.append(element("p", "error-summary", view.summary));
  if (view.providerMessage) {
    const said = element("p", "provider-message");
    said.append(element("span", "provider-label", "The model server said: "), element("q", undefined, view.providerMessage));
    card.append(said);
  }
  fixList(view, card);
  return card;
}

/** A failure or an error result as a card; undefined when the turn did not fail. */
export function renderFailure(turn: TurnRecord): HTMLElement | undefined {
  const { failure, result } = turn;
  if (failure) {
    if (failure.cancelled) return element("p", "stop stop-cancelled", failure.message);
    return errorCard(failureView({ key: turn.key, message: failure.message, retry: true }));
  }
  if (result?.stopReason === "error") {
    return errorCard(failureView({ key: turn.key, detail: result.detail, message: result.error, code: result.errorCode, retry: true }));
  }
  return undefined;
}

/** The stop line of a stop other than done/error, with the fixes a filtered or cut answer offers. */
export function renderStop(turn: TurnRecord): HTMLElement | undefined {
  const result: AskResult | undefined = turn.result;
  if (!result || result.stopReason === "done" || result.stopReason === "error" || turn.failure) return undefined;
  const box = element("div", "stop-block");
  box.append(element("p", `stop stop-${result.stopReason}`, stopText(result)));
  if (result.detail && result.detail.fixes.length > 0) {
    fixList(failureView({ key: turn.key, detail: result.detail, retry: false }), box);
  }
  return box;
}

/** What to know although the question went on (the endpoint cut the prompt): shown as soon
 * as it is said, each with its fixes in settings' words and their buttons. */
export function renderWarnings(key: string, warnings: readonly Detail[]): HTMLElement | undefined {
  if (warnings.length === 0) return undefined;
  const box = element("div", "warnings");
  for (const warning of warnings) {
    const view = failureView({ key, detail: warning, retry: false });
    const card = element("div", "warning-card card");
    card.setAttribute("role", "group");
    card.setAttribute("aria-label", "Lantern's warning");
    card.append(element("p", "warning-summary", `Warning: ${view.summary}`));
    fixList(view, card);
    box.append(card);
  }
  return box;
}
