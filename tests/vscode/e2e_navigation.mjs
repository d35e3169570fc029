// End-to-end test of `lantern/navigate` (issue 26) in a real workbench (code-server +
// Chromium), with code-server's built-in TypeScript language features, the server bundled
// in the .vsix and the scripted fake model (tests/fakes/openai_server.py).
//
// The workspace has two TypeScript classes with a same-named method, `A.run` and `B.run`,
// and a file that calls each. TypeScript's project also holds three more uses of `A.run`
// that Lantern must not show: `dist/use.ts` (`dist/` is in .gitignore), `src/.env.ts` (a
// name the policy refuses) and `src/linked.ts` (a symbolic link to a file outside the
// workspace); each holds a canary of its own. The fake model asks `find_references A.run`;
// what it gets back is the tool result in its next request. Scenarios, in this order:
//   1. `lantern.navigation` on (the default): once TypeScript answers in the editor (a hover
//      over `a.run` shows `A.run`), the question → the tool result lists A's uses only
//      (src/main.ts:5 and :8), not B's (src/main.ts:6, :7, src/shapes.ts:5), and says it
//      came from the language server.
//   2. the same question: the uses in the ignored folder, the refused name and behind the
//      link are counted as not shown, by reason, never named, and no canary reaches the model.
//   3. `find_symbol A.run` and `find_symbol parseInt`: A.run's definition carries a type line
//      from TypeScript's hover; parseInt has no definition in the workspace, so TypeScript is
//      asked for the definition from its use in src/clock.ts, and the answer (the TypeScript
//      library, outside the workspace) is counted, not shown.
//   4. `lantern.navigation` off in the Settings editor (so `false` in the user settings) and
//      Lantern: Restart Server (the log says the new server is not offered lantern/navigate)
//      → the same question → tree-sitter's answer alone (docs/tools.md, the fallback):
//      both classes' uses, no language server named or asked, and no `lantern/navigate`
//      reached the extension (none in its log since).
// Reads need no prompt (`lantern.approval.mode: "workspace"`).
//
//   bash tests/vscode/setup.sh        # once; cached in .tools
//   node tests/vscode/e2e_navigation.mjs
//
// Environment: LANTERN_E2E_SKIP_BUILD, LANTERN_E2E_VSIX, LANTERN_E2E_ONLY=1,2,3,4,
// LANTERN_E2E_HEADED, LANTERN_E2E_KEEP, as for e2e_context.mjs.
// Screenshots go to tests/artifacts/e2e-navigation-*.png.
// The last line of output is "<passed> passed, <failed> failed".
import fsp from 'node:fs/promises';
import path from 'node:path';

import { log, runScenarios, runSuite, waitForTab } from './harness.mjs';
import {
  lanternHooks,
  openLanternWorkbench,
  prepareProfile,
  tail,
  textOf,
  until,
} from './helpers.mjs';
import {
  askInView,
  command,
  messagesOf,
  openLanternView,
  resetConversation,
  userSettings,
  waitIdle,
  waitLastAnswer,
} from './view.mjs';

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

// The three uses of A.run that must not be shown, each with its canary.
const HIDDEN = {
  ignored: { file: 'dist/use.ts', canary: 'LANTERN_NAV_CANARY_IGNORED_51c2', source: 'import { A } from "../src/shapes";' },
  denied: { file: 'src/.env.ts', canary: 'LANTERN_NAV_CANARY_DENIED_8e07', source: 'import { A } from "./shapes";' },
  linked: { file: 'src/linked.ts', canary: 'LANTERN_NAV_CANARY_LINKED_3fa9', source: 'import { A } from "./shapes";' },
};
const hiddenSource = ({ canary, source }) => `${source}\nexport const uses = new A().run(); // ${canary}\n`;

const TSCONFIG = JSON.stringify(
  { compilerOptions: { target: 'ES2020', module: 'ES2020', strict: true }, files: ['src/.env.ts'], include: ['src/**/*.ts', 'dist/**/*.ts'] },
  null,
  2,
) + '\n';

