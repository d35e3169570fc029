// End-to-end accessibility test of the Lantern view (issue 29) in a real workbench
// (code-server + Chromium, window 1280×800), with the server bundled in the .vsix and the
// scripted fake model (tests/fakes/openai_server.py). axe-core runs inside the view's own
// document (tests/vscode/a11y.mjs) in each built-in theme kind: Default Dark Modern (set
// in the user settings at start), Default Light Modern, Default High Contrast and Default
// High Contrast Light (each picked with Preferences: Color Theme).
//
//   bash tests/vscode/setup.sh        # once; cached in .tools
//   (cd vscode-extension && npm ci)   # axe-core is one of its devDependencies
//   node tests/vscode/e2e_a11y.mjs
//
// Scenarios, in this order, in one window (2–4 build on the question 2 asks):
//   1. the "connect a model" card (no model set): axe finds no serious or critical
//      violation, nor page-has-heading-one or region, in any of the four themes.
//   2. Connect a Model… picks the fake model (a local Ollama); a question reads two files, each asked about in the view: while the
//      first waits, no approval notification is raised (the view shows it), and axe finds
//      nothing serious in any theme; both are allowed in the view.
//   3. the answer, with references in its running text and a code block: axe again in
//      every theme; the references in running text are underlined; a screenshot of the
//      side bar in each theme (LANTERN_E2E_UPDATE_DOCS=1 copies them to docs/images/).
//   4. the side bar at 240 px: no text of the view is cut without a tooltip holding it, the
//      tool rows (`src/routing/settings_loader.py · lines 1–400`) show their whole target
//      and the empty question box its whole placeholder.
//   5. the view moved to the secondary side bar: a question waits for approval; no
//      notification lies over the question box, Ask or the approval's buttons. The
//      secondary side bar closed, the approval comes as a notification; Allow there answers.
//
// Environment:
//   LANTERN_E2E_SKIP_BUILD=1   use vscode-extension/lantern-linux-x64.vsix as it is
//   LANTERN_E2E_VSIX=path      install this .vsix (implies no build)
//   LANTERN_E2E_ONLY=1,3       run only these scenarios (3 and 4 need 2's answer)
//   LANTERN_E2E_UPDATE_DOCS=1  copy the theme screenshots to docs/images/vscode-theme-*.png
//   LANTERN_E2E_HEADED=1       show the browser
//   LANTERN_E2E_KEEP=1         keep the temp folder (workspace, user data, fake model records)
//
// axe's counts by impact, per scenario and theme, go to tests/artifacts/e2e-a11y-axe.json;
// screenshots to tests/artifacts/e2e-a11y-*.png.
// The last line of output is "<passed> passed, <failed> failed".
import fsp from 'node:fs/promises';
import path from 'node:path';

import { ARTIFACTS_DIR, REPO_ROOT, log, runScenarios, runSuite, screenshot } from './harness.mjs';
import {
  APPROVAL,
  lanternHooks,
  lastTurn,
  openLanternWorkbench,
  panel,
  prepareProfile,
  readApp,
  sleep,
  textOf,
  until,
  waitToolStatus,
} from './helpers.mjs';
import { THEMES, clippedText, countByImpact, describeViolations, overlaps, runAxe, setTheme, toastRects } from './a11y.mjs';
import {
  ANSWER_MS,
  answerApprovalInView,
  askInView,
  command,
  openLanternView,
  quickRow,
  quickRows,
  waitIdle,
  waitLastAnswer,
  waitPendingApproval,
} from './view.mjs';

