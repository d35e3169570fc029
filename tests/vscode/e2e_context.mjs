// End-to-end test of the context window in the Lantern VS Code view, in a real workbench
// (code-server + Chromium, window 1024×768), against the server bundled in the .vsix and
// the scripted fake model (tests/fakes/openai_server.py), which answers each request with
// an OpenAI stream whose last chunk carries `usage`, as the real servers do.
//
// The user settings give a small window, `lantern.maxContextTokens: 6000`, and
// `lantern.approval.mode: "workspace"` (reads ask nothing). Each scenario starts a new
// conversation; in this order:
//   1. The meter: a question with a read → while the answer is on its way the meter shows
//      the first request's tokens (from its `usage` event), then the last request's after
//      the answer: "2,140 of 6,000 tokens (35%) · window: the maxContextTokens setting"
//      (the fake's own counts), as the meter's tooltip and accessible label, a bar about a
//      third full, no warning; the status bar item's tooltip repeats the line.
//   2. Compaction: a read of a long file, then a long answer → the meter warns past 80%
//      (the theme's warning colour, "Context N% full: earlier turns will be summarized") →
//      a follow-up: Lantern asks the model to summarize the earlier turns (a request of
//      its own, without tools, that carries the early fact) → a closed divider "Earlier
//      turns summarized (A → B tokens)" at the top of the follow-up's turn → Enter on it
//      opens the summary, shown as text (its markup is not made into elements) → the
//      follow-up's request carries the summary with the early fact instead of the turns →
//      Developer: Reload Window → the divider is still there and still opens.
//   3. A prompt the endpoint cut: the second request's `usage.prompt_tokens` is far below
//      what was sent → the turn shows the warning with its fix, in the editor's words
//      (no command-line flag).
// The token counts each scripted reply reports are about 1.3 tokens per 4 characters of
// what Lantern sends (a code tokenizer's rate). Scenario 2 expects no compaction in the
// first two questions and one in the third: it holds while the fake's counts stay within
// about 1.1–1.6 times Lantern's own estimate, so a much longer system prompt or tool list
// needs new counts here (the failure says which request compacted instead).
//
//   bash tests/vscode/setup.sh        # once; cached in .tools
//   node tests/vscode/e2e_context.mjs
//
// Environment:
//   LANTERN_E2E_SKIP_BUILD=1   use vscode-extension/lantern-linux-x64.vsix as it is
//   LANTERN_E2E_VSIX=path      install this .vsix (implies no build)
//   LANTERN_E2E_ONLY=1,3       run only these scenarios
//   LANTERN_E2E_UPDATE_SCREENSHOT=1
//                              also copy the side bar pictures (meter, warning meter,
//                              divider closed and open) to docs/images/vscode-context-*.png
//   LANTERN_E2E_HEADED=1       show the browser
//   LANTERN_E2E_KEEP=1         keep the temp folder (workspace, user data, fake model records)
//
// Screenshots go to tests/artifacts/e2e-context-*.png (and e2e-context-<n>-failure.png).
// The last line of output is "<passed> passed, <failed> failed".
import fsp from 'node:fs/promises';
import path from 'node:path';

import {
  ARTIFACTS_DIR,
  REPO_ROOT,
  log,
  runScenarios,
  runSuite,
  screenshot,
  timed,
} from './harness.mjs';
import {
  lanternHooks,
  lastTurn,
  openLanternWorkbench,
  panel,
  prepareProfile,
  sleep,
  textOf,
  until,
} from './helpers.mjs';
import {
  askInView,
  command,
  messagesOf,
  openLanternView,
  resetConversation,
  waitIdle,
  waitLastAnswer,
} from './view.mjs';

const WINDOW = 6000;
const SERVER_START_MS = 240_000; // the first start prepares a Python environment (busy 2-core box)
const FLAG = /(^|\s)--[a-z]/; // a command-line flag, never shown in the editor

const usage = (prompt, completion) => ({ prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion });
const read = (id, file) => ({ tool_calls: [{ id, name: 'read_file', arguments: { path: file } }] });

