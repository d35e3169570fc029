// Connecting a model from the editor: a local server Lantern finds (Ollama, LM Studio,
// llama.cpp, vLLM), OpenAI with a key, or any OpenAI-compatible base URL; then a model
// picked from the endpoint's own list. Writes `lantern.baseUrl` / `lantern.model` to the
// user's settings (the only place Lantern takes them from).

import * as vscode from "vscode";
import type { LanguageClient } from "vscode-languageclient/node";
import { modelItems, pickedMessage, serverItem, type ModelItem } from "./model_items";
import type { LocalServer, ModelList } from "./protocol";

export interface SetupHost {
  /** The server, started (or restarted after a settings change) with the current settings. */
  client(): Promise<LanguageClient | undefined>;
  /** Ask for the API key of the endpoint now configured; false when the user backed out. */
  setApiKey(): Promise<boolean>;
  hasKey(): Promise<boolean>;
}

const config = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration("lantern");

/** A URL the server can use: http(s), with a host. */
export function checkBaseUrl(text: string): string | undefined {
  try {
    const url = new URL(text.trim());
    if (url.protocol !== "http:" && url.protocol !== "https:") return "The address must start with http:// or https://";
    if (!url.hostname) return "The address needs a host name";
    return undefined;
  } catch {
    return "Not a URL: e.g. http://localhost:8000/v1";
  }
}

interface Choice extends vscode.QuickPickItem {
  run: () => Promise<void>;
}

export class Setup {
  constructor(private readonly host: SetupHost) {}

  private async setBaseUrl(value: string): Promise<void> {
    await config().update("baseUrl", value, vscode.ConfigurationTarget.Global);
  }

  /** Connect a Model…: where the model runs. */
  async connect(): Promise<void> {
    const pick = vscode.window.createQuickPick<Choice>();
    pick.title = "Lantern: Connect a Model";
    pick.placeholder = "Where does your model run? Looking for local servers…";
    pick.busy = true;
    pick.ignoreFocusOut = true;
    const fixed: Choice[] = [
      {
        label: "$(key) OpenAI",
        detail: "api.openai.com with your API key",
        run: async () => {
          await this.setBaseUrl("");
          if (!(await this.host.hasKey()) && !(await this.host.setApiKey())) return;
          await this.pickModel();
        },
      },
      {
        label: "$(globe) Another OpenAI-compatible server…",
        detail: "vLLM, llama.cpp, LM Studio, DeepSeek, a gateway: enter its base URL",
        run: () => this.enterBaseUrl(),
      },
    ];
    pick.items = fixed;
    pick.show();
    const chosen = new Promise<Choice | undefined>((resolve) => {
      pick.onDidAccept(() => resolve(pick.selectedItems[0]));
      pick.onDidHide(() => resolve(undefined));
    });
    void this.localServers().then((servers) => {
      const found: Choice[] = servers.map((s) => ({
        ...serverItem(s),
        run: async () => {
          await this.setBaseUrl(s.baseUrl);
          await this.pickModel(s.models);
        },
      }));
      pick.items = [...found, ...fixed];
      pick.busy = false;
      pick.placeholder = found.length ? "Where does your model run?" : "Where does your model run? (no local server found: Ollama, LM Studio, llama.cpp, vLLM)";
    });
    const choice = await chosen;
    pick.dispose();
    await choice?.run();
  }

  private async localServers(): Promise<LocalServer[]> {
    const client = await this.host.client();
    if (!client) return [];
    try {
      const answer = await client.sendRequest<{ servers: LocalServer[] }>("lantern/localServers", {});
      return Array.isArray(answer?.servers) ? answer.servers : [];
    } catch {
      return [];
    }
  }

  private async enterBaseUrl(): Promise<void> {
    const current = config().get<string>("baseUrl") ?? "";
    const value = await vscode.window.showInputBox({
      title: "Lantern: Base URL",
      prompt: "The OpenAI-compatible address of your model server, usually ending in /v1",
      value: current || "http://localhost:8000/v1",
      ignoreFocusOut: true,
      validateInput: (text) => checkBaseUrl(text),
    });
    if (value === undefined) return;
    await this.setBaseUrl(new URL(value.trim()).href);
    const key = await vscode.window.showQuickPick(["No API key needed", "Set an API key…"], {
      title: "Lantern: does this server need an API key?",
      ignoreFocusOut: true,
    });
    if (key === undefined) return;
    if (key !== "No API key needed" && !(await this.host.setApiKey())) return;
    await this.pickModel();
  }

  /** Pick Model…: the endpoint's models, the current one marked; `known` skips asking the server. */
  async pickModel(known?: string[]): Promise<void> {
    const current = config().get<string>("model") ?? "";
    let models = known;
    let failure: string | undefined;
    if (!models) {
      const answer = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Window, title: "Lantern: listing the endpoint's models" },
        () => this.modelList(),
      );
      models = answer.models;
      if (answer.detail) failure = answer.detail.summary || answer.detail.message;
      else if (models.length === 0) failure = `${answer.baseUrl || "The endpoint"} lists no models`;
    }
    const items: ModelItem[] = modelItems(models, current);
    const picked = await vscode.window.showQuickPick(items, {
      title: "Lantern: Pick Model",
      placeHolder: failure ? `Could not list the models: ${failure}` : "The model Lantern asks",
      ignoreFocusOut: true,
    });
    if (!picked) return;
    let model = picked.id; // none: the last item, ENTER_MODEL
    if (model === undefined) {
      const typed = await vscode.window.showInputBox({
        title: "Lantern: Model",
        prompt: "The model id the endpoint knows, e.g. gpt-4o-mini or qwen2.5-coder",
        value: current,
        ignoreFocusOut: true,
        validateInput: (text) => (text.trim() ? undefined : "Enter a model id"),
      });
      if (!typed?.trim()) return;
      model = typed.trim();
    }
    await config().update("model", model, vscode.ConfigurationTarget.Global);
    void vscode.window.showInformationMessage(pickedMessage(model));
  }

  private async modelList(): Promise<ModelList> {
    const client = await this.host.client();
    if (!client) return { baseUrl: "", models: [], detail: { code: "no_server", message: "Lantern's server did not start", summary: "Lantern's server did not start", fixes: [] } };
    try {
      return await client.sendRequest<ModelList>("lantern/models", {});
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      return { baseUrl: "", models: [], detail: { code: "failed", message, summary: message, fixes: [] } };
    }
  }
}
