// End-to-end test of @-mentions in the Lantern view's question box (issue 26), in a real
// workbench (code-server + Chromium), with the server bundled in the .vsix and the scripted
// fake model (tests/fakes/openai_server.py). Approvals are left at their default (`ask`), so
// any read the user did not choose would show a prompt. The scenarios:
//   1. The completion: `@app` → the list (an ARIA listbox the box points into) offers
//      src/app.py, active, and tests/test_app.py (the arrows move between them); `@.env` → .env is offered disabled with the server's reason, and
//      neither Enter nor a click takes it (no chip, no question); Escape closes the list; a
//      chip taken with Tab goes with Backspace at the start of the empty box, or its ×.
//   2. A mention: `@app` + Enter → a src/app.py chip above the box → ask → the turn shows the
//      chip, and the fake model's first request already carries app.py's text, with no
//      approval shown (the model fails that request: 404) → the audit log records the read
//      as decision `mention` → Retry → the new turn has the chip and its question names the
//      file again (the server answers a repeated read in one conversation with "already
//      returned above") → Developer: Reload Window → both stored turns still show the chip.
// Both: the workspace `.env` canary never reaches the model.
//
//   bash tests/vscode/setup.sh        # once; cached in .tools
//   node tests/vscode/e2e_mentions.mjs
//
// Environment: LANTERN_E2E_SKIP_BUILD, LANTERN_E2E_VSIX, LANTERN_E2E_ONLY=1,
// LANTERN_E2E_HEADED, LANTERN_E2E_KEEP, as for e2e_context.mjs;
// LANTERN_E2E_UPDATE_SCREENSHOT=1 also copies the side bar pictures of the completion and
// the chip to docs/images/vscode-mentions-*.png.
// Screenshots go to tests/artifacts/e2e-mentions-*.png.
// The last line of output is "<passed> passed, <failed> failed".
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';

import { ARTIFACTS_DIR, REPO_ROOT, log, runScenarios, runSuite, screenshot } from './harness.mjs';
import {
  APP_PY,
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
  ANSWER_MS,
  command,
  messagesOf,
  openLanternView,
  resetConversation,
  turnsOf,
  waitIdle,
  waitLastAnswer,
  waitNewTurn,
  watchNoApproval,
} from './view.mjs';

const SERVER_START_MS = 240_000; // the first start prepares a Python environment (busy 2-core box)
const APP_LINE = '    return ROUTES.get(request.path, not_found)(payload)'; // app.py line 12: proof of its text
const QUESTION = 'What does this file route?';
const ANSWER = 'It routes requests by path: src/app.py:10-12.';

const box = (page) => panel(page).locator('#follow-up-text');
const popup = (page) => panel(page).locator('#mention-popup');
const option = (page, label) => panel(page).locator('#mention-list li[role=option]').filter({ has: panel(page).locator('.mention-label', { hasText: label }) });
const chips = (page) => panel(page).locator('#mention-row .chip.mention');

/** Put `text` in the question box as typed keys (so the box's input events run). */
async function typeInBox(page, text) {
  const input = box(page);
  await input.click();
  await input.fill('');
  await input.pressSequentially(text, { delay: 40 });
}

/** What the completion shows: each row (label, refused, reason, active) and the box's ARIA. */
async function completion(page) {
  return panel(page)
    .locator('body')
    .evaluate(() => {
      const input = document.getElementById('follow-up-text');
      const list = document.getElementById('mention-list');
      const popupEl = document.getElementById('mention-popup');
      return {
        open: popupEl ? !popupEl.hidden : false,
        listRole: list?.getAttribute('role'),
        controls: input?.getAttribute('aria-controls'),
        autocomplete: input?.getAttribute('aria-autocomplete'),
        activedescendant: input?.getAttribute('aria-activedescendant') ?? null,
        note: document.querySelector('.mention-note')?.textContent ?? '',
        rows: [...(list?.querySelectorAll('li') ?? [])].map((li) => ({
          id: li.id,
          role: li.getAttribute('role'),
          label: li.querySelector('.mention-label')?.textContent ?? '',
          kind: li.querySelector('.mention-kind')?.textContent ?? '',
          disabled: li.getAttribute('aria-disabled') === 'true',
          selected: li.getAttribute('aria-selected') === 'true',
          reason: li.querySelector('.mention-refused')?.textContent ?? '',
          text: li.textContent ?? '',
        })),
      };
    });
}

