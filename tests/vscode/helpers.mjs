// Helpers shared by the Lantern end-to-end tests in code-server (e2e*.mjs): the
// test workspace, building the .vsix, the scripted fake model, an environment
// with no Lantern but the .vsix's, the workbench opened on it, ways to read and wait
// on the Lantern view (a webview inside two iframes), and the hooks their scenarios run with.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import readline from 'node:readline';

import {
  REPO_ROOT,
  getFreePort,
  installVsix,
  launchBrowser,
  makeTempDir,
  openWorkbench,
  runCommand,
  startCodeServer,
  timed,
} from './harness.mjs';

export const EXT_DIR = path.join(REPO_ROOT, 'vscode-extension');
export const PYTHON = path.join(REPO_ROOT, '.venv', 'bin', 'python');
export const CANARY = 'LANTERN_E2E_CANARY_7f3a9c1e';
export const APPROVAL = /Lantern wants to read src\/app\.py/;
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// ------------------------------------------------------------------ workspace

// 30 lines; the handler is lines 10–12.
export const APP_PY = [
  '"""A tiny request router: the workspace of Lantern\'s VS Code e2e test."""', // 1
  '', // 2
  'import json', // 3
  '', // 4
  'ROUTES = {}', // 5
  '', // 6
  '', // 7
  '# Dispatch one request to the function registered for its path.', // 8
  '# Unknown paths answer 404.', // 9
  'def handle_request(request):', // 10
  '    payload = json.loads(request.body or "{}")', // 11
  '    return ROUTES.get(request.path, not_found)(payload)', // 12
  '', // 13
  '', // 14
  'def route(path):', // 15
  '    """Register a handler for `path`."""', // 16
  '    def register(fn):', // 17
  '        ROUTES[path] = fn', // 18
  '        return fn', // 19
  '    return register', // 20
  '', // 21
  '', // 22
  'def not_found(payload):', // 23
  '    return {"status": 404}', // 24
  '', // 25
  '', // 26
  '@route("/health")', // 27
  'def health(payload):', // 28
  '    return {"status": 200, "ok": True}', // 29
  '# end of app.py', // 30
].join('\n') + '\n';

/** src/app.py and a `.env` holding the canary, which must never reach the model. */
export async function makeWorkspace(dir) {
  await fsp.mkdir(path.join(dir, 'src'), { recursive: true });
  await fsp.writeFile(path.join(dir, 'src', 'app.py'), APP_PY);
  await fsp.writeFile(path.join(dir, '.env'), `API_TOKEN=${CANARY}\n`);
}

/** A scripted model turn that reads src/app.py. */
export const readApp = (id) => ({ tool_calls: [{ id, name: 'read_file', arguments: { path: 'src/app.py' } }] });

// ------------------------------------------------------------------ build

export function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...opts });
  if (r.status !== 0) {
    throw new Error(`${cmd} ${args.join(' ')} failed (${r.status ?? r.signal}):\n${(r.stdout || '').slice(-4000)}\n${(r.stderr || '').slice(-4000)}`);
  }
  return r.stdout;
}

/**
 * The .vsix to install: LANTERN_E2E_VSIX, or vscode-extension/lantern-linux-x64.vsix
 * as it is (LANTERN_E2E_SKIP_BUILD=1), or built now with `npm run package`.
 */
export function buildVsix() {
  if (process.env.LANTERN_E2E_VSIX) return path.resolve(process.env.LANTERN_E2E_VSIX);
  const vsix = path.join(EXT_DIR, 'lantern-linux-x64.vsix');
  if (process.env.LANTERN_E2E_SKIP_BUILD === '1') {
    if (!fs.existsSync(vsix)) throw new Error(`LANTERN_E2E_SKIP_BUILD=1 but ${vsix} does not exist`);
    return vsix;
  }
  if (!fs.existsSync(path.join(EXT_DIR, 'node_modules'))) {
    run('npm', ['ci', '--no-audit', '--no-fund'], { cwd: EXT_DIR });
  }
  run('npm', ['run', 'package'], { cwd: EXT_DIR });
  return vsix;
}

