// Starting, restarting and talking to `lantern serve`: the bundled server (or the
// user's own command), settings filtered by the trust rules, the API key bound to
// the endpoint it was saved for.

import * as fs from "fs";
import * as path from "path";
import * as vscode from "vscode";
import {
  DidChangeConfigurationNotification,
  LanguageClient,
  RevealOutputChannelOn,
  State,
  type LanguageClientOptions,
  type ServerOptions,
  type StaticFeature,
} from "vscode-languageclient/node";
import { unsupportedHost } from "./host";
import { lanternCapabilities } from "./navigate";
import { answerNavigation, navigationEnabled } from "./navigation";
import type { ServerInfo } from "./protocol";
import { candidates, findPython, insideFolders, prepareServer, probe } from "./python";
import { SERVER_SETTINGS, serverCommand, toServerOptions } from "./settings";
import { ADD_ONLY, keyFor, LOWER_ONLY, originOf, parseStoredKey, trustedSettings, USER_ONLY, userOnlyKeysIn, type Trusted } from "./trust";

const SECRET_KEY = "lantern.apiKey";

/** Server settings the trust rules leave alone: they follow VS Code's usual precedence. */
const RULED = new Set<string>([...USER_ONLY, ...LOWER_ONLY, ...ADD_ONLY]);
const UNRULED = SERVER_SETTINGS.filter((name) => !RULED.has(name));

/** The settings Lantern uses in this window (or for one folder of it, whose own settings
 * may narrow them further), with workspace attempts to widen them removed. */
export function currentSettings(scope?: vscode.Uri): Trusted {
  const config = vscode.workspace.getConfiguration("lantern", scope);
  return trustedSettings((name) => config.inspect(name), UNRULED);
}

/** User-only settings that this workspace's settings files try to set (VS Code drops them). */
async function workspaceAttempts(): Promise<string[]> {
  const files = (vscode.workspace.workspaceFolders ?? []).map((f) => vscode.Uri.joinPath(f.uri, ".vscode", "settings.json"));
  if (vscode.workspace.workspaceFile?.scheme === "file") files.push(vscode.workspace.workspaceFile);
  const found = new Set<string>();
  for (const file of files) {
    try {
      const text = new TextDecoder().decode(await vscode.workspace.fs.readFile(file));
      for (const key of userOnlyKeysIn(text)) found.add(key);
    } catch {
      // no settings file
    }
  }
  return [...found];
}

/** Folders whose files the opened repository controls: its folders and the workspace file's. */
function repositoryFolders(): string[] {
  const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === "file").map((f) => f.uri.fsPath);
  const file = vscode.workspace.workspaceFile;
  if (file?.scheme === "file") folders.push(path.dirname(file.fsPath));
  return folders;
}

/**
 * The Python extension's interpreter, when it is the user's choice. A repository can
 * choose it too, in a trusted workspace: `python.defaultInterpreterPath` in its
 * settings, or a committed `.venv` the Python extension selects by itself. Neither
 * is run: Lantern then looks on PATH.
 */
async function pythonExtensionInterpreter(output: vscode.LogOutputChannel): Promise<string | undefined> {
  const ext = vscode.extensions.getExtension("ms-python.python");
  if (!ext || !vscode.workspace.isTrusted) return undefined;
  const setting = vscode.workspace.getConfiguration("python").inspect("defaultInterpreterPath");
  if (setting?.workspaceValue !== undefined || setting?.workspaceFolderValue !== undefined) {
    output.warn("not using the Python extension's interpreter: this workspace's settings choose it (python.defaultInterpreterPath)");
    return undefined;
  }
  try {
    const api = (ext.isActive ? ext.exports : await ext.activate()) as {
      environments?: { getActiveEnvironmentPath?: () => { path?: string } };
    };
    const chosen = api?.environments?.getActiveEnvironmentPath?.()?.path || undefined;
    if (chosen && insideFolders(chosen, repositoryFolders())) {
      output.warn("not using the Python extension's interpreter: it lies inside the opened folder, so the repository chose it");
      return undefined;
    }
    return chosen;
  } catch (error) {
    output.warn(`the Python extension did not name an interpreter: ${String(error)}`);
    return undefined;
  }
}