const VIEWPORT = { width: 1280, height: 800 };
const SERVER_START_MS = 240_000; // the first question prepares the server's Python environment (busy 2-core box)
const NARROW = 240;
const MODEL = 'fake-model';
const LOADER = 'src/routing/settings_loader.py';
const ANSWER = [
  'The router dispatches in `handle_request` (src/app.py:10-12): it looks the path up in `ROUTES`',
  'and falls back to `not_found`; `route` registers a handler. Settings come from',
  `${LOADER}:1-3, and the package starts at src/routing/__init__.py:1.`,
  '',
  '```python',
  'class NotFound(Exception):',
  '    status = 404',
  '',
  'def handle_request(request):',
  '    # unknown paths answer 404',
  '    payload = json.loads(request.body or "{}")',
  '    return ROUTES.get(request.path, not_found)(payload)',
  '```',
].join('\n');
const ANSWER_SHOWN = /The router dispatches in handle_request/;
const BLOCKING = new Set(['serious', 'critical']);
const NAMED_RULES = new Set(['page-has-heading-one', 'region']);

/** src/routing/ beside the workspace's src/app.py: a settings loader and the package. */
async function addRouting(workspace) {
  const dir = path.join(workspace, 'src', 'routing');
  await fsp.mkdir(dir, { recursive: true });
  const lines = ['"""Load the router\'s settings."""', 'import json', 'DEFAULTS = {"debug": False}'];
  for (let i = 4; i <= 420; i++) lines.push(`SETTING_${i} = ${i}  # one setting per line`);
  await fsp.writeFile(path.join(dir, 'settings_loader.py'), lines.join('\n') + '\n');
  await fsp.writeFile(path.join(dir, '__init__.py'), '"""The routing package."""\n');
}

const axeLog = {}; // scenario → theme → counts by impact

/** axe in each theme: record the counts, fail on anything serious or critical (or a named rule). */
async function axeInEveryTheme(ctx, state, { onTheme } = {}) {
  const { page, step } = ctx;
  const failures = [];
  for (const theme of THEMES) {
    await step(`${theme.name}: axe in the view (${state})`, async () => {
      await setTheme(page, theme);
      const violations = await runAxe(page);
      const counts = countByImpact(violations);
      (axeLog[state] ??= {})[theme.slug] = { counts, rules: violations.map((v) => `${v.impact} ${v.id} ×${v.nodes.length}`) };
      log(`axe ${state} / ${theme.slug}: ${JSON.stringify(counts)} ${violations.map((v) => v.id).join(' ')}`);
      const bad = violations.filter((v) => BLOCKING.has(v.impact) || NAMED_RULES.has(v.id));
      if (bad.length) failures.push(`${theme.name}:\n  ${describeViolations(bad)}`);
      if (onTheme) await onTheme(theme);
    });
  }
  if (failures.length) throw new Error(`axe found violations in the view (${state}):\n${failures.join('\n')}`);
}

/** The side bar's sash dragged so the part is `width` px wide; returns the view's width. */
async function sideBarWidth(page, width) {
  const bar = page.locator('.part.sidebar').first();
  const box = await bar.boundingBox();
  if (!box) throw new Error('no side bar on screen');
  const y = box.y + box.height / 2;
  await page.mouse.move(box.x + box.width - 1, y);
  await page.mouse.down();
  await page.mouse.move(box.x + (box.width + width) / 2, y, { steps: 4 });
  await page.mouse.move(box.x + width, y, { steps: 4 });
  await page.mouse.up();
  await sleep(500);
  return panel(page).locator('body').evaluate(() => document.documentElement.clientWidth);
}

/** Every rectangle that must stay uncovered while an approval waits: the question box, Ask, the buttons. */
async function controlRects(page) {
  const rects = [];
  const add = async (name, locator) => {
    for (let i = 0; i < (await locator.count()); i++) {
      const box = await locator.nth(i).boundingBox();
      if (box) rects.push({ name: `${name}${i ? ` ${i + 1}` : ''}`, ...box });
    }
  };
  await add('question box', panel(page).locator('#follow-up-text'));
  await add('Ask', panel(page).locator('#follow-up button[type="submit"]'));
  await add('approval button', lastTurn(page).locator('.approval button.approval-action'));
  return rects;
}

