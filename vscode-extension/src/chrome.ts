// The view's parts around the conversation: the model chip, the "connect a model" card
// while no model is known, and the chip of what the next question carries from the editor.

import { currentSettings } from "./client";
import type { EditorTracker } from "./editor_tracker";
import type { PanelState } from "./protocol";

/** The model the server is set to use: `lantern.model` from the user's own settings, else
 * LANTERN_MODEL from the environment the server inherits (the server's own precedence). */
export function configuredModel(): string | null {
  const model = currentSettings().values.model;
  if (typeof model === "string" && model.trim()) return model.trim();
  return process.env.LANTERN_MODEL?.trim() || null;
}

export class Chrome {
  constructor(
    private readonly editors: Pick<EditorTracker, "chip">,
    /** Whether an API key is stored for the endpoint (the setup card says so). */
    public keySaved: boolean,
  ) {}

  /** `answered`: the model of the conversation's last answer, shown while none is set. */
  of(answered: string | null): Pick<PanelState, "model" | "setup" | "context"> {
    const model = configuredModel() ?? answered;
    const context = this.editors.chip();
    if (model) return { model, context };
    const baseUrl = currentSettings().values.baseUrl;
    return { model: null, setup: { baseUrl: typeof baseUrl === "string" ? baseUrl : "", hasKey: this.keySaved }, context };
  }
}