// ------------------------------------------------------------------ environment

/** PATH without any folder that holds a `lantern` executable (or the repo's venv). */
export function pathWithoutLantern(value) {
  const venv = path.join(REPO_ROOT, '.venv');
  return (value ?? '')
    .split(path.delimiter)
    .filter((d) => d && !d.startsWith(venv) && !fs.existsSync(path.join(d, 'lantern')))
    .join(path.delimiter);
}

/**
 * Environment for code-server (and so for the extension host and the server it starts):
 * no `lantern` on PATH and none importable, a home of its own under `home`, no model
 * settings from the environment. `extra` is added over it.
 */
export async function isolatedEnv(home, extra = {}) {
  const dataHome = path.join(home, '.local', 'share');
  for (const d of [dataHome, path.join(home, '.local', 'state'), path.join(home, '.config')]) {
    await fsp.mkdir(d, { recursive: true });
  }
  const env = {
    PATH: pathWithoutLantern(process.env.PATH),
    VIRTUAL_ENV: '',
    PYTHONPATH: '',
    PYTHONUSERBASE: path.join(home, '.local'),
    HOME: home,
    XDG_DATA_HOME: dataHome,
    XDG_STATE_HOME: path.join(home, '.local', 'state'),
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_CACHE_HOME: path.join(home, '.cache'),
    LANTERN_API_KEY: '',
    OPENAI_API_KEY: '',
    OPENAI_BASE_URL: '',
    ...extra,
  };
  for (const probe of [['sh', ['-c', 'command -v lantern']], ['python3', ['-c', 'import lantern']]]) {
    const r = spawnSync(probe[0], probe[1], { env: { ...process.env, ...env }, encoding: 'utf8' });
    if (r.status === 0) throw new Error(`Lantern is reachable without the .vsix (${probe[0]} ${probe[1].join(' ')}): ${r.stdout}`);
  }
  return { env, dataHome };
}

/** Processes of code-server's process group whose command line matches `pattern`. */
export function groupProcesses(pgid, pattern) {
  const found = [];
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) !== pgid) continue;
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
      if (pattern.test(cmd)) found.push(cmd.trim());
    } catch {
      /* gone */
    }
  }
  return found;
}

/** Process ids (with their command lines) of `pgid`'s processes matching `pattern`. */
export function groupPids(pgid, pattern) {
  const found = [];
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) !== pgid || fields[0] === 'Z') continue;
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ');
      if (pattern.test(cmd)) found.push(Number(pid));
    } catch {
      /* gone */
    }
  }
  return found.sort((a, b) => a - b);
}

export function tail(text, lines = 60) {
  return text.split('\n').slice(-lines).join('\n');
}

// ------------------------------------------------------------------ fake model

// Fake model servers still running; ended if this process exits early (the
// harness turns SIGINT/SIGTERM into process.exit, which runs 'exit' handlers).
const liveFakes = new Set();
process.on('exit', () => {
  for (const proc of liveFakes) proc.kill('SIGKILL');
});

/**
 * Start the fake OpenAI server (tests/fakes/openai_server.py) on `port` with these
 * turns (and, if given, these `models` in its model list); resolves once it listens.
 */