const SCENARIOS = [
  {
    n: 1,
    name: 'the connect card in every theme: no serious axe violation, a heading and landmarks',
    turns: [],
    async run(ctx) {
      const { page, step } = ctx;
      await step('open the Lantern view', () => openLanternView(page));
      await step('the view shows the "connect a model" card', () => panel(page).locator('#setup').waitFor({ state: 'visible', timeout: 60_000 }));
      await axeInEveryTheme(ctx, 'connect card');
    },
  },
  {
    n: 2,
    name: 'a pending approval in every theme, shown in the view and not as a notification',
    turns: [readApp('a1'), { tool_calls: [{ id: 'a2', name: 'read_file', arguments: { path: LOADER } }] }, { content: ANSWER }],
    async run(ctx) {
      const { page, step, fakePort } = ctx;
      await step('Connect a Model… on the card: Ollama (the fake), its model', async () => {
        await openLanternView(page);
        await panel(page).locator('#setup button.setup-action', { hasText: 'Connect a Model…' }).click();
        await (await quickRow(page, { title: 'Connect a Model', label: /Ollama/, description: `127.0.0.1:${fakePort}`, timeoutMs: SERVER_START_MS })).click();
        await (await quickRow(page, { title: 'Pick Model', label: MODEL, timeoutMs: 60_000 })).click();
        await until('the model chip to name the model', async () => (await textOf(panel(page).locator('#model-chip'))).includes(MODEL), { timeoutMs: 30_000 });
      });
      await step('ask in the view', () => askInView(page, 'How does the router dispatch a request?'));
      await step('the approval shows in the view', () => waitPendingApproval(page, { timeoutMs: SERVER_START_MS }));
      await step('no approval notification while the view shows it', async () => {
        await sleep(1500);
        const toasts = await toastRects(page);
        const approval = toasts.filter((t) => APPROVAL.test(t.text));
        if (approval.length) throw new Error(`the approval is also a notification: ${JSON.stringify(approval)}`);
        log(`toasts while the approval waits: ${JSON.stringify(toasts)}`);
      });
      await axeInEveryTheme(ctx, 'pending approval', {
        onTheme: async (theme) => screenshot(page, `e2e-a11y-approval-${theme.slug}`),
      });
      await step('Allow in the view', () => lastTurn(page).locator('.approval button.approval-action', { hasText: /^\s*Allow\s*$/ }).first().click());
      await step(`the read of ${LOADER} is asked about in the view; Allow`, async () => {
        const waiting = lastTurn(page).locator('.approval:has(button.approval-action) .approval-message');
        await until('the second approval', async () => /settings_loader\.py/.test(await textOf(waiting.last()).catch(() => '')), { timeoutMs: ANSWER_MS });
        await answerApprovalInView(page, 'Allow');
      });
      await step('answered', () => waitLastAnswer(page, ANSWER_SHOWN));
      await step('the view is idle', () => waitIdle(page));
    },
  },
  {
    n: 3,
    name: 'an answer with references and a code block in every theme; references in running text underlined',
    async run(ctx) {
      const { page, step } = ctx;
      await step('the answer has a code block and references', async () => {
        await lastTurn(page).locator('.answer pre code').first().waitFor({ state: 'attached', timeout: 15_000 });
        await lastTurn(page).locator('.references a.lantern-ref').first().waitFor({ state: 'attached', timeout: 15_000 });
      });
      await step('the references in running text are underlined', async () => {
        const decorations = await lastTurn(page)
          .locator('.answer p a.lantern-ref')
          .evaluateAll((links) => links.map((a) => ({ text: a.textContent, line: getComputedStyle(a).textDecorationLine })));
        if (decorations.length < 2) throw new Error(`expected the answer's references as links in its text: ${JSON.stringify(decorations)}`);
        const plain = decorations.filter((d) => !d.line.includes('underline'));
        if (plain.length) throw new Error(`links told apart by colour alone: ${JSON.stringify(plain)}`);
      });
      await page.mouse.move(900, 400); // no hover tooltip over the view
      await axeInEveryTheme(ctx, 'answered turn', {
        onTheme: async (theme) => {
          const file = path.join(ARTIFACTS_DIR, `e2e-a11y-theme-${theme.slug}.png`);
          await fsp.mkdir(ARTIFACTS_DIR, { recursive: true });
          await page.locator('.part.sidebar').first().screenshot({ path: file });
          if (process.env.LANTERN_E2E_UPDATE_DOCS === '1') await fsp.copyFile(file, path.join(REPO_ROOT, 'docs', 'images', `vscode-theme-${theme.slug}.png`));
        },
      });
    },
  },
  {
    n: 4,
    name: `a ${NARROW} px view loses no text`,
    async run({ page, step }) {
      const width = await step(`drag the side bar to ${NARROW} px`, async () => {
        const w = await sideBarWidth(page, NARROW);
        if (Math.abs(w - NARROW) > 20) throw new Error(`the view is ${w} px wide`);
        return w;
      });
      log(`view width: ${width}`);
      await step('the tool rows show their whole target', async () => {
        const rows = await lastTurn(page).locator('.tools .tool-target').evaluateAll((els) =>
          els.map((el) => ({ text: el.textContent, fits: el.scrollWidth <= el.clientWidth + 1, width: el.clientWidth, needs: el.scrollWidth })),
        );
        if (!rows.some((r) => r.text.includes(LOADER))) throw new Error(`no tool row for ${LOADER}: ${JSON.stringify(rows)}`);
        const cut = rows.filter((r) => !r.fits);
        if (cut.length) throw new Error(`tool rows cut: ${JSON.stringify(cut)}`);
      });
      await step('no text in the view is cut without its whole text in a tooltip', async () => {
        const cut = await clippedText(page);
        if (cut.length) throw new Error(`cut: ${JSON.stringify(cut)}`);
      });
      await step('the empty question box shows its whole placeholder', async () => {
        const box = await panel(page).locator('#follow-up-text').evaluate((el) => {
          // The placeholder wraps as its text would: measure that text in the box as it is.
          el.value = el.placeholder;
          const needs = el.scrollHeight;
          el.value = '';
          return { needs, height: el.clientHeight };
        });
        if (box.needs > box.height + 1) throw new Error(`the placeholder needs ${box.needs} px, the box is ${box.height} px`);
      });
      await screenshot(page, 'e2e-a11y-narrow');
      await step('the side bar back to 400 px', () => sideBarWidth(page, 400));
    },
  },
  {
    n: 5,
    name: 'in the secondary side bar nothing of Lantern covers its controls; hidden, the approval is a notification',
    turns: [readApp('s1'), { content: 'The handler is `handle_request`, at src/app.py:10-12.' }],
    async run({ page, step }) {
      await step('View: Move View → Lantern Conversation → the secondary side bar', async () => {
        await command(page, 'View: Move View', { opensPicker: true });
        await pickRow(page, /^\s*Conversation\s*$/, /Lantern/);
        await pickRow(page, /Secondary Side Bar/);
        // A webview is drawn over its part, not inside it: compare where they are.
        await until('the view in the secondary side bar', async () => {
          const bar = await page.locator('.part.auxiliarybar').first().boundingBox().catch(() => null);
          const view = await page.locator('iframe.webview >> visible=true').first().boundingBox().catch(() => null);
          return bar && view && bar.width > 0 && view.x >= bar.x - 1 && view.x + view.width <= bar.x + bar.width + 1;
        }, { timeoutMs: 30_000 });
      });
      await step('the view shows its question box there', () => openLanternViewIn(page));
      await step('a new conversation', () => newConversationIn(page));
      await step('ask in the view', () => askInView(page, 'Where is the request handler?'));
      await step('the approval shows in the view', () => waitPendingApproval(page));
      await step('no notification lies over the question box, Ask or the approval’s buttons', async () => {
        await sleep(1500); // a notification slides in
        const toasts = await toastRects(page);
        const controls = await controlRects(page);
        const covered = controls.flatMap((c) => toasts.filter((t) => overlaps(c, t)).map((t) => `${c.name} under "${t.text}"`));
        log(`toasts: ${JSON.stringify(toasts)}; controls: ${JSON.stringify(controls.map((c) => c.name))}`);
        if (controls.length < 6) throw new Error(`expected the box, Ask and four buttons: ${JSON.stringify(controls)}`);
        if (covered.length) throw new Error(`covered: ${covered.join('; ')}`);
      });
      await screenshot(page, 'e2e-a11y-secondary-approval');
      await step('close the secondary side bar: the approval comes as a notification', async () => {
        await command(page, 'View: Toggle Secondary Side Bar Visibility');
        await page.locator('.notification-toast').filter({ hasText: APPROVAL }).first().waitFor({ state: 'visible', timeout: 30_000 });
      });
      await step('Allow on the notification', async () => {
        const toast = page.locator('.notification-toast').filter({ hasText: APPROVAL }).first();
        await toast.locator('a.monaco-button', { hasText: /^\s*Allow\s*$/ }).first().click();
      });
      await step('open the secondary side bar again: read_file done, answered', async () => {
        await command(page, 'View: Toggle Secondary Side Bar Visibility');
        await waitToolStatus(page, 'read_file', /^done/, { timeoutMs: ANSWER_MS });
        await waitLastAnswer(page, /The handler is handle_request/);
      });
    },
  },
];