/** What a running server was started with: a change to any of it needs a new server. */
function launchKey(trusted: Trusted, keyGeneration: number): string {
  return JSON.stringify([trusted.values["server.command"] ?? null, trusted.values.baseUrl ?? null, keyGeneration]);
}

/** Tells the server this client shows approvals in its own view (`lantern/approve`), a
 * failed question's `detail` itself (so the server sends no `window/showMessage` for it),
 * and, while `lantern.navigation` is on when the server starts, which `lantern/navigate`
 * ops it answers (the log says which it is). */
function lanternFeatures(output: vscode.LogOutputChannel): StaticFeature {
  return {
    fillClientCapabilities(capabilities) {
      const navigation = navigationEnabled();
      output.info(navigation ? "the server may ask lantern/navigate (lantern.navigation is on)" : "lantern.navigation is off: the server is not offered lantern/navigate");
      capabilities.experimental = { ...(capabilities.experimental ?? {}), lantern: lanternCapabilities(navigation) };
    },
    initialize() {},
    getState: () => ({ kind: "static" }),
    clear() {},
  };
}

export class Server implements vscode.Disposable {
  client: LanguageClient | undefined;
  info: ServerInfo | undefined;
  private startedFor = "";
  /** The window's `lantern` section as the server last got it (JSON). */
  private given = "";
  private keyGeneration = 0;
  private lifecycle: Promise<unknown> = Promise.resolve();
  private told = false;
  private unsupportedShown = false;
  private readonly warned = new Set<string>();
  private starting: Promise<LanguageClient | undefined> | undefined;
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChange = this.changed.event;
  private readonly created = new vscode.EventEmitter<LanguageClient>();
  /** Each new client, before it starts: register its handlers here. */
  readonly onDidCreateClient = this.created.event;

  constructor(
    private readonly context: vscode.ExtensionContext,
    readonly output: vscode.LogOutputChannel,
  ) {}

  get running(): boolean {
    return this.client?.state === State.Running;
  }

  /** Say once per window, visibly, which workspace settings were ignored. */
  async reportIgnored(trusted: Trusted): Promise<void> {
    const tried = new Set([...trusted.ignored, ...(await workspaceAttempts())]);
    const fresh = [...tried].filter((name) => !this.warned.has(name)).sort();
    if (fresh.length === 0) return;
    for (const name of fresh) this.warned.add(name);
    const message =
      `Lantern ignores ${fresh.join(", ")} from this workspace's settings: ` +
      "only your user settings can change where Lantern sends files, what it runs or when it asks.";
    this.output.warn(message);
    void vscode.window.showWarningMessage(message);
  }