const CLOCK_TS = 'export const parsed = parseInt("42", 10);\n';

const QUESTION = 'Where is A.run called?';
const turns = (id) => [{ tool_calls: [{ id, name: 'find_references', arguments: { name: 'A.run' } }] }, { content: 'A.run is called in src/main.ts.' }];

/** The texts of the tool results in the fake model's last request (`count` of them). */
function toolResults(fake, count) {
  const requests = fake.chatRequests();
  if (requests.length < 2) throw new Error(`expected 2 model requests, got ${requests.length}`);
  const tool = messagesOf(requests.at(-1)).filter((m) => m.role === 'tool');
  if (tool.length !== count) throw new Error(`expected ${count} tool result(s), got ${JSON.stringify(tool)}`);
  return tool.map((m) => m.content);
}

/** The text of the tool result for `find_references` in the fake model's last request. */
const toolResult = (fake) => toolResults(fake, 1)[0];

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

/** The Lantern output channel's log file (the extension's own, in the profile's logs). */
async function lanternLogFile(userDataDir) {
  const found = [];
  const walk = async (dir) => {
    for (const entry of await fsp.readdir(dir, { withFileTypes: true }).catch(() => [])) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (/Lantern\.log$/.test(entry.name)) found.push(full);
    }
  };
  await walk(path.join(userDataDir, 'logs'));
  if (found.length !== 1) throw new Error(`expected one Lantern log file under ${userDataDir}/logs, found ${JSON.stringify(found)}`);
  return found[0];
}

/**
 * Turn a boolean setting off in the Settings editor, as a user does, so VS Code both writes
 * the user settings and tells the extension. (A settings.json written behind its back is
 * not seen here: code-server reported no change in a minute, and the server restarted with
 * the old value — why an earlier version of this scenario failed.)
 */
async function uncheckSetting(page, key) {
  await command(page, 'Preferences: Open User Settings');
  const editor = page.locator('.settings-editor').first();
  await editor.waitFor({ state: 'visible', timeout: 15_000 });
  await editor.locator('.search-container .monaco-editor').first().click();
  await page.keyboard.type(`@id:${key}`, { delay: 10 });
  const checkbox = editor.locator('.setting-item-bool .setting-value-checkbox').first();
  await checkbox.waitFor({ state: 'visible', timeout: 15_000 });
  if ((await checkbox.getAttribute('aria-checked')) !== 'false') await checkbox.click();
  await until(`${key} unchecked`, async () => (await checkbox.getAttribute('aria-checked')) === 'false', { timeoutMs: 10_000 });
  await command(page, 'View: Close Editor');
}

const NAVIGATE_LINE = /lantern\/navigate references: /;

async function ask({ page, fake, step }) {
  await step('open the Lantern view', () => openLanternView(page));
  await step('ask in the view', () => askInView(page, QUESTION));
  await step('answered', () => waitLastAnswer(page, /A\.run is called in src\/main\.ts/, { timeoutMs: SERVER_START_MS }));
  await step('the view is idle', () => waitIdle(page));
  const text = toolResult(fake);
  log(`tool result:\n${text}`);
  return text;
}