/** src/routes.py: 150 lines, long enough that its read takes the share of the window it may. */
const ROUTES_PY = Array.from({ length: 150 }, (_, i) => `ROUTE_${String(i).padStart(3, '0')} = "/api/v1/resource/${i}/items"  # handled by handler_${i}\n`).join('');

const FACT = 'BLUEBIRD-42';
const A1 = `The routes table is in src/routes.py:1-150. Remember: the release codename is ${FACT}. ${'Each route maps a path to its handler. '.repeat(14)}`;
const A2 = `The handlers follow one pattern: ${'each handler reads the request, checks it and answers with JSON. '.repeat(92)}`;
const SUMMARY = `The developer asked where the routes are: src/routes.py:1-150, one line per route; the release codename is ${FACT}. <b>Then</b> how the handlers work: each reads the request, checks it and answers with JSON.`;

// ------------------------------------------------------------------ the view's context parts

const meter = (page) => panel(page).locator('#context-meter');

/** What the meter shows: its label and tooltip, the percent beside the bar, the bar's fill. */
async function meterState(page) {
  return meter(page).evaluate((el) => {
    const fill = el.querySelector('.meter-fill');
    const bar = el.querySelector('.meter-bar');
    const probe = document.createElement('span');
    probe.style.color = 'var(--vscode-editorWarning-foreground)';
    document.body.append(probe);
    const warning = getComputedStyle(probe).color;
    probe.remove();
    return {
      hidden: el.hidden,
      role: el.getAttribute('role'),
      label: el.getAttribute('aria-label') ?? '',
      title: el.title,
      text: el.querySelector('.meter-text')?.textContent ?? '',
      warn: el.classList.contains('warn'),
      filled: fill && bar ? fill.getBoundingClientRect().width / bar.getBoundingClientRect().width : -1,
      fillColour: fill ? getComputedStyle(fill).backgroundColor : '',
      warningColour: warning,
    };
  });
}

async function waitMeter(page, re, { timeoutMs = 30_000 } = {}) {
  let last;
  try {
    return await until(`the meter to read ${re}`, async () => {
      last = await meterState(page);
      return !last.hidden && re.test(last.label) && last;
    }, { timeoutMs });
  } catch (err) {
    throw new Error(`${err.message}; the meter: ${JSON.stringify(last)}`);
  }
}

/** The status bar item's tooltip, shown by hovering it. */
async function statusTooltip(page) {
  const item = page.locator('.statusbar-item', { hasText: 'fake-model' }).first();
  await item.hover();
  const hover = page.locator('.monaco-hover, .workbench-hover').filter({ hasText: 'Lantern asks' }).first();
  await hover.waitFor({ state: 'visible', timeout: 10_000 });
  const text = (await hover.innerText()).replace(/\s+/g, ' ').trim();
  await page.mouse.move(660, 300);
  return text;
}

/** A picture of the side bar (the Lantern view) only: small, for the docs. */
async function sidebarShot(page, name) {
  await page.mouse.move(660, 300); // no hover tooltip over the view
  await sleep(500);
  await fsp.mkdir(ARTIFACTS_DIR, { recursive: true });
  const file = path.join(ARTIFACTS_DIR, `e2e-context-${name}.png`);
  await page.locator('.part.sidebar').first().screenshot({ path: file });
  if (process.env.LANTERN_E2E_UPDATE_SCREENSHOT === '1') {
    await fsp.copyFile(file, path.join(REPO_ROOT, 'docs', 'images', `vscode-context-${name}.png`));
    log(`copied ${path.basename(file)} to docs/images/vscode-context-${name}.png`);
  }
  return file;
}

const divider = (page) => lastTurn(page).locator('.compactions details.compaction');