/** Click the row of the open quick pick whose label matches `label` (and whose text matches `text`). */
async function pickRow(page, label, text) {
  let rows = page.locator('.quick-input-widget .quick-input-list .monaco-list-row').filter({ has: page.locator('.label-name:visible', { hasText: label }) });
  if (text) rows = rows.filter({ hasText: text });
  try {
    await rows.first().waitFor({ state: 'visible', timeout: 15_000 });
  } catch (err) {
    throw new Error(`no row ${label} in the quick pick; rows ${JSON.stringify(await quickRows(page))}`, { cause: err });
  }
  await rows.first().click();
}

/** The view in the secondary side bar shows its question box (opened by Lantern: Focus Question Box). */
async function openLanternViewIn(page) {
  const box = panel(page).locator('#follow-up-text');
  await until('the question box in the secondary side bar', async () => {
    if (await box.isVisible().catch(() => false)) return true;
    await command(page, 'Lantern: Focus Question Box').catch(() => {});
    await box.waitFor({ state: 'visible', timeout: 5_000 }).catch(() => {});
    return box.isVisible();
  }, { timeoutMs: 60_000 });
}

async function newConversationIn(page) {
  await command(page, 'Lantern: New Conversation');
  await until('no turns in the view', async () => (await panel(page).locator('#turns article.turn').count()) === 0, { timeoutMs: 15_000 });
}