export async function startFake({ turns, port, dir, name, models }) {
  const script = path.join(dir, `${name}-turns.json`);
  const record = path.join(dir, `${name}-requests.jsonl`);
  await fsp.writeFile(script, JSON.stringify({ turns, ...(models ? { models } : {}) }, null, 2));
  const proc = spawn(PYTHON, ['-m', 'tests.fakes.openai_server', '--script', script, '--port', String(port), '--record', record], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  liveFakes.add(proc);
  let stderr = '';
  proc.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise((resolve) =>
    proc.on('exit', (code, signal) => {
      liveFakes.delete(proc);
      resolve({ code, signal });
    }),
  );
  let done = false;
  const stop = async () => {
    if (done) return;
    done = true;
    if (proc.exitCode === null && proc.signalCode === null) {
      proc.kill('SIGTERM');
      const t = setTimeout(() => proc.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(t);
    }
  };
  const requests = () => {
    if (!fs.existsSync(record)) return [];
    return fs
      .readFileSync(record, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  };
  try {
    const line = await Promise.race([
      new Promise((resolve, reject) => {
        const rl = readline.createInterface({ input: proc.stdout });
        rl.once('line', (l) => {
          rl.close();
          resolve(l);
        });
        proc.once('error', reject);
      }),
      exited.then((e) => {
        throw new Error(`fake model exited early (${JSON.stringify(e)}): ${stderr}`);
      }),
      sleep(15_000).then(() => {
        throw new Error(`fake model did not start within 15 s: ${stderr}`);
      }),
    ]);
    const info = JSON.parse(line);
    return {
      ...info,
      proc,
      stop,
      stderr: () => stderr,
      /** Every request received so far: {method, path, headers, body, raw}. */
      requests,
      /** JSON bodies of the chat requests received so far. */
      chatRequests() {
        return requests()
          .filter((r) => r.method === 'POST' && r.path.endsWith('/chat/completions'))
          .map((r) => r.body);
      },
      rawRecord: () => (fs.existsSync(record) ? fs.readFileSync(record, 'utf8') : ''),
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

// ------------------------------------------------------------------ waiting

/** Wait until `fn()` returns a truthy value (polled); returns it. */
export async function until(what, fn, { timeoutMs = 30_000, intervalMs = 200 } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      const value = await fn();
      if (value) return value;
      last = value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
    }
    await sleep(intervalMs);
  }
}

/**
 * Fail as soon as `fn()` returns something truthy while `forMs` pass (polled). For
 * "nothing happens" checks that no event can end early; prefer an event where one exists.
 */
export async function never(what, fn, { forMs, intervalMs = 100 }) {
  const deadline = Date.now() + forMs;
  while (Date.now() < deadline) {
    const value = await fn();
    if (value) throw new Error(`${what}: ${JSON.stringify(value)}`);
    await sleep(intervalMs);
  }
}

// ------------------------------------------------------------------ the Lantern view

/** The answer panel's document (outer webview iframe → inner active frame). */
export function panel(page) {
  return page.frameLocator('iframe.webview >> visible=true').first().frameLocator('iframe#active-frame');
}

export function lastTurn(page) {
  return panel(page).locator('article.turn').last();
}

export async function textOf(locator) {
  return (await locator.innerText({ timeout: 500 })).replace(/\s+/g, ' ').trim();
}

/** Wait for the last turn's tool row for `tool` to show `status` (string or RegExp). */
export async function waitToolStatus(page, tool, status, opts) {
  const row = lastTurn(page).locator('ul.tools li.tool').filter({ has: panel(page).locator('.tool-name', { hasText: tool }) });
  return until(`the panel to show ${tool} as ${status}`, async () => {
    const text = await textOf(row.last().locator('.tool-status'));
    return (typeof status === 'string' ? text === status : status.test(text)) && text;
  }, opts);
}

export async function waitAnswer(page, re, opts) {
  return until(`the panel's answer to match ${re}`, async () => {
    const text = await textOf(lastTurn(page).locator('div.answer'));
    return re.test(text) && text;
  }, opts);
}

// ------------------------------------------------------------------ the workbench

/**
 * Palette → `Lantern: Ask…` → type the question → Enter. (Not harness.runCommand:
 * it waits up to its timeout for the quick input to close, and here the same
 * widget stays open for the command's input box.)
 */
export async function askFromPalette(page, question, { timeoutMs = 15_000 } = {}) {
  const title = 'Lantern: Ask…';
  const active = await page.evaluate(() => document.activeElement?.tagName ?? 'BODY');
  if (active === 'BODY') await page.locator('.monaco-workbench').first().focus().catch(() => {});
  const widget = page.locator('.quick-input-widget');
  const palette = widget.locator('input').first();
  const row = widget
    .locator('.quick-input-list .monaco-list-row')
    .filter({ has: page.locator('.label-name', { hasText: /^\s*Lantern: Ask…\s*$/ }) });
  // In a window that just opened, the palette may list no extension commands
  // yet: it keeps the list it opened with, so close and reopen it.
  for (let attempt = 1; ; attempt++) {
    await page.keyboard.press('F1');
    await palette.waitFor({ state: 'visible', timeout: timeoutMs });
    await palette.fill(`>${title}`);
    try {
      await row.first().waitFor({ state: 'visible', timeout: 5000 });
      break;
    } catch (err) {
      if (attempt >= 4) throw err;
      await page.keyboard.press('Escape');
      await sleep(1000);
    }
  }
  await row.first().click();
  // The command's showInputBox reuses the widget: wait for its title.
  const box = page.locator('.quick-input-widget').filter({ has: page.locator('.quick-input-title', { hasText: 'Lantern: Ask' }) });
  await box.waitFor({ state: 'visible', timeout: timeoutMs });
  const input = box.locator('input').first();
  await input.fill(question);
  await input.press('Enter');
  await box.waitFor({ state: 'hidden', timeout: timeoutMs });
}

export async function clearNotifications(page) {
  await page.keyboard.press('Escape').catch(() => {});
  await runCommand(page, 'Notifications: Clear All Notifications').catch(() => {});
}

/** Lantern's progress notification (the one with a Cancel button) is gone: the question finished. */
export async function waitProgressClosed(page, timeoutMs = 10_000) {
  const progress = page
    .locator('.notification-toast')
    .filter({ hasText: 'Lantern' })
    .filter({ has: page.locator('a.monaco-button', { hasText: /^\s*Cancel\s*$/ }) });
  await until('the progress notification to close', async () => (await progress.count()) === 0, { timeoutMs });
}

/** What the "Lantern" output channel shows (Lantern: Show Log), for failure reports. */
export async function lanternOutput(page) {
  try {
    await page.keyboard.press('Escape').catch(() => {});
    await runCommand(page, 'Lantern: Show Log', { timeoutMs: 5000 });
    const lines = page.locator('.part.panel .monaco-editor .view-lines').first();
    await lines.waitFor({ state: 'visible', timeout: 5000 });
    await sleep(300);
    return await lines.innerText({ timeout: 2000 });
  } catch (err) {
    return `(could not read it: ${err.message.split('\n')[0]})`;
  } finally {
    await runCommand(page, 'View: Hide Panel', { timeoutMs: 3000 }).catch(() => {});
  }
}

/**
 * What both end-to-end runs start from: the extension built into a .vsix and installed
 * in a fresh code-server profile under a new temporary folder (removed when the process
 * exits, also on SIGINT, unless LANTERN_E2E_KEEP=1), next to the sample workspace.
 * Returns the folders: root, workspace, userDataDir, extensionsDir, fakeDir.
 */
export async function prepareProfile(prefix) {
  if (!fs.existsSync(PYTHON)) throw new Error(`${PYTHON} is missing: create the venv (the fake model runs in it)`);
  const vsix = await timed('build and package the extension', async () => buildVsix());
  const root = await makeTempDir(prefix);
  process.on('exit', () => {
    // Interrupted (SIGINT/SIGTERM → process.exit): a caller's finally does not run.
    if (process.env.LANTERN_E2E_KEEP !== '1') {
      try {
        fs.rmSync(root, { recursive: true, force: true });
      } catch {
        /* best effort */
      }
    }
  });
  const dirs = {
    root,
    workspace: path.join(root, 'workspace'),
    userDataDir: path.join(root, 'user-data'),
    extensionsDir: path.join(root, 'extensions'),
    fakeDir: path.join(root, 'fake'),
  };
  for (const d of [dirs.userDataDir, dirs.extensionsDir, dirs.fakeDir]) await fsp.mkdir(d, { recursive: true });
  await makeWorkspace(dirs.workspace);
  await timed('install the .vsix', async () => installVsix(vsix, { extensionsDir: dirs.extensionsDir, userDataDir: dirs.userDataDir }));
  return dirs;
}

/**
 * Open the workbench on a profile from prepareProfile(): a free port for the fake model
 * (ctx.fakePort), an isolatedEnv() under <root>/home (ctx.home, ctx.dataHome), code-server
 * (ctx.server) with tips, recommendations and telemetry off, Chromium (ctx.browser) and a page
 * (ctx.page) with the workbench open. Each goes on ctx as soon as it runs, so tearDown(ctx)
 * ends it when a later step fails.
 *
 *   ollama        false (default): the model is LANTERN_MODEL=fake-model at the fake's
 *                 LANTERN_BASE_URL and no Ollama answers; true: no model is given and the
 *                 fake plays a local Ollama (OLLAMA_HOST)
 *   env           more environment for code-server, over that
 *   userSettings  more user settings, over those
 *   viewport      of the page (default 1024x768)
 */
export async function openLanternWorkbench(
  ctx,
  { root, workspace, userDataDir, extensionsDir },
  { ollama = false, env: extraEnv = {}, userSettings = {}, viewport = { width: 1024, height: 768 } } = {},
) {
  ctx.fakePort = await getFreePort();
  const model = ollama
    ? { OLLAMA_HOST: `127.0.0.1:${ctx.fakePort}` }
    : { LANTERN_BASE_URL: `http://127.0.0.1:${ctx.fakePort}/v1`, LANTERN_MODEL: 'fake-model', OLLAMA_HOST: '127.0.0.1:9' };
  ctx.home = path.join(root, 'home');
  const { env, dataHome } = await isolatedEnv(ctx.home, { ...model, ...extraEnv });
  ctx.dataHome = dataHome;
  ctx.server = await timed('start code-server', () =>
    startCodeServer({
      workspace,
      userDataDir,
      extensionsDir,
      env,
      userSettings: {
        'workbench.tips.enabled': false,
        'extensions.ignoreRecommendations': true,
        'telemetry.telemetryLevel': 'off',
        ...userSettings,
      },
    }),
  );
  ctx.browser = await timed('launch chromium', () => launchBrowser({ headless: process.env.LANTERN_E2E_HEADED !== '1' }));
  ctx.page = await ctx.browser.newPage({ viewport });
  await timed('open the workbench', () => openWorkbench(ctx.page, ctx.server.port, workspace));
  return ctx;
}

// ------------------------------------------------------------------ scenarios

/**
 * The hooks Lantern's suites run their scenarios with (harness.runScenarios). Before each:
 * the fake model started afresh with the scenario's `turns` (one without turns keeps the
 * model running) on ctx.fakePort, listing ctx.models if set, named <tag><n>; then
 * `reset(ctx, step, scenario, first)` (first: the first scenario run). After each: the workspace's .env
 * (a canary) never reached the model. On a failure: what the view, code-server, Lantern's
 * log and the fake model said. ctx holds page, server, fakePort and fakeDir.
 */
export function lanternHooks({ tag, reset }) {
  return {
    async before(scenario, ctx, step, first) {
      if (scenario.turns) {
        if (ctx.fake) await ctx.fake.stop();
        ctx.fake = undefined;
        ctx.fake = await step('start the fake model', () =>
          startFake({ turns: scenario.turns, models: ctx.models, port: ctx.fakePort, dir: ctx.fakeDir, name: `${tag}${scenario.n}` }),
        );
      }
      if (reset) await reset(ctx, step, scenario, first);
    },
    async after(scenario, ctx, step) {
      await step('the workspace .env never reached the model', async () => {
        if (ctx.fake?.rawRecord().includes(CANARY)) throw new Error('the .env canary was sent to the model');
      });
    },
    async diagnose({ page, server, fake }) {
      const lines = [];
      if (fake?.rawRecord().includes(CANARY)) lines.push('  and the .env canary was sent to the model');
      lines.push(`--- the view (text):\n${await textOf(panel(page).locator('body')).catch((e) => `(unreadable: ${e.message.split('\n')[0]})`)}`);
      if (server) lines.push(`--- code-server output (tail):\n${tail(server.output())}`);
      lines.push(`--- Lantern output channel (visible part):\n${await lanternOutput(page)}`);
      if (fake) lines.push(`--- fake model stderr (tail):\n${tail(fake.stderr(), 20)}`);
      return lines.join('\n');
    },
  };
}