const SCENARIOS = [
  {
    n: 1,
    name: 'find_references A.run through the language server lists only A’s uses',
    turns: turns('n1'),
    async run({ page, fake, step, userDataDir }) {
      const hover = await step('TypeScript answers in the editor', () => waitTypeScript(page));
      log(`hover: ${hover.replace(/\s+/g, ' ').slice(0, 120)}`);
      const text = await ask({ page, fake, step });
      await step('the tool result lists A’s uses only and says the language server answered', () => {
        for (const use of A_USES) if (!text.includes(use)) throw new Error(`the result lacks ${use}`);
        for (const use of B_USES) if (text.includes(use)) throw new Error(`the result lists B's use ${use}`);
        if (!/^\[language server: TypeScript\]$/m.test(text)) throw new Error('the result does not say the language server answered');
      });
      await step('the extension logged the lantern/navigate request it answered', async () => {
        const logged = await fsp.readFile(await lanternLogFile(userDataDir), 'utf8');
        if (!NAVIGATE_LINE.test(logged)) throw new Error(`no lantern/navigate line in the log:\n${tail(logged, 20)}`);
      });
    },
  },
  {
    n: 2,
    name: 'uses in an ignored folder, a refused name and behind a link are counted, never shown',
    turns: turns('n2'),
    async run({ page, fake, step }) {
      const text = await ask({ page, fake, step });
      await step('the language server answered; A’s uses are shown', () => {
        if (!/^\[language server: TypeScript\]$/m.test(text)) throw new Error('the result does not say the language server answered');
        for (const use of A_USES) if (!text.includes(use)) throw new Error(`the result lacks ${use}`);
      });
      await step('each refused use is counted by its reason, not named', () => {
        const notes = [
          /^\[1 more location\(s\) in ignored files, not shown\]$/m,
          /^\[1 more location\(s\) in files the name policy refuses, not shown\]$/m,
          /^\[1 more location\(s\) (behind symbolic links|outside the workspace), not shown\]$/m,
        ];
        for (const note of notes) if (!note.test(text)) throw new Error(`the result has no line ${note}`);
        for (const { file } of Object.values(HIDDEN)) if (text.includes(path.basename(file))) throw new Error(`the result names ${file}`);
      });
      await step('no canary of theirs reached the model', () => {
        const sent = fake.rawRecord();
        for (const { file, canary } of Object.values(HIDDEN)) if (sent.includes(canary)) throw new Error(`the canary of ${file} was sent to the model`);
      });
    },
  },
  {
    n: 3,
    name: 'find_symbol: a type line from the hover; a definition in the TypeScript library is counted, not shown',
    turns: [
      {
        tool_calls: [
          { id: 'n3a', name: 'find_symbol', arguments: { name: 'A.run' } },
          { id: 'n3b', name: 'find_symbol', arguments: { name: 'parseInt' } },
        ],
      },
      { content: 'A.run returns a number; parseInt is the library’s.' },
    ],
    async run({ page, fake, step }) {
      await step('open the Lantern view', () => openLanternView(page));
      await step('ask in the view', () => askInView(page, 'What does A.run return, and where is parseInt defined?'));
      await step('answered', () => waitLastAnswer(page, /parseInt is the library/, { timeoutMs: SERVER_START_MS }));
      await step('the view is idle', () => waitIdle(page));
      const [symbol, library] = toolResults(fake, 2);
      log(`find_symbol A.run:\n${symbol}\nfind_symbol parseInt:\n${library}`);
      await step('A.run’s definition has a type line from TypeScript’s hover', () => {
        if (!/^src\/shapes\.ts:2\b.*\brun\b/m.test(symbol)) throw new Error('the result does not list A.run at src/shapes.ts:2');
        if (!/^\[language server: TypeScript\]$/m.test(symbol)) throw new Error('the result does not say the language server answered');
        if (!/^ {2}type: .*run\(\): number/m.test(symbol)) throw new Error('the result has no type line with run(): number');
      });
      await step('parseInt: the library’s definition is counted as outside the workspace, not shown', () => {
        if (!/^\[no definition of 'parseInt' under \.\]$/m.test(library)) throw new Error('the result does not say no definition was shown');
        if (!/^\[language server: TypeScript\]$/m.test(library)) throw new Error('the result does not say the language server answered');
        if (!/^\[\d+ more location\(s\) outside the workspace, not shown\]$/m.test(library)) throw new Error('the result does not count the library’s definition');
        if (/\.d\.ts|node_modules|[/\\]typescript[/\\]/.test(library)) throw new Error('the result names the library file');
      });
    },
  },
  {
    n: 4,
    name: 'lantern.navigation off: tree-sitter answers, and no lantern/navigate reaches the extension',
    turns: turns('n4'),
    async run({ page, fake, step, userDataDir }) {
      await step('open the Lantern view', () => openLanternView(page));
      const logFile = await step('the extension’s log file', () => until('the Lantern log file', () => lanternLogFile(userDataDir), { timeoutMs: 30_000 }));
      await step('turn lantern.navigation off in the Settings editor: the user settings say so', async () => {
        await uncheckSetting(page, 'lantern.navigation');
        await until('lantern.navigation: false in the user settings file', async () => (await userSettings(userDataDir))['lantern.navigation'] === false, { timeoutMs: 15_000 });
      });
      const restarted = await step('Lantern: Restart Server: the new server is not offered lantern/navigate', () =>
        until('a server started with lantern.navigation off', async () => {
          const before = (await fsp.readFile(logFile, 'utf8')).length;
          await command(page, 'Lantern: Restart Server');
          const started = await until('the restarted server’s capabilities in the log', async () => {
            const text = (await fsp.readFile(logFile, 'utf8')).slice(before);
            return /lantern\/navigate \(lantern\.navigation is on\)|lantern\.navigation is off: the server is not offered/.exec(text)?.[0];
          }, { timeoutMs: SERVER_START_MS });
          log(`restarted: ${started}`);
          return started.startsWith('lantern.navigation is off') && { offset: before };
        }, { timeoutMs: 60_000, intervalMs: 2_000 }),
      );
      const text = await ask({ page, fake, step });
      await step('the tool result is tree-sitter’s alone: both classes’ uses, no language server asked', () => {
        for (const use of [...A_USES, ...B_USES]) if (!text.includes(use)) throw new Error(`the result lacks ${use}`);
        // "[syntax only: …]" would mean a language server was asked and did not answer.
        const said = /^\[(language server|syntax only): .*\]$/m.exec(text);
        if (said) throw new Error(`the result says ${said[0]}`);
      });
      await step('no lantern/navigate reached the extension since the restart', async () => {
        const since = (await fsp.readFile(logFile, 'utf8')).slice(restarted.offset);
        const asked = since.split('\n').filter((line) => line.includes('lantern/navigate') && !line.includes('not offered'));
        if (asked.length) throw new Error(`the extension got lantern/navigate: ${asked.join('\n')}`);
      });
      await step('no canary of the refused uses reached the model', () => {
        const sent = fake.rawRecord();
        for (const { file, canary } of Object.values(HIDDEN)) if (sent.includes(canary)) throw new Error(`the canary of ${file} was sent to the model`);
      });
    },
  },
];

