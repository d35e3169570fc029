// End-to-end test of `lantern/navigate` (issue 26) in a real workbench (code-server +
// Chromium), with code-server's built-in TypeScript language features, the server bundled
// in the .vsix and the scripted fake model (tests/fakes/openai_server.py).
//
// The workspace has two TypeScript classes with a same-named method, `A.run` and `B.run`,
// and a file that calls each. The fake model asks `find_references A.run`; what it gets
// back is the tool result in its next request. The scenario:
//   1. `lantern.navigation` on (the default): once TypeScript answers in the editor (a hover
//      over `a.run` shows `A.run`), the question → the tool result lists A's uses only
//      (src/main.ts:5 and :8), not B's (src/main.ts:6, :7, src/shapes.ts:5), and says it
//      came from the language server.
// Reads need no prompt (`lantern.approval.mode: "workspace"`).
//
//   bash tests/vscode/setup.sh        # once; cached in .tools
//   node tests/vscode/e2e_navigation.mjs
//
// Environment: LANTERN_E2E_SKIP_BUILD, LANTERN_E2E_VSIX, LANTERN_E2E_ONLY=1,
// LANTERN_E2E_HEADED, LANTERN_E2E_KEEP, as for e2e_context.mjs.
// Screenshots go to tests/artifacts/e2e-navigation-*.png.
// The last line of output is "<passed> passed, <failed> failed".
import fsp from 'node:fs/promises';
import path from 'node:path';

import {
  getFreePort,
  launchBrowser,
  log,
  openWorkbench,
  report,
  runSuite,
  screenshot,
  startCodeServer,
  tearDown,
  timed,
  waitForTab,
} from './harness.mjs';
import {
  CANARY,
  clearNotifications,
  isolatedEnv,
  lanternOutput,
  panel,
  prepareProfile,
  startFake,
  tail,
  textOf,
  until,
} from './helpers.mjs';
import { askInView, command, messagesOf, newConversation, openLanternView, waitIdle, waitLastAnswer } from './view.mjs';

const VIEWPORT = { width: 1024, height: 768 };
const SERVER_START_MS = 240_000; // the first start prepares a Python environment (busy 2-core box)
const TYPESCRIPT_READY_MS = 180_000; // tsserver's first project load on a busy box

const SHAPES_TS = [
  'export class A {', // 1
  '  run(): number { return 1; }', // 2
  '}', // 3
  'export class B {', // 4
  '  run(): number { return 2; }', // 5
  '}', // 6
].join('\n') + '\n';

const MAIN_TS = [
  'import { A, B } from "./shapes";', // 1
  '', // 2
  'const a = new A();', // 3
  'const b = new B();', // 4
  'a.run();', // 5  A
  'b.run();', // 6  B
  'b.run();', // 7  B
  'export const twice = a.run() * 2;', // 8  A
].join('\n') + '\n';

const TSCONFIG = JSON.stringify({ compilerOptions: { target: 'ES2020', module: 'ES2020', strict: true }, include: ['src/**/*.ts'] }, null, 2) + '\n';

const QUESTION = 'Where is A.run called?';
const turns = (id) => [{ tool_calls: [{ id, name: 'find_references', arguments: { name: 'A.run' } }] }, { content: 'A.run is called in src/main.ts.' }];

/** The text of the tool result for `find_references` in the fake model's last request. */
function toolResult(fake) {
  const requests = fake.chatRequests();
  if (requests.length < 2) throw new Error(`expected 2 model requests, got ${requests.length}`);
  const tool = messagesOf(requests.at(-1)).filter((m) => m.role === 'tool');
  if (tool.length !== 1) throw new Error(`expected one tool result, got ${JSON.stringify(tool)}`);
  return tool[0].content;
}

const A_USES = ['src/main.ts:5:', 'src/main.ts:8:'];
const B_USES = ['src/main.ts:6:', 'src/main.ts:7:', 'src/shapes.ts:5:'];

/** Open src/main.ts and wait until TypeScript answers a hover over `a.run` with `A.run`. */
async function waitTypeScript(page) {
  await page.locator('.monaco-workbench').first().focus().catch(() => {});
  await page.keyboard.press('Control+P');
  const input = page.locator('.quick-input-widget input').first();
  await input.waitFor({ state: 'visible', timeout: 10_000 });
  await input.fill('src/main.ts');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'main.ts' }).first().waitFor({ state: 'visible', timeout: 10_000 });
  await page.keyboard.press('Enter');
  await waitForTab(page, 'main.ts');
  return until(
    'TypeScript to answer a hover over a.run',
    async () => {
      await page.keyboard.press('Escape');
      await page.keyboard.press('Control+G');
      const goTo = page.locator('.quick-input-widget input').first();
      await goTo.waitFor({ state: 'visible', timeout: 10_000 });
      await goTo.fill(':5:3');
      await page.keyboard.press('Enter');
      await page.keyboard.press('Control+K');
      await page.keyboard.press('Control+I');
      const hover = page.locator('.monaco-hover').filter({ hasText: 'A.run' }).first();
      const shown = await hover.waitFor({ state: 'visible', timeout: 5_000 }).then(
        () => true,
        () => false,
      );
      return shown && (await textOf(hover));
    },
    { timeoutMs: TYPESCRIPT_READY_MS, intervalMs: 2_000 },
  );
}

