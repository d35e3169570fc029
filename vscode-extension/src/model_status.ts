// Which model answers, shown in two places: the view's header (the model chip, or the
// "connect a model" card) and the status bar item, shown once the server has started
// (before that Lantern is not running in this window). Shown again when the server, the
// settings, an answer, the conversation or the API key change.

import * as vscode from "vscode";
import type { Questions } from "./ask";
import { configuredModel, type Chrome } from "./chrome";
import type { Server } from "./client";
import { statusView } from "./status";
import type { ConversationView } from "./view";

export class ModelStatus implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 100);
  private readonly disposables: vscode.Disposable[];

  constructor(
    private readonly view: Pick<ConversationView, "post">,
    private readonly server: Server,
    private readonly questions: Pick<Questions, "usage" | "onDidAnswer" | "onDidMeasure">,
    private readonly chrome: Chrome,
  ) {
    this.disposables = [
      this.item,
      server.onDidChange(() => this.refresh()),
      questions.onDidAnswer(() => this.refresh()),
      questions.onDidMeasure(() => this.refresh()),
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (!event.affectsConfiguration("lantern")) return;
        this.refresh();
        // A new endpoint or server command restarts the server; other settings are pushed to it.
        void server.settingsChanged(event).then(() => this.refresh());
      }),
    ];
  }

  refresh(): void {
    const { last, total, meter } = this.questions.usage();
    this.view.post({ type: "model", ...this.chrome.of(last?.model ?? null) });
    if (!this.server.client) return;
    const shown = statusView({ configured: configuredModel(), last, total, meter });
    this.item.text = shown.text;
    this.item.tooltip = shown.tooltip;
    this.item.command = shown.command;
    this.item.show();
  }

  /** A key was stored or removed: the setup card says whether one is set. */
  async keyChanged(): Promise<void> {
    this.chrome.keySaved = await this.server.hasKey();
    this.refresh();
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