// ------------------------------------------------------------------ main

async function main() {
  return runScenarios({
    prefix: 'e2e-navigation',
    scenarios: SCENARIOS,
    ...lanternHooks({ tag: 'nav', reset: resetConversation }),
    async setUp(ctx) {
      const dirs = await prepareProfile('lantern-e2e-navigation-');
      ctx.root = dirs.root;
      const { workspace, userDataDir, fakeDir } = dirs;
      ctx.fakeDir = fakeDir;
      ctx.userDataDir = userDataDir;
      await fsp.writeFile(path.join(workspace, 'src', 'shapes.ts'), SHAPES_TS);
      await fsp.writeFile(path.join(workspace, 'src', 'main.ts'), MAIN_TS);
      await fsp.writeFile(path.join(workspace, 'src', 'clock.ts'), CLOCK_TS);
      await fsp.writeFile(path.join(workspace, 'tsconfig.json'), TSCONFIG);
      await fsp.writeFile(path.join(workspace, '.gitignore'), 'dist/\n');
      await fsp.mkdir(path.join(workspace, 'dist'), { recursive: true });
      await fsp.writeFile(path.join(workspace, HIDDEN.ignored.file), hiddenSource(HIDDEN.ignored));
      await fsp.writeFile(path.join(workspace, HIDDEN.denied.file), hiddenSource(HIDDEN.denied));
      const outside = path.join(ctx.root, 'outside', 'linked.ts');
      await fsp.mkdir(path.dirname(outside), { recursive: true });
      await fsp.writeFile(outside, hiddenSource(HIDDEN.linked));
      await fsp.symlink(outside, path.join(workspace, HIDDEN.linked.file));

      await openLanternWorkbench(ctx, dirs, { userSettings: { 'lantern.approval.mode': 'workspace' } });
    },
  });
}

runSuite(main);