const SCENARIOS = [
  {
    n: 1,
    name: 'find_references A.run through the language server lists only A’s uses',
    turns: turns('n1'),
    async run({ page, fake, step }) {
      const hover = await step('TypeScript answers in the editor', () => waitTypeScript(page));
      log(`hover: ${hover.replace(/\s+/g, ' ').slice(0, 120)}`);
      await step('open the Lantern view', () => openLanternView(page));
      await step('ask in the view', () => askInView(page, QUESTION));
      await step('answered', () => waitLastAnswer(page, /A\.run is called in src\/main\.ts/, { timeoutMs: SERVER_START_MS }));
      await step('the view is idle', () => waitIdle(page));
      const result = await step('the tool result lists A’s uses only and says the language server answered', () => {
        const text = toolResult(fake);
        log(`tool result:\n${text}`);
        for (const use of A_USES) if (!text.includes(use)) throw new Error(`the result lacks ${use}`);
        for (const use of B_USES) if (text.includes(use)) throw new Error(`the result lists B's use ${use}`);
        if (!/language server/i.test(text)) throw new Error('the result does not say the language server answered');
        return text;
      });
      return result;
    },
  },
];

// ------------------------------------------------------------------ main

async function main() {
  const t0 = Date.now();
  const only = process.env.LANTERN_E2E_ONLY ? new Set(process.env.LANTERN_E2E_ONLY.split(',').map(Number)) : null;
  const scenarios = SCENARIOS.filter((s) => !only || only.has(s.n));
  const results = [];

  let root;
  let server;
  let browser;
  let page;
  let fake;
  try {
    const dirs = await prepareProfile('lantern-e2e-navigation-');
    root = dirs.root;
    const { workspace, userDataDir, extensionsDir, fakeDir } = dirs;
    await fsp.writeFile(path.join(workspace, 'src', 'shapes.ts'), SHAPES_TS);
    await fsp.writeFile(path.join(workspace, 'src', 'main.ts'), MAIN_TS);
    await fsp.writeFile(path.join(workspace, 'tsconfig.json'), TSCONFIG);

    const fakePort = await getFreePort();
    const { env } = await isolatedEnv(path.join(root, 'home'), {
      LANTERN_BASE_URL: `http://127.0.0.1:${fakePort}/v1`,
      LANTERN_MODEL: 'fake-model',
      OLLAMA_HOST: '127.0.0.1:9',
    });
    server = await timed('start code-server', () =>
      startCodeServer({
        workspace,
        userDataDir,
        extensionsDir,
        env,
        userSettings: {
          'lantern.approval.mode': 'workspace',
          'workbench.tips.enabled': false,
          'extensions.ignoreRecommendations': true,
          'telemetry.telemetryLevel': 'off',
        },
      }),
    );
    browser = await timed('launch chromium', () => launchBrowser({ headless: process.env.LANTERN_E2E_HEADED !== '1' }));
    page = await browser.newPage({ viewport: VIEWPORT });
    await timed('open the workbench', () => openWorkbench(page, server.port, workspace));

    for (const scenario of scenarios) {
      const label = `scenario ${scenario.n} (${scenario.name})`;
      let current = 'start';
      const st = Date.now();
      const step = async (name, fn) => {
        current = name;
        log(`  ${scenario.n}: ${name}`);
        return fn();
      };
      try {
        if (fake) await fake.stop();
        fake = undefined;
        fake = await step('start the fake model', () => startFake({ turns: scenario.turns, port: fakePort, dir: fakeDir, name: `nav${scenario.n}` }));
        if (scenario !== scenarios[0]) {
          await step('reset: clear notifications, new conversation', async () => {
            await clearNotifications(page);
            await openLanternView(page);
            await newConversation(page);
          });
        }
        await scenario.run({ page, fake, step });
        await step('the workspace .env never reached the model', async () => {
          if (fake.rawRecord().includes(CANARY)) throw new Error('the .env canary was sent to the model');
        });
        await screenshot(page, `e2e-navigation-${scenario.n}`);
        results.push({ label, ok: true });
        log(`PASS ${label} in ${((Date.now() - st) / 1000).toFixed(1)}s`);
      } catch (err) {
        results.push({ label, ok: false });
        const file = await screenshot(page, `e2e-navigation-${scenario.n}-failure`).catch(() => null);
        console.error(`FAIL ${label}: step "${current}" failed: ${err.stack || err}`);
        if (file) console.error(`  screenshot: ${file}`);
        console.error(`--- the view (text):\n${await textOf(panel(page).locator('body')).catch((e) => `(unreadable: ${e.message.split('\n')[0]})`)}`);
        console.error(`--- code-server output (tail):\n${tail(server.output())}`);
        console.error(`--- Lantern output channel (visible part):\n${await lanternOutput(page)}`);
        if (fake) console.error(`--- fake model stderr (tail):\n${tail(fake.stderr(), 20)}`);
        await page.keyboard.press('Escape').catch(() => {});
      }
    }
  } catch (err) {
    console.error(`e2e setup FAILED: ${err.stack || err}`);
    if (page) await screenshot(page, 'e2e-navigation-setup-failure').catch(() => {});
    if (server) console.error(`--- code-server output (tail):\n${tail(server.output())}`);
    for (const s of scenarios.slice(results.length)) results.push({ label: `scenario ${s.n} (${s.name})`, ok: false });
  } finally {
    await tearDown({ browser, fake, server, root });
  }
  return report(results, t0);
}

runSuite(main);