// ------------------------------------------------------------------ main

async function main() {
  return runScenarios({
    prefix: 'e2e-a11y',
    scenarios: SCENARIOS,
    ...lanternHooks({ tag: 'a' }),
    async setUp(ctx, chosen) {
      const dirs = await prepareProfile('lantern-e2e-a11y-');
      ctx.root = dirs.root;
      const { workspace, fakeDir } = dirs;
      Object.assign(ctx, { fakeDir, models: [MODEL] });
      await addRouting(workspace);
      // No model set: the view shows its connect card; the fake model plays a local Ollama.
      await openLanternWorkbench(ctx, dirs, {
        ollama: true,
        userSettings: {
          'lantern.editorContext': false,
          'lantern.approval.timeoutSeconds': 900,
          'workbench.colorTheme': THEMES[0].name,
        },
        viewport: VIEWPORT,
      });
      if (!chosen.some((s) => s.n === 2)) log('NOTE: scenarios 3 to 5 start from the answer and the model scenario 2 leaves');
    },
    async finish() {
      await fsp.mkdir(ARTIFACTS_DIR, { recursive: true });
      await fsp.writeFile(path.join(ARTIFACTS_DIR, 'e2e-a11y-axe.json'), JSON.stringify(axeLog, null, 2));
    },
  });
}

runSuite(main);