  /** How to start the server: the user's command, else the bundled one. */
  private async launch(trusted: Trusted): Promise<{ command: string; args: string[]; env: NodeJS.ProcessEnv } | undefined> {
    const env: NodeJS.ProcessEnv = { ...process.env };
    const { command, args, problem } = serverCommand(trusted.values["server.command"]);
    if (problem) this.output.warn(problem);
    if (command) return { command, args, env };
    const fromExtension = await pythonExtensionInterpreter(this.output);
    const safe = this.workingFolder();
    const { python, tried } = await findPython(candidates(fromExtension), (c) => probe(c, 10_000, safe));
    for (const t of tried) this.output.info(`Python candidate ${t.command}: ${t.reason}`);
    if (!python) {
      this.tellNoPython(tried.map((t) => `${t.command} ${t.reason}`).join("; "));
      return undefined;
    }
    const started = Date.now();
    const bundleDir = path.join(this.context.extensionPath, "bundled", "wheels");
    const server = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: "Lantern: preparing its server" },
      () =>
        prepareServer({
          python,
          bundleDir,
          storageDir: this.context.globalStorageUri.fsPath,
          log: (line) => this.output.info(line),
        }),
    );
    this.output.info(`server ready to start after ${((Date.now() - started) / 1000).toFixed(1)} s: Python ${python.version.join(".")}`);
    env.PATH = [server.binDir, env.PATH].filter(Boolean).join(path.delimiter);
    return { command: server.command, args: server.args, env };
  }

  /** The extension's own storage, made if missing: a working folder no repository controls. */
  private workingFolder(): string {
    const dir = this.context.globalStorageUri.fsPath;
    fs.mkdirSync(dir, { recursive: true });
    return dir;
  }

  async start(): Promise<LanguageClient | undefined> {
    this.starting ??= this.doStart().finally(() => (this.starting = undefined));
    return this.starting;
  }

  private async doStart(): Promise<LanguageClient | undefined> {
    const unsupported = unsupportedHost();
    if (unsupported) {
      this.tellUnsupported(unsupported);
      return undefined;
    }
    const trusted = currentSettings();
    void this.reportIgnored(trusted);
    let launch;
    try {
      launch = await this.launch(trusted);
    } catch (error) {
      this.tellOnce(`Lantern could not start its server: ${error instanceof Error ? error.message : String(error)}`);
      return undefined;
    }
    if (!launch) return undefined;
    const { key, problem } = keyFor(parseStoredKey(await this.context.secrets.get(SECRET_KEY)), trusted.values.baseUrl);
    if (problem) this.output.warn(problem);
    delete launch.env.LANTERN_API_KEY;
    if (key) launch.env.LANTERN_API_KEY = key;
    // Never the opened folder as the working folder: a bare command name would be looked
    // up there through a relative PATH entry.
    const serverOptions: ServerOptions = { command: launch.command, args: launch.args, options: { env: launch.env, cwd: this.workingFolder() } };
    const clientOptions: LanguageClientOptions = {
      documentSelector: [],
      outputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationOptions: this.windowSection(trusted),
      middleware: {
        workspace: {
          // The server asks for the `lantern` section, and for each folder's: answer with
          // the filtered settings, never the raw ones. A folder's answer includes what its
          // own settings narrow (in a multi-root workspace they are not the window's).
          configuration: (params) =>
            params.items.map((item) => {
              if (item.section !== "lantern") return null;
              const { values } = currentSettings(item.scopeUri ? vscode.Uri.parse(item.scopeUri) : undefined);
              return toServerOptions((n) => values[n]);
            }),
        },
      },
    };
    const client = new LanguageClient("lantern", "Lantern", serverOptions, clientOptions);
    client.registerFeature(lanternFeatures(this.output));
    answerNavigation(client, this.output);
    this.created.fire(client);
    this.client = client;
    this.startedFor = launchKey(trusted, this.keyGeneration);
    try {
      await client.start();
    } catch (error) {
      this.client = undefined;
      this.tellOnce(`Lantern could not start its server (\`${[launch.command, ...launch.args].join(" ")}\`): ${String(error)}`);
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

  /** The window's filtered settings in the server's vocabulary; remembered as given. */
  private windowSection(trusted: Trusted): Record<string, unknown> {
    const section = toServerOptions((name) => trusted.values[name]);
    this.given = JSON.stringify(section);
    return section;
  }

  /**
   * Before a request that depends on them: give the server the window's settings if they
   * changed since it last got them. A settings change is also announced when it happens,
   * but the server then asks for them back, and a question sent meanwhile (a model picked,
   * then asked at once) would be answered with the old ones. A pushed section is applied
   * before any later request is handled.
   */
  async syncSettings(): Promise<void> {
    const client = this.client;
    if (!client || !this.running) return;
    const trusted = currentSettings();
    if (JSON.stringify(toServerOptions((name) => trusted.values[name])) === this.given) return;
    await client.sendNotification(DidChangeConfigurationNotification.type, { settings: { lantern: this.windowSection(trusted) } });
  }

  /** Settings changed: push the filtered ones (a new endpoint or command needs a restart). */
  async settingsChanged(event: vscode.ConfigurationChangeEvent): Promise<LanguageClient | undefined> {
    const trusted = currentSettings();
    void this.reportIgnored(trusted);
    if (!this.client) return undefined;
    if (event.affectsConfiguration("lantern.server.command") || event.affectsConfiguration("lantern.baseUrl")) {
      return this.ensure();
    }
    if (this.running) {
      // No settings in the notification: the server then asks again, for the window and
      // for each folder, so a folder's narrowing is picked up too.
      await this.client.sendNotification(DidChangeConfigurationNotification.type, { settings: null });
    }
    return this.client;
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

  /** Starts, stops and restarts one after another, so two never interleave. */
  private serial<T>(step: () => Promise<T>): Promise<T> {
    const next = this.lifecycle.then(step, step);
    this.lifecycle = next.catch(() => undefined);
    return next;
  }

  async restart(): Promise<LanguageClient | undefined> {
    return this.serial(async () => {
      await this.stop();
      this.told = false;
      return this.start();
    });
  }

  /** The running server, or a new one when none runs or the settings it started with changed. */
  async ensure(): Promise<LanguageClient | undefined> {
    return this.serial(async () => {
      if (this.running && this.startedFor === launchKey(currentSettings(), this.keyGeneration)) return this.client;
      if (this.client) await this.stop();
      return this.start();
    });
  }

  /** The server, started (or restarted after a settings change) if need be, with the
   * window's current settings (undefined: it could not start; it said why). */
  async connected(): Promise<LanguageClient | undefined> {
    const client = await this.ensure();
    if (client) await this.syncSettings();
    return client;
  }

  /** The origin a key entered now is bound to ("" when no `lantern.baseUrl` is set). */
  keyOrigin(): string | undefined {
    return originOf(currentSettings().values.baseUrl);
  }

  async setApiKey(key: string): Promise<void> {
    const origin = this.keyOrigin();
    if (key && origin !== undefined) await this.context.secrets.store(SECRET_KEY, JSON.stringify({ origin, key }));
    else await this.context.secrets.delete(SECRET_KEY);
    this.keyGeneration++;
    if (this.client) await this.ensure();
  }

  /** Whether a key is stored for the endpoint now configured. */
  async hasKey(): Promise<boolean> {
    const { key } = keyFor(parseStoredKey(await this.context.secrets.get(SECRET_KEY)), currentSettings().values.baseUrl);
    return Boolean(key);
  }

  private tellNoPython(detail: string): void {
    const message =
      "Lantern needs Python 3.11, 3.12 or 3.13 to run its bundled server, and found none " +
      "(install one, or select it in the Python extension), or set lantern.server.command in your user settings.";
    this.output.error(`${message} Tried: ${detail}`);
    if (this.told) return;
    this.told = true;
    void vscode.window.showErrorMessage(message, "Open Setting", "Read More").then((choice) => {
      if (choice === "Open Setting") void vscode.commands.executeCommand("workbench.action.openSettings", "lantern.server.command");
      else if (choice === "Read More") this.showReadme();
    });
  }

  /** Native Windows: one notification at a time (a new one once it is closed), nothing started. */
  private tellUnsupported(message: string): void {
    this.output.error(message);
    if (this.unsupportedShown) return;
    this.unsupportedShown = true;
    void vscode.window.showErrorMessage(message, "Read More").then((choice) => {
      this.unsupportedShown = false;
      if (choice === "Read More") this.showReadme();
    });
  }

  private showReadme(): void {
    void vscode.commands.executeCommand("markdown.showPreview", vscode.Uri.joinPath(this.context.extensionUri, "README.md"));
  }

  private tellOnce(message: string): void {
    this.output.error(message);
    if (this.told) return;
    this.told = true;
    void vscode.window.showErrorMessage(message, "Open Setting").then((choice) => {
      if (choice) void vscode.commands.executeCommand("workbench.action.openSettings", "lantern.server.command");
    });
  }

  dispose(): void {
    void this.stop();
    this.changed.dispose();
    this.created.dispose();
  }
}