/** Wait until the completion shows a row labelled `label`; returns what it shows. */
async function waitOption(page, label) {
  let last;
  try {
    return await until(`the completion to offer ${label}`, async () => {
      last = await completion(page);
      return last.open && last.rows.some((r) => r.label === label) && last;
    }, { timeoutMs: SERVER_START_MS });
  } catch (err) {
    throw new Error(`${err.message}; the completion: ${JSON.stringify(last)}`);
  }
}

/** The labels of the chips on the turn `turn` (a locator). */
async function turnChips(turn) {
  return turn.locator('.turn-mentions .chip.mention .mention-label').allInnerTexts();
}

/** The side bar pictures docs/vscode.md shows. */
const DOCS_PICTURES = new Set(['completion', 'chip']);

/** A picture of the side bar (the Lantern view) only: small, for the docs. */
async function sidebarShot(page, name) {
  await sleep(300);
  await fsp.mkdir(ARTIFACTS_DIR, { recursive: true });
  const file = path.join(ARTIFACTS_DIR, `e2e-mentions-${name}.png`);
  await page.locator('.part.sidebar').first().screenshot({ path: file });
  if (process.env.LANTERN_E2E_UPDATE_SCREENSHOT === '1' && DOCS_PICTURES.has(name)) {
    await fsp.copyFile(file, path.join(REPO_ROOT, 'docs', 'images', `vscode-mentions-${name}.png`));
    log(`copied ${path.basename(file)} to docs/images/vscode-mentions-${name}.png`);
  }
  return file;
}

/** The audit log's records: the one file named audit.jsonl under the isolated home. */
function auditRecords(home) {
  const found = [];
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(p);
      else if (entry.name === 'audit.jsonl') found.push(p);
    }
  };
  walk(home);
  if (found.length !== 1) throw new Error(`expected one audit.jsonl under ${home}, found ${JSON.stringify(found)}`);
  return fs.readFileSync(found[0], 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
}

/** The user messages of the fake model's `n`th chat request, as one text. */
function userText(fake, n) {
  const request = fake.chatRequests()[n];
  if (!request) throw new Error(`the model got ${fake.chatRequests().length} requests, not ${n + 1}`);
  return messagesOf(request)
    .filter((m) => m.role === 'user')
    .map((m) => m.content)
    .join('\n');
}

