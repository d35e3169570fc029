// Starting, restarting and talking to `lantern serve`.

import * as fs from "fs";
import * as path from "path";
import * as vscode from "vscode";
import { LanguageClient, RevealOutputChannelOn, State, type LanguageClientOptions, type ServerOptions } from "vscode-languageclient/node";
import type { ServerInfo } from "./protocol";
import { serverCommand, toServerOptions } from "./settings";

const SECRET_KEY = "lantern.apiKey";
const INSTALL_HINT =
  "Install the server with `pip install lantern` (Python 3.11+), or set `lantern.server.command` to where it is.";

/** Whether `command` can be run: an existing file, or a name found on PATH. */
function findExecutable(command: string): boolean {
  if (command.includes(path.sep)) return fs.existsSync(command);
  const dirs = (process.env.PATH ?? "").split(path.delimiter).filter(Boolean);
  const exts = process.platform === "win32" ? (process.env.PATHEXT ?? ".EXE;.CMD").split(";") : [""];
  return dirs.some((dir) => exts.some((ext) => fs.existsSync(path.join(dir, command + ext))));
}

export class Server implements vscode.Disposable {
  client: LanguageClient | undefined;
  info: ServerInfo | undefined;
  private told = false;
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;

  constructor(
    private readonly context: vscode.ExtensionContext,
    readonly output: vscode.LogOutputChannel,
  ) {}

  get running(): boolean {
    return this.client?.state === State.Running;
  }

  async start(): Promise<LanguageClient | undefined> {
    const config = vscode.workspace.getConfiguration("lantern");
    const { command, args, problem } = serverCommand(config.get("server.command"));
    if (problem) this.output.warn(problem);
    if (!findExecutable(command)) {
      this.tellOnce(`Lantern could not start its server: \`${command}\` was not found. ${INSTALL_HINT}`);
      return undefined;
    }
    const apiKey = await this.context.secrets.get(SECRET_KEY);
    const env: NodeJS.ProcessEnv = { ...process.env };
    if (apiKey) env.LANTERN_API_KEY = apiKey;
    const serverOptions: ServerOptions = { command, args, options: { env } };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [],
      outputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationOptions: toServerOptions((name) => config.get(name)),
      synchronize: { configurationSection: "lantern" },
    };
    const client = new LanguageClient("lantern", "Lantern", serverOptions, clientOptions);
    this.client = client;
    try {
      await client.start();
    } catch (error) {
      this.client = undefined;
      this.tellOnce(`Lantern could not start its server (\`${[command, ...args].join(" ")}\`): ${String(error)}. ${INSTALL_HINT}`);
      return undefined;
    }
    this.told = false;
    client.onDidChangeState(() => this.changed.fire());
    try {
      this.info = await client.sendRequest<ServerInfo>("lantern/info", {});
    } catch {
      this.info = undefined;
    }
    this.changed.fire();
    return client;
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) {
      try {
        await client.stop(5000);
      } catch (error) {
        this.output.warn(`stopping the server: ${String(error)}`);
      }
    }
  }

  async restart(): Promise<LanguageClient | undefined> {
    await this.stop();
    this.told = false;
    return this.start();
  }

  async ensure(): Promise<LanguageClient | undefined> {
    return this.running ? this.client : this.start();
  }

  async setApiKey(key: string): Promise<void> {
    if (key) await this.context.secrets.store(SECRET_KEY, key);
    else await this.context.secrets.delete(SECRET_KEY);
    await this.restart();
  }

  private tellOnce(message: string): void {
    this.output.error(message);
    if (this.told) return;
    this.told = true;
    void vscode.window.showErrorMessage(message, "Open Settings").then((choice) => {
      if (choice) void vscode.commands.executeCommand("workbench.action.openSettings", "lantern.server.command");
    });
  }

  dispose(): void {
    void this.stop();
    this.changed.dispose();
  }
}
