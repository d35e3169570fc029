// Reusable helpers for driving a real VS Code workbench (code-server) with
// Playwright in Debian's Chromium. Run tests/vscode/setup.sh first; it puts
// code-server and playwright-core in <repo>/.tools.
//
// Typical use:
//   const server = await startCodeServer({ workspace, userSettings: {...} });
//   const browser = await launchBrowser();
//   try {
//     const page = await browser.newPage();
//     await openWorkbench(page, server.port, workspace);
//     await runCommand(page, 'Lantern: Start');
//   } finally {
//     await closeBrowser(browser);
//     await server.stop();
//   }
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const TOOLS_DIR = path.join(REPO_ROOT, '.tools');
export const CODE_SERVER_BIN = path.join(TOOLS_DIR, 'node_modules', '.bin', 'code-server');
export const ARTIFACTS_DIR = path.join(REPO_ROOT, 'tests', 'artifacts');
export const CHROMIUM = process.env.LANTERN_CHROMIUM || '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
// Keep a trust dialog and the welcome page from covering the window.
export const DEFAULT_USER_SETTINGS = {
  'security.workspace.trust.enabled': false,
  'workbench.startupEditor': 'none',
};

const T0 = Date.now();
/** Log a line with the seconds since this module loaded (to stderr). */
export function log(...args) {
  console.error(`[vscode-e2e +${((Date.now() - T0) / 1000).toFixed(1)}s]`, ...args);
}

/** Run fn and log how long it took under the given label. */
export async function timed(label, fn) {
  const t = Date.now();
  try {
    return await fn();
  } finally {
    log(`${label}: ${((Date.now() - t) / 1000).toFixed(2)}s`);
  }
}

/** playwright-core from .tools/node_modules (installed by setup.sh). */
export function loadPlaywright() {
  const require = createRequire(path.join(TOOLS_DIR, 'package.json'));
  try {
    return require('playwright-core');
  } catch (err) {
    throw new Error(`playwright-core not found in ${TOOLS_DIR}; run tests/vscode/setup.sh (${err.message})`);
  }
}

/** A fresh temporary directory (caller removes it, e.g. with removeDir). */
export async function makeTempDir(prefix = 'lantern-vscode-') {
  return fsp.mkdtemp(path.join(os.tmpdir(), prefix));
}

export async function removeDir(dir) {
  if (dir) await fsp.rm(dir, { recursive: true, force: true });
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export function getFreePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Process groups of code-servers started here and not yet stopped. If the test
// process exits or is interrupted without calling stop(), they are killed.
const liveGroups = new Set();

function signalGroup(pgid, signal) {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false; // ESRCH: nothing left in the group
  }
}

function groupAlive(pgid) {
  // Zombies (exited, not yet reaped) still count for kill(0); ignore them.
  if (!signalGroup(pgid, 0)) return false;
  try {
    for (const pid of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(pid)) continue;
      let stat;
      try {
        stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      } catch {
        continue;
      }
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      // fields[0] = state, fields[2] = pgrp
      if (Number(fields[2]) === pgid && fields[0] !== 'Z') return true;
    }
    return false;
  } catch {
    return true; // no /proc: trust kill(0)
  }
}

process.on('exit', () => {
  for (const pgid of liveGroups) signalGroup(pgid, 'SIGKILL');
});
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.once(sig, () => {
    for (const pgid of liveGroups) signalGroup(pgid, 'SIGKILL');
    liveGroups.clear();
    process.exit(sig === 'SIGINT' ? 130 : 143);
  });
}

