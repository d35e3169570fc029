// What the view asks the extension to do, each checked here: the whole state when it
// (re)loads, a question (with its @-mentions), the @ completion, Stop, an approval's answer, a reference to open, a copy, and the
// fix buttons of an error or of the setup card.

import * as vscode from "vscode";
import type { Questions } from "./ask";
import type { EditorTracker } from "./editor_tracker";
import type { MentionSuggester } from "./mention_suggest";
import { checkedChips } from "./mentions";
import type { FixAction, FromPanel } from "./protocol";
import type { Setup } from "./setup";
import type { ConversationView } from "./view";

export interface PanelParts {
  view: Pick<ConversationView, "post" | "open">;
  questions: Questions;
  editors: Pick<EditorTracker, "take" | "drop">;
  mentions: Pick<MentionSuggester, "suggest">;
  setup: Pick<Setup, "pickModel" | "connect">;
  setApiKey(): Promise<boolean>;
}

export class PanelMessages {
  constructor(private readonly parts: PanelParts) {}

  async receive(message: FromPanel): Promise<void> {
    const { view, questions, editors } = this.parts;
    if (message.type === "ready") view.post({ type: "state", state: questions.state() });
    else if (message.type === "open") await view.open(questions.turns.find((t) => t.key === message.key)?.result?.references[message.index]);
    // Asked with what the active editor shows (unless turned off or left out with the view's ×)
    // and what the user @-mentioned.
    else if (message.type === "ask" && typeof message.question === "string" && message.question.trim()) {
      questions.submit(message.question.trim(), editors.take(), checkedChips(message.mentions));
    } else if (message.type === "suggest" && Number.isSafeInteger(message.seq) && typeof message.query === "string") {
      await this.parts.mentions.suggest(message.seq, message.query);
    }
    else if (message.type === "dropContext") editors.drop();
    else if (message.type === "stop") questions.stop();
    else if (message.type === "removeQueued") questions.removeQueued(message.key);
    else if (message.type === "approve") questions.answerApproval(message.id, message.action);
    else if (message.type === "copy" && typeof message.text === "string") await vscode.env.clipboard.writeText(message.text);
    else if (message.type === "fix") await this.fix(message);
  }

  private async fix(action: FixAction): Promise<void> {
    switch (action.action) {
      case "openSetting":
        if (action.setting.startsWith("lantern.")) await vscode.commands.executeCommand("workbench.action.openSettings", action.setting);
        return;
      case "openSettings":
        await vscode.commands.executeCommand("workbench.action.openSettings", "@ext:lantern-dev.lantern");
        return;
      case "pickModel":
        return this.parts.setup.pickModel();
      case "setApiKey":
        await this.parts.setApiKey();
        return;
      case "connect":
        return this.parts.setup.connect();
      case "retry":
        this.parts.questions.retry(action.key);
        return;
    }
  }
}