async function dividerState(page) {
  return divider(page).evaluate((el) => ({
    open: el.open,
    head: (el.querySelector('summary')?.textContent ?? '').trim(),
    summaryShown: el.querySelector('.compaction-summary')?.checkVisibility() ?? false,
    summary: el.querySelector('.compaction-summary')?.textContent ?? '',
    elements: [...el.querySelectorAll('.compaction-summary *')].map((e) => e.tagName),
    first: el.closest('article.turn')?.firstElementChild?.dataset.part ?? '',
  }));
}

/** Enter on the divider's summary line (as a keyboard user would) and wait for the text. */
async function openDivider(page) {
  await divider(page).locator('summary').focus();
  await divider(page).locator('summary').press('Enter');
  return until('the divider to open to the summary', async () => {
    const d = await dividerState(page);
    return d.open && d.summaryShown && d;
  }, { timeoutMs: 5000 });
}

// ------------------------------------------------------------------ scenarios

const SCENARIOS = [
  {
    n: 1,
    name: 'the meter after an answer, and while it runs',
    turns: [
      { ...read('c1', 'src/app.py'), usage: usage(1950, 10) },
      // Six seconds before the answer's first byte: meanwhile the meter shows the first request.
      { content: 'The request handler is `handle_request`, at src/app.py:10-12.', usage: usage(2100, 40), delay: 6 },
    ],
    async run({ page, fake, step, shot }) {
      await step('ask in the view', () => askInView(page, 'Where is the request handler?'));
      const running = await step('while the answer is on its way: the first request, from its usage event', async () => {
        const seen = await waitMeter(page, /1,960 of 6,000 tokens \(32%\)/, { timeoutMs: SERVER_START_MS });
        if (!(await panel(page).locator('#stop').isVisible())) throw new Error('the question had already ended: the meter was not updated while it ran');
        return seen;
      });
      log(`meter while running: ${running.label}`);
      await step('the answer', () => waitLastAnswer(page, /The request handler is handle_request/));
      await step('the view is idle', () => waitIdle(page));
      const after = await step('the meter: the last request and its reply, of the window from the setting', () =>
        waitMeter(page, /^Context: 2,140 of 6,000 tokens \(35%\) · window: .*maxContextTokens/),
      );
      log(`meter: ${JSON.stringify(after)}`);
      await step('its tooltip is its label; a bar a third full, the percent beside it, no warning', async () => {
        if (after.title !== after.label) throw new Error(`title ${JSON.stringify(after.title)} differs from the label`);
        if (after.role !== 'meter') throw new Error(`role ${after.role}`);
        if (after.text !== '35%') throw new Error(`text beside the bar: ${JSON.stringify(after.text)}`);
        if (after.warn || /full:/.test(after.label)) throw new Error('the meter warns at 35%');
        if (Math.abs(after.filled - 2140 / WINDOW) > 0.05) throw new Error(`the bar is ${after.filled} full, expected ${2140 / WINDOW}`);
        if (after.fillColour === after.warningColour) throw new Error('the bar has the warning colour at 35%');
      });
      await step('the fake counted what the meter shows', () => {
        if (fake.chatRequests().length !== 2) throw new Error(`expected 2 model requests, got ${fake.chatRequests().length}`);
      });
      const tooltip = await step('the status bar tooltip repeats the line', async () => {
        const text = await statusTooltip(page);
        if (!text.includes(after.label)) throw new Error(`the tooltip ${JSON.stringify(text)} lacks ${JSON.stringify(after.label)}`);
        return text;
      });
      log(`status bar tooltip: ${tooltip}`);
      await shot('meter');
      await sidebarShot(page, 'meter');
    },
  },
  {
    n: 2,
    name: 'a long conversation in a small window is summarized, and the follow-up keeps an early fact',
    turns: [
      // Q1: a read of src/routes.py (cut to its share of the window), an answer with the fact.
      { ...read('r1', 'src/routes.py'), usage: usage(1950, 10) },
      { content: A1, usage: usage(3900, 150) },
      // Q2: a long answer: the window is past 80% after it.
      { content: A2, usage: usage(4290, 1500) },
      // Q3: first Lantern's summary request, then the follow-up's answer.
      { content: SUMMARY, usage: usage(3730, 60) },
      { content: `The release codename is ${FACT}.`, usage: usage(2060, 20) },
    ],
    async run({ page, fake, step, shot }) {
      await step('ask about the routes', () => askInView(page, 'Where are the routes?'));
      await step('answered', () => waitLastAnswer(page, /The routes table is in src\/routes\.py:1-150/));
      await step('ask about the handlers', () => askInView(page, 'And how do the handlers work?'));
      await step('answered', () => waitLastAnswer(page, /The handlers follow one pattern/));
      await step('the view is idle', () => waitIdle(page));
      await step('nothing was compacted yet', async () => {
        const dividers = await panel(page).locator('.compaction').count();
        const summaries = fake.chatRequests().filter((r) => !r.tools);
        if (dividers || summaries.length) throw new Error(`compacted too early (${dividers} dividers, ${summaries.length} summary requests): the fake's token counts need updating`);
      });
      const full = await step('the meter warns past 80%, in words and in the warning colour', () =>
        waitMeter(page, /^Context (8\d|9\d|1\d\d)% full: earlier turns will be summarized\. [\d,]+ of 6,000 tokens/),
      );
      log(`meter: ${JSON.stringify(full)}`);
      if (!full.warn || full.fillColour !== full.warningColour) throw new Error(`the bar is ${full.fillColour}, the theme's warning colour ${full.warningColour}`);
      await shot('meter-warn');
      await sidebarShot(page, 'meter-warn');

      await step('ask the follow-up', () => askInView(page, 'What was the release codename?'));
      await step('answered from the summary', () => waitLastAnswer(page, new RegExp(`The release codename is ${FACT}`)));
      await step('the view is idle', () => waitIdle(page));
      const closed = await step("a closed divider at the top of the follow-up's turn", async () => {
        const d = await dividerState(page);
        if (!/^Earlier turns summarized \([\d,]+ → [\d,]+ tokens\)$/.test(d.head)) throw new Error(`divider ${JSON.stringify(d.head)}`);
        if (d.open || d.summaryShown) throw new Error('the divider is open before it is asked to');
        if (d.first !== 'compactions') throw new Error(`the divider is not the turn's first part (${d.first})`);
        return d;
      });
      log(`divider: ${closed.head}`);
      await step("the meter's tooltip says what the compaction did", () => waitMeter(page, /last compaction: Earlier turns summarized \(/));
      await sidebarShot(page, 'divider');
      const opened = await step('Enter opens it to the summary, as text', () => openDivider(page));
      if (opened.summary !== SUMMARY) throw new Error(`summary shown: ${JSON.stringify(opened.summary)}`);
      if (opened.elements.length) throw new Error(`the summary's markup became elements: ${opened.elements}`);
      await shot('divider-open');
      await sidebarShot(page, 'divider-open');

      await step('Lantern asked the model to summarize the earlier turns, with the early fact', () => {
        const summaries = fake.chatRequests().filter((r) => !r.tools);
        if (summaries.length !== 1) throw new Error(`expected 1 summary request (no tools), got ${summaries.length}`);
        const text = messagesOf(summaries[0]).map((m) => m.content).join('\n');
        for (const want of [FACT, 'Where are the routes?', 'src/routes.py']) {
          if (!text.includes(want)) throw new Error(`the summary request lacks ${JSON.stringify(want)}`);
        }
      });
      await step("the follow-up's request carries the summary with the fact, not the earlier turns", () => {
        const last = messagesOf(fake.chatRequests().at(-1));
        const summary = last.find((m) => m.role === 'user' && m.content.includes(SUMMARY));
        if (!summary) throw new Error(`no summary in the follow-up's request: ${JSON.stringify(last.map((m) => [m.role, m.content.slice(0, 80)]))}`);
        const all = last.map((m) => m.content).join('\n');
        if (all.includes('ROUTE_149') || all.includes(A2.slice(0, 200))) throw new Error('the summarized turns were still sent');
        if (last.filter((m) => m.role === 'user').pop()?.content !== 'What was the release codename?') throw new Error('the question is not last');
      });

      await step('run Developer: Reload Window', async () => {
        await page.evaluate(() => (window.__lanternBeforeReload = true));
        await command(page, 'Developer: Reload Window').catch(() => {});
        await until('the page to reload', async () => !(await page.evaluate(() => window.__lanternBeforeReload === true).catch(() => true)), { timeoutMs: 30_000 });
        await page.waitForSelector('.monaco-workbench .part.statusbar', { timeout: 60_000 });
      });
      await step('the Lantern view is there', () => openLanternView(page));
      const restored = await step('the divider is still there, closed, and opens to the summary', async () => {
        await until('the restored divider', async () => (await divider(page).count()) === 1, { timeoutMs: 60_000 });
        const d = await dividerState(page);
        if (d.head !== closed.head || d.open) throw new Error(`after the reload: ${JSON.stringify(d)}`);
        return openDivider(page);
      });
      if (restored.summary !== SUMMARY) throw new Error(`summary after the reload: ${JSON.stringify(restored.summary)}`);
      await step('the meter is back', () => waitMeter(page, /of 6,000 tokens/));
    },
  },
  {
    n: 3,
    name: 'a prompt the endpoint cut: the warning and its fix, in the editor',
    turns: [
      { ...read('t1', 'src/routes.py'), usage: usage(1950, 10) },
      // The server kept (and counted) far less than it was sent, as Ollama does at its window.
      { content: 'It lists routes.', usage: usage(300, 5) },
    ],
    async run({ page, step, shot }) {
      await step('ask in the view', () => askInView(page, 'What is in src/routes.py?'));
      await step('answered', () => waitLastAnswer(page, /It lists routes\./));
      const card = lastTurn(page).locator('.warnings .warning-card');
      const warning = await step('the turn shows the warning', () =>
        until('the warning', async () => {
          const t = await textOf(card.locator('.warning-summary'));
          return /^Warning: the endpoint counted 300 prompt tokens, but Lantern sent about [\d,]+/.test(t) && t;
        }),
      );
      log(`warning: ${warning}`);
      const fixes = await step('with its fix in the editor’s words, no command-line flag', async () => {
        const lines = (await card.locator('.error-fix').allInnerTexts()).map((t) => t.trim()).filter(Boolean);
        if (lines.length === 0) throw new Error('the warning shows no fix');
        const all = await textOf(card);
        if (FLAG.test(all)) throw new Error(`a command-line flag in the warning: ${JSON.stringify(all)}`);
        if (!/context window/.test(lines.join(' '))) throw new Error(`the fix does not say what to change: ${JSON.stringify(lines)}`);
        return lines;
      });
      log(`fixes: ${JSON.stringify(fixes)}`);
      await shot('warning');
    },
  },
];

// ------------------------------------------------------------------ main

async function main() {
  return runScenarios({
    prefix: 'e2e-context',
    scenarios: SCENARIOS,
    shotOnPass: false,
    ...lanternHooks({ tag: 'ctx', reset: resetConversation }),
    extra: (scenario, { page }) => ({
      async shot(name) {
        await page.mouse.move(660, 300).catch(() => {});
        await sleep(400);
        return screenshot(page, `e2e-context-${scenario.n}-${name}`);
      },
    }),
    async setUp(ctx) {
      const dirs = await prepareProfile('lantern-e2e-context-');
      ctx.root = dirs.root;
      const { workspace, fakeDir } = dirs;
      ctx.fakeDir = fakeDir;
      await fsp.writeFile(path.join(workspace, 'src', 'routes.py'), ROUTES_PY);

      await openLanternWorkbench(ctx, dirs, { userSettings: { 'lantern.maxContextTokens': WINDOW, 'lantern.approval.mode': 'workspace' } });
      await timed('open the Lantern view', () => openLanternView(ctx.page));
    },
  });
}

runSuite(main);
