// What the model pickers show of names that come from a server (a local server's name,
// address and models, an endpoint's model list). VS Code renders `$(name)` in a quick
// pick's label, description and detail, and in the status bar, as an icon, and turns
// `[label](command:…)` in a notification into a link: such names are shown as written,
// never as icons or links. Pure.

import type { LocalServer } from "./protocol";

/** Lantern's own last item of the model picker. */
export const ENTER_MODEL = "$(edit) Enter a model name…";

export interface ModelItem {
  label: string;
  description?: string;
  /** The model's id as the server listed it; none for `ENTER_MODEL`. */
  id?: string;
}

export interface ServerItem {
  label: string;
  description: string;
  detail: string;
}

/** `text` for a place that renders `$(icon)` syntax: each `$(` escaped, so it shows as written. */
export function iconSafe(text: string): string {
  return text.replace(/\$\(/g, "\\$(");
}

/** `text` for a notification: no `[label](target)` in it can become a link (a zero-width
 * space keeps `]` and `(` apart). */
export function linkSafe(text: string): string {
  return text.replace(/\]\(/g, "]\u200b(");
}

/** The model picker's items: the endpoint's models (the current one marked), then `ENTER_MODEL`. */
export function modelItems(models: readonly string[], current: string): ModelItem[] {
  const items: ModelItem[] = models.map((id) => ({ label: iconSafe(id), description: id === current ? "current" : undefined, id }));
  items.push({ label: ENTER_MODEL });
  return items;
}

function modelsText(models: readonly string[]): string {
  if (models.length === 0) return "no models yet";
  const shown = models.slice(0, 4).join(", ");
  return `${models.length} model${models.length === 1 ? "" : "s"}: ${shown}${models.length > 4 ? ", …" : ""}`;
}

/** A local server as the connect picker shows it. */
export function serverItem(server: LocalServer): ServerItem {
  return {
    label: `$(server) ${iconSafe(server.name)}`,
    description: iconSafe(server.baseUrl),
    detail: `Running on this machine · ${iconSafe(modelsText(server.models))}`,
  };
}

/** What the notification after a pick says. */
export function pickedMessage(model: string): string {
  return `Lantern will ask ${linkSafe(model)}.`;
}