/** Install a .vsix with `code-server --install-extension` (before starting it). */
export function installVsix(vsixPath, { extensionsDir, userDataDir }) {
  const r = spawnSync(
    CODE_SERVER_BIN,
    ['--user-data-dir', userDataDir, '--extensions-dir', extensionsDir, '--install-extension', vsixPath],
    { encoding: 'utf8', timeout: 120_000 },
  );
  if (r.status !== 0) {
    throw new Error(`code-server --install-extension ${vsixPath} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  }
  return r.stdout;
}

/**
 * Start code-server and wait until it answers on /healthz.
 *
 * options:
 *   workspace      folder to open (required)
 *   userDataDir    default: a new temp dir (removed by stop())
 *   extensionsDir  default: a new empty temp dir (removed by stop())
 *   userSettings   merged over DEFAULT_USER_SETTINGS into User/settings.json
 *   port           default: a free port
 *   env            extra environment variables for code-server and its
 *                  extension host (e.g. PATH with `lantern`, fake server URLs)
 *   args           extra command-line arguments
 *   timeoutMs      how long to wait for it to listen (default 60 s)
 *
 * Returns { port, url, workspace, userDataDir, extensionsDir, proc, output(), stop() }.
 * output() is everything code-server printed so far (handy on failure).
 */
export async function startCodeServer({
  workspace,
  userDataDir,
  extensionsDir,
  userSettings = {},
  port,
  env = {},
  args = [],
  timeoutMs = 60_000,
} = {}) {
  if (!workspace) throw new Error('startCodeServer: workspace is required');
  if (!fs.existsSync(CODE_SERVER_BIN)) {
    throw new Error(`${CODE_SERVER_BIN} is missing; run tests/vscode/setup.sh`);
  }
  const ownDirs = [];
  if (!userDataDir) ownDirs.push((userDataDir = await makeTempDir('lantern-vscode-user-')));
  if (!extensionsDir) ownDirs.push((extensionsDir = await makeTempDir('lantern-vscode-ext-')));
  await fsp.mkdir(path.join(userDataDir, 'User'), { recursive: true });
  await fsp.mkdir(extensionsDir, { recursive: true });
  await fsp.writeFile(
    path.join(userDataDir, 'User', 'settings.json'),
    JSON.stringify({ ...DEFAULT_USER_SETTINGS, ...userSettings }, null, 2),
  );
  port = port ?? (await getFreePort());

  const argv = [
    '--auth', 'none',
    '--bind-addr', `127.0.0.1:${port}`,
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-workspace-trust',
    '--user-data-dir', userDataDir,
    '--extensions-dir', extensionsDir,
    // keep code-server's own config out of ~/.config/code-server
    '--config', path.join(userDataDir, 'code-server.yaml'),
    ...args,
    workspace,
  ];
  let out = '';
  // detached: code-server leads a process group of its own, so stop() can
  // also wait for (and if need be end) what it started: the extension host,
  // the file watcher, and processes an extension spawns (e.g. `lantern serve`).
  const proc = spawn(CODE_SERVER_BIN, argv, {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  liveGroups.add(proc.pid);
  proc.stdout.on('data', (d) => (out += d));
  proc.stderr.on('data', (d) => (out += d));
  let exited = null;
  const exitPromise = new Promise((resolve) =>
    proc.on('exit', (code, signal) => {
      exited = { code, signal };
      resolve(exited);
    }),
  );

  let stopped = false;
  const stop = async (graceMs = 5000) => {
    if (stopped) return;
    stopped = true;
    if (exited === null) {
      proc.kill('SIGTERM');
      const timer = setTimeout(() => exited === null && proc.kill('SIGKILL'), graceMs);
      await exitPromise;
      clearTimeout(timer);
    }
    // code-server's children (extension host, file watcher, ...) end on their
    // own shortly after it; wait for them, then end whatever is left.
    const deadline = Date.now() + graceMs;
    while (groupAlive(proc.pid) && Date.now() < deadline) await sleep(100);
    if (groupAlive(proc.pid)) signalGroup(proc.pid, 'SIGKILL');
    liveGroups.delete(proc.pid);
    for (const d of ownDirs) await removeDir(d);
  };

  const url = `http://127.0.0.1:${port}/`;
  const deadline = Date.now() + timeoutMs;
  try {
    for (;;) {
      if (exited) throw new Error(`code-server exited early (${JSON.stringify(exited)}):\n${out}`);
      try {
        const res = await fetch(`${url}healthz`);
        if (res.ok) break;
      } catch {
        /* not listening yet */
      }
      if (Date.now() > deadline) throw new Error(`code-server did not listen on ${port} within ${timeoutMs} ms:\n${out}`);
      await sleep(100);
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { port, url, workspace, userDataDir, extensionsDir, proc, output: () => out, stop };
}

/** Launch Debian's Chromium through playwright-core. */
export async function launchBrowser({ headless = true, extraArgs = [] } = {}) {
  const { chromium } = loadPlaywright();
  return chromium.launch({ executablePath: CHROMIUM, headless, args: [...CHROMIUM_ARGS, ...extraArgs] });
}

export async function closeBrowser(browser) {
  if (browser) await browser.close().catch(() => {});
}

/**
 * Open the workbench for `folder` and wait until it is usable. Returns the page.
 * A new page with a 1280x800 viewport is made when `page` is a Browser.
 */
export async function openWorkbench(pageOrBrowser, port, folder, { timeoutMs = 60_000 } = {}) {
  const page =
    typeof pageOrBrowser.newPage === 'function' && typeof pageOrBrowser.goto !== 'function'
      ? await pageOrBrowser.newPage({ viewport: { width: 1280, height: 800 } })
      : pageOrBrowser;
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(folder)}`, { timeout: timeoutMs });
  await page.waitForSelector('.monaco-workbench', { timeout: timeoutMs });
  // The status bar and explorer appear once the workbench has restored.
  await page.waitForSelector('.monaco-workbench .part.statusbar', { timeout: timeoutMs });
  await page.waitForSelector('.explorer-folders-view, .explorer-viewlet', { timeout: timeoutMs });
  return page;
}

/** The quick-input box (command palette / quick open), once visible. */
export async function quickInput(page, { timeoutMs = 10_000 } = {}) {
  const input = page.locator('.quick-input-widget input');
  await input.first().waitFor({ state: 'visible', timeout: timeoutMs });
  return input.first();
}

/**
 * Run a command by its title from the command palette (F1), e.g.
 * runCommand(page, 'Lantern: Ask'). Waits until a row with exactly that label
 * is listed before pressing Enter, so the right command runs. `opensPicker`: the
 * command shows a quick pick of its own in the same widget (do not wait for it to close).
 */
export async function runCommand(page, title, { timeoutMs = 15_000, opensPicker = false } = {}) {
  await focusWorkbench(page);
  await page.keyboard.press('F1');
  const input = await quickInput(page, { timeoutMs });
  await input.fill(`>${title}`);
  const row = page
    .locator('.quick-input-list .monaco-list-row')
    .filter({ has: page.locator('.label-name', { hasText: exactText(title) }) });
  try {
    await row.first().waitFor({ state: 'visible', timeout: timeoutMs });
  } catch (err) {
    const listed = await page.locator('.quick-input-list .monaco-list-row .label-name').allInnerTexts().catch(() => []);
    await page.keyboard.press('Escape').catch(() => {});
    throw new Error(
      `runCommand: no command titled ${JSON.stringify(title)} in the palette within ${timeoutMs} ms ` +
        `(is the extension active?); listed: ${JSON.stringify(listed.slice(0, 10))}`,
      { cause: err },
    );
  }
  await row.first().click();
  if (!opensPicker) await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: timeoutMs }).catch(() => {});
}

/** Wait until an editor tab with this exact label is open; returns the locator. */
export async function waitForTab(page, label, { timeoutMs = 15_000 } = {}) {
  const tab = page.locator('.tab .label-name', { hasText: exactText(label) });
  await tab.first().waitFor({ state: 'visible', timeout: timeoutMs });
  return tab.first();
}

/** Wait for a notification toast whose message matches `text` (string or RegExp). */
export async function waitForNotification(page, text, { timeoutMs = 30_000 } = {}) {
  const toast = page.locator('.notification-toast').filter({ hasText: text });
  await toast.first().waitFor({ state: 'visible', timeout: timeoutMs });
  return toast.first();
}

/** Click a button (by its text) in a notification toast, optionally one matching `message`. */
export async function clickNotificationButton(page, buttonText, { message, timeoutMs = 30_000 } = {}) {
  let toasts = page.locator('.notification-toast');
  if (message) toasts = toasts.filter({ hasText: message });
  const button = toasts.locator('a.monaco-button', { hasText: exactText(buttonText) });
  await button.first().waitFor({ state: 'visible', timeout: timeoutMs });
  await button.first().click();
}

/** Save a screenshot to tests/artifacts/<name>.png; returns the path. */
export async function screenshot(page, name) {
  await fsp.mkdir(ARTIFACTS_DIR, { recursive: true });
  const file = path.join(ARTIFACTS_DIR, name.endsWith('.png') ? name : `${name}.png`);
  await page.screenshot({ path: file });
  return file;
}

async function focusWorkbench(page) {
  // Keyboard shortcuts go to the focused element; make sure it is the workbench.
  const active = await page.evaluate(() => document.activeElement?.tagName ?? 'BODY');
  if (active === 'BODY') await page.locator('.monaco-workbench').first().focus().catch(() => {});
}

function escapeRegExp(s) {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function exactText(s) {
  return new RegExp(`^\\s*${escapeRegExp(s)}\\s*$`);
}

/** Stop what a suite started (the browser, the fake model, code-server) and remove its
 * folder, unless LANTERN_E2E_KEEP=1 keeps it. */
export async function tearDown({ browser, fake, server, root }) {
  await closeBrowser(browser);
  if (fake) await fake.stop().catch(() => {});
  if (server) await server.stop().catch(() => {});
  if (process.env.LANTERN_E2E_KEEP === '1') log(`kept ${root}`);
  else await removeDir(root).catch(() => {});
}

/** A suite's results, a line each, then "<passed> passed, <failed> failed" (the line CI
 * reads); returns the exit code: 0 only when something ran and nothing failed. */
export function report(results, t0) {
  const passed = results.filter((r) => r.ok).length;
  const failed = results.length - passed;
  log(`total ${((Date.now() - t0) / 1000).toFixed(1)}s`);
  for (const r of results) console.log(`${r.ok ? 'ok  ' : 'FAIL'} ${r.label}`);
  console.log(`${passed} passed, ${failed} failed`);
  return failed === 0 && passed > 0 ? 0 : 1;
}

/** Run a suite's `main` and exit with its code; a crash counts as one failure. */
export function runSuite(main) {
  main().then(
    (code) => process.exit(code),
    (err) => {
      console.error(err.stack || err);
      console.log('0 passed, 1 failed');
      process.exit(1);
    },
  );
}


/**
 * Run a suite's scenarios in order, in one window, and return its exit code (report()).
 * LANTERN_E2E_ONLY=1,3 runs only the scenarios with these numbers.
 *
 *   prefix      of the screenshots: <prefix>-<n>.png after a pass (unless shotOnPass is
 *               false), <prefix>-<n>-failure.png, <prefix>-setup-failure.png
 *   noun        what a scenario is called in the report ("scenario", "flow")
 *   scenarios   [{ n, name, run(args) }]
 *   setUp(ctx, chosen)     starts what they share and puts it on ctx (page, server, browser,
 *                          root: what tearDown() ends; anything the scenarios need)
 *   before(scenario, ctx, step, first) / after(scenario, ctx, step)
 *                          around each run (first: the first scenario chosen)
 *   extra(scenario, ctx)   more arguments for this scenario's run (e.g. a screenshot helper)
 *   diagnose(ctx)          text that says what the window showed when a scenario failed
 *   finish(ctx)            after the last scenario (e.g. to log figures they measured)
 *
 * A scenario's run gets { ...ctx, step, ...extra }; step(name, fn) logs what it does and
 * names it in a failure. A failed scenario is reported with its step, a screenshot and the
 * diagnosis, and the next one runs; a failed setUp fails every scenario chosen.
 */
export async function runScenarios({ prefix, noun = 'scenario', scenarios, setUp, before, after, extra, diagnose, finish, shotOnPass = true }) {
  const t0 = Date.now();
  const only = process.env.LANTERN_E2E_ONLY ? new Set(process.env.LANTERN_E2E_ONLY.split(',').map(Number)) : null;
  const chosen = scenarios.filter((s) => !only || only.has(s.n));
  const results = [];
  const ctx = {};
  try {
    await setUp(ctx, chosen);
    for (const scenario of chosen) {
      const label = `${noun} ${scenario.n} (${scenario.name})`;
      let current = 'start';
      const st = Date.now();
      const step = async (name, fn) => {
        current = name;
        log(`  ${scenario.n}: ${name}`);
        return fn();
      };
      try {
        if (before) await before(scenario, ctx, step, scenario === chosen[0]);
        await scenario.run({ ...ctx, step, ...(extra ? extra(scenario, ctx) : {}) });
        if (after) await after(scenario, ctx, step);
        if (shotOnPass) await screenshot(ctx.page, `${prefix}-${scenario.n}`);
        results.push({ label, ok: true });
        log(`PASS ${label} in ${((Date.now() - st) / 1000).toFixed(1)}s`);
      } catch (err) {
        results.push({ label, ok: false });
        const file = await screenshot(ctx.page, `${prefix}-${scenario.n}-failure`).catch(() => null);
        console.error(`FAIL ${label}: step "${current}" failed: ${err.stack || err}`);
        if (file) console.error(`  screenshot: ${file}`);
        if (diagnose) console.error(await diagnose(ctx).catch((e) => `(no diagnosis: ${e.message})`));
        await ctx.page?.keyboard.press('Escape').catch(() => {});
      }
    }
    if (finish) await finish(ctx);
  } catch (err) {
    console.error(`e2e setup FAILED: ${err.stack || err}`);
    if (ctx.page) await screenshot(ctx.page, `${prefix}-setup-failure`).catch(() => {});
    if (ctx.server) console.error(`--- code-server output (tail):\n${ctx.server.output().split('\n').slice(-60).join('\n')}`);
    for (const s of chosen.slice(results.length)) results.push({ label: `${noun} ${s.n} (${s.name})`, ok: false });
  } finally {
    await tearDown(ctx);
  }
  return report(results, t0);
}