const SCENARIOS = [
  {
    n: 1,
    name: 'the completion offers a file, and shows .env refused with its reason',
    turns: [],
    async run({ page, step }) {
      await step('open the Lantern view', () => openLanternView(page));
      await step('type @app', () => typeInBox(page, '@app'));
      const shown = await step('src/app.py is offered, active, in a listbox the box points into', async () => {
        const c = await waitOption(page, 'src/app.py');
        const row = c.rows.find((r) => r.label === 'src/app.py');
        if (c.listRole !== 'listbox' || c.controls !== 'mention-list' || c.autocomplete !== 'list') throw new Error(`the list's ARIA: ${JSON.stringify(c)}`);
        if (row.role !== 'option' || row.disabled || row.kind !== 'file') throw new Error(`the src/app.py row: ${JSON.stringify(row)}`);
        if (c.activedescendant !== c.rows.find((r) => r.selected)?.id) throw new Error(`aria-activedescendant ${c.activedescendant} is not the selected row: ${JSON.stringify(c.rows)}`);
        return c;
      });
      log(`@app: ${JSON.stringify(shown.rows.map((r) => `${r.kind} ${r.label}`))}`);
      await sidebarShot(page, 'completion');
      await step('tests/test_app.py is offered too; ArrowDown moves to it, ArrowUp back', async () => {
        await waitOption(page, 'tests/test_app.py');
        const first = (await completion(page)).activedescendant;
        await box(page).press('ArrowDown');
        const down = await completion(page);
        if (down.activedescendant === first || !down.rows.find((r) => r.id === down.activedescendant)?.selected) throw new Error(`ArrowDown: ${JSON.stringify(down)}`);
        await box(page).press('ArrowUp');
        const up = (await completion(page)).activedescendant;
        if (up !== first) throw new Error(`down then up: ${first} → ${up}`);
      });
      await step('Escape closes the list; the text stays', async () => {
        await box(page).press('Escape');
        await until('the list to close', async () => !(await completion(page)).open, { timeoutMs: 5_000 });
        if ((await box(page).inputValue()) !== '@app') throw new Error(`the box holds ${JSON.stringify(await box(page).inputValue())}`);
      });

      await step('type @.env', () => typeInBox(page, '@.env'));
      const refused = await step('.env is offered disabled, with its reason in its text', async () => {
        const c = await waitOption(page, '.env');
        const row = c.rows.find((r) => r.label === '.env');
        if (!row.disabled || !/cannot be mentioned: \S/.test(row.reason) || !row.text.includes(row.reason)) throw new Error(`the .env row: ${JSON.stringify(row)}`);
        return row;
      });
      log(`@.env: ${refused.text}`);
      await sidebarShot(page, 'refused');
      const turnsBefore = await turnsOf(page).count();
      await step('Enter does not take it, and does not ask either', async () => {
        const c = await completion(page);
        if (c.activedescendant !== refused.id) throw new Error(`the active row is ${c.activedescendant}, not .env's ${refused.id}`);
        await box(page).press('Enter');
        await sleep(500);
        if ((await chips(page).count()) !== 0) throw new Error('Enter made a chip of .env');
        if ((await turnsOf(page).count()) !== turnsBefore) throw new Error('Enter asked the question');
        if ((await box(page).inputValue()) !== '@.env') throw new Error(`the box holds ${JSON.stringify(await box(page).inputValue())}`);
      });
      await step('a click does not take it either', async () => {
        await option(page, '.env').first().click({ force: true }); // aria-disabled: Playwright would wait for it to be enabled
        await sleep(500);
        if ((await chips(page).count()) !== 0) throw new Error('a click made a chip of .env');
      });
      await step('Escape, and the box is emptied', async () => {
        await box(page).press('Escape');
        await box(page).fill('');
      });
      await step('a taken chip goes with Backspace at the start of the empty box, another with its ×', async () => {
        for (const how of ['Backspace', '×']) {
          await typeInBox(page, '@app');
          await waitOption(page, 'src/app.py');
          await box(page).press('Tab');
          await until('the chip', async () => (await chips(page).count()) === 1, { timeoutMs: 5_000 });
          if (how === 'Backspace') await box(page).press('Backspace');
          else await chips(page).first().locator('button.mention-remove').click();
          await until(`the chip to go with ${how}`, async () => (await chips(page).count()) === 0, { timeoutMs: 5_000 });
        }
      });
    },
  },
  {
    n: 2,
    name: 'a file taken as a chip is read with no prompt, audited, kept by Retry and by a reload',
    // The first request fails (so the turn offers Retry); the retried one is answered.
    turns: [{ status: 404, error_code: 'model_not_found' }, { content: ANSWER }],
    async run({ page, fake, step, home }) {
      await step('open the Lantern view', () => openLanternView(page));
      await step('type @app and take src/app.py with Enter', async () => {
        await typeInBox(page, '@app');
        await waitOption(page, 'src/app.py');
        await box(page).press('Enter');
      });
      await step('a src/app.py chip is above the box, with a × that says what it removes; the @app text is gone', async () => {
        await until('the chip', async () => (await chips(page).count()) === 1, { timeoutMs: 5_000 });
        const label = await textOf(chips(page).first().locator('.mention-label'));
        const remove = await chips(page).first().locator('button.mention-remove').getAttribute('aria-label');
        if (label !== 'src/app.py' || !/^Remove the mention file src\/app\.py$/.test(remove ?? '')) throw new Error(`the chip: ${label}, its ×: ${remove}`);
        if ((await box(page).inputValue()) !== '') throw new Error(`the box holds ${JSON.stringify(await box(page).inputValue())}`);
        if ((await completion(page)).open) throw new Error('the list is still open');
      });
      await step('type the question', () => box(page).pressSequentially(QUESTION, { delay: 20 }));
      await sidebarShot(page, 'chip');
      const card = lastTurn(page).locator('.error-card');
      await watchNoApproval(page, async () => {
        await step('ask with Enter: the turn shows the chip, and the box has none left', async () => {
          const before = await turnsOf(page).count();
          await box(page).press('Enter');
          await waitNewTurn(page, QUESTION, before);
          const shown = await turnChips(lastTurn(page));
          if (JSON.stringify(shown) !== JSON.stringify(['src/app.py'])) throw new Error(`the turn's chips: ${JSON.stringify(shown)}`);
          if ((await chips(page).count()) !== 0) throw new Error('the chip is still above the box');
        });
        await step('the model fails the first request: the error card offers Retry', () => card.waitFor({ state: 'visible', timeout: SERVER_START_MS }));
      });
      await step("the model's first request already carried app.py's text", () => {
        const text = userText(fake, 0);
        if (!text.includes(APP_LINE) || !text.includes(QUESTION)) throw new Error(`the first request's user text: ${JSON.stringify(text.slice(0, 600))}`);
      });
      const audited = await step('the audit log records the read as decision mention', () =>
        until('the mention read in the audit log', () => {
          const reads = auditRecords(home).filter((r) => r.tool === 'read_file' && r.path === 'src/app.py');
          if (reads.length !== 1 || reads[0].decision !== 'mention') throw new Error(`the audit log's reads of src/app.py: ${JSON.stringify(reads)}`);
          return reads[0];
        }, { timeoutMs: 10_000 }),
      );
      log(`audit: ${JSON.stringify(audited)}`);
      await watchNoApproval(page, async () => {
        await step('Retry: a new turn with the same chip', async () => {
          const before = await turnsOf(page).count();
          await card.locator('button.fix-action', { hasText: 'Retry' }).click();
          await waitNewTurn(page, QUESTION, before);
          const shown = await turnChips(lastTurn(page));
          if (JSON.stringify(shown) !== JSON.stringify(['src/app.py'])) throw new Error(`the retried turn's chips: ${JSON.stringify(shown)}`);
        });
        await step('answered', () => waitLastAnswer(page, /It routes requests by path/, { timeoutMs: ANSWER_MS }));
      });
      await step('the retried question named src/app.py again, and its request has the text', () => {
        // The same read again in one conversation is answered "already returned above" (the
        // text is in the earlier turn the request carries), so it is not read a second time.
        const users = messagesOf(fake.chatRequests()[1]).filter((m) => m.role === 'user');
        const last = users.at(-1)?.content ?? '';
        if (!last.includes('The user named src/app.py') || !last.includes(QUESTION)) throw new Error(`the retried question: ${JSON.stringify(last.slice(0, 400))}`);
        if (!userText(fake, 1).includes(APP_LINE)) throw new Error("the retried request lacks app.py's text");
      });
      await step('the view is idle', () => waitIdle(page));
      await sidebarShot(page, 'turn');

      await step('run Developer: Reload Window', async () => {
        await page.evaluate(() => (window.__lanternBeforeReload = true));
        await command(page, 'Developer: Reload Window').catch(() => {});
        await until('the page to reload', async () => !(await page.evaluate(() => window.__lanternBeforeReload === true).catch(() => true)), { timeoutMs: 30_000 });
        await page.waitForSelector('.monaco-workbench .part.statusbar', { timeout: 60_000 });
      });
      await step('the Lantern view is there', () => openLanternView(page));
      await step('both stored turns still show the chip', () =>
        until('the restored turns with their chips', async () => {
          const turns = turnsOf(page).filter({ has: panel(page).locator('.question', { hasText: QUESTION }) });
          if ((await turns.count()) !== 2) return false;
          for (const i of [0, 1]) if (JSON.stringify(await turnChips(turns.nth(i))) !== JSON.stringify(['src/app.py'])) return false;
          return true;
        }, { timeoutMs: 60_000 }),
      );
    },
  },
];

// ------------------------------------------------------------------ main

async function main() {
  return runScenarios({
    prefix: 'e2e-mentions',
    scenarios: SCENARIOS,
    ...lanternHooks({ tag: 'mentions', reset: resetConversation }),
    async setUp(ctx) {
      const dirs = await prepareProfile('lantern-e2e-mentions-');
      ctx.root = dirs.root;
      const { workspace, fakeDir } = dirs;
      ctx.fakeDir = fakeDir;
      if (!(await fsp.readFile(path.join(workspace, 'src', 'app.py'), 'utf8')).includes(APP_LINE)) throw new Error('the workspace app.py lacks the line the test looks for');
      if (!APP_PY.includes(APP_LINE)) throw new Error('APP_PY lacks the line the test looks for');
      await fsp.mkdir(path.join(workspace, 'tests'));
      await fsp.writeFile(path.join(workspace, 'tests', 'test_app.py'), 'from src.app import handle_request\n');

      await openLanternWorkbench(ctx, dirs);
    },
  });
}

runSuite(main);
