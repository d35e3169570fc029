// End-to-end test of the Lantern view from the keyboard alone (issue 26, "Keyboard"), in a
// real workbench (code-server + Chromium), with the server bundled in the .vsix and the
// scripted fake model (tests/fakes/openai_server.py). Reads ask for approval (the default).
// After one click into the workbench (before the first scenario) every step is a key
// press; the test only looks.
//
// Scenarios, in this order, in one window (the editor context is off, lantern.editorContext,
// so no question reads a selection; each scenario after the first starts a new conversation
// with F1, Lantern: New Conversation):
//   1. Ctrl+Alt+K puts the cursor in the question box → type, Enter asks → the approval
//      card in the turn takes the focus on its Deny → Home, Enter allows once → the focus is
//      back in the question box, and stays there when the answer is complete → Tab goes to
//      Ask, then through the turn to the answer's reference (a link with a name, a focus
//      outline in the theme's focusBorder) → Enter opens src/app.py at lines 10–12.
//   2. from the editor, Ctrl+Alt+K → ask → the read asks again → the card takes the focus
//      → Escape leaves it unanswered for the question box → Shift+Tab goes to the card's
//      last button (Deny) → Enter denies → the focus is back in the question box.
//   3. Ctrl+P to src/app.py, then Lantern: Ask… from the Command Palette, in the editor: the
//      approval card in the view takes no focus from the editor → Ctrl+Alt+K, Shift+Tab,
//      Enter (Deny).
//   4. a slowly streamed answer with a code block: Tab goes to Ask, Stop, …, the block's
//      Copy; the answer is drawn again with each word, and Copy keeps the focus.
// After each: the workspace's .env (a canary) never reached the model.
//
//   bash tests/vscode/setup.sh        # once; cached in .tools
//   node tests/vscode/e2e_keyboard.mjs
//
// Environment: LANTERN_E2E_SKIP_BUILD, LANTERN_E2E_VSIX, LANTERN_E2E_ONLY=1,2,3,4,
// LANTERN_E2E_HEADED, LANTERN_E2E_KEEP, as for e2e_context.mjs.
// Screenshots go to tests/artifacts/e2e-keyboard-*.png.
// The last line of output is "<passed> passed, <failed> failed".
import { log, runScenarios, runSuite, timed, waitForTab } from './harness.mjs';
import {
  APP_PY,
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
} from './helpers.mjs';
import { ANSWER_MS, TITLES, waitIdle, waitLastAnswer, waitNewTurn } from './view.mjs';

const SERVER_START_MS = 240_000; // the first question prepares the server's Python environment (busy 2-core box)
const MAX_TABS = 30;
// An answer that opens with a code block and then streams word by word for a while.
const STREAMED = `Print it:\n\n\`\`\`python\nprint("hello")\n\`\`\`\n\n${'Each word of this sentence arrives on its own, a little apart from the next. '.repeat(4)}`; // more stops than this before the reference: the order is wrong

/** What has the keyboard focus in the view: the element and its focus outline. */
async function viewFocus(page) {
  return panel(page)
    .locator('body')
    .evaluate(() => {
      const el = document.activeElement;
      const probe = document.createElement('span');
      probe.style.color = 'var(--vscode-focusBorder)';
      document.body.append(probe);
      const focusBorder = getComputedStyle(probe).color;
      probe.remove();
      const style = el ? getComputedStyle(el) : null;
      return {
        viewHasFocus: document.hasFocus(),
        tag: el ? el.tagName.toLowerCase() : '',
        id: el?.id ?? '',
        className: typeof el?.className === 'string' ? el.className : '',
        text: (el?.textContent ?? '').replace(/\s+/g, ' ').trim().slice(0, 80),
        title: el?.getAttribute('title') ?? '',
        inAnswer: Boolean(el?.closest('.answer')),
        safe: el?.getAttribute('data-safe') === 'true',
        outline: style ? { style: style.outlineStyle, width: style.outlineWidth, color: style.outlineColor } : null,
        focusBorder,
      };
    });
}

const brief = (f) => `${f.tag}${f.id ? `#${f.id}` : ''}${f.className ? `.${f.className.split(' ').join('.')}` : ''} ${JSON.stringify(f.text)}`;

/** Wait until the view has the focus on an element that `test` accepts; returns it. */
async function waitViewFocus(page, what, test, { timeoutMs = 15_000 } = {}) {
  let last = null;
  try {
    return await until(what, async () => {
      last = await viewFocus(page).catch(() => null);
      return last && last.viewHasFocus && test(last) && last;
    }, { timeoutMs });
  } catch (err) {
    throw new Error(`${err.message}; the focus: ${last ? `${brief(last)}, view focused: ${last.viewHasFocus}` : 'unknown'}`);
  }
}

const inQuestionBox = (f) => f.id === 'follow-up-text';

/** Ctrl+Alt+K, then the cursor is in the view's question box. Pressed again while the
 * workbench has not loaded Lantern's keybinding yet (right after the window opens). */
async function focusQuestionBox(page, timeoutMs = 60_000) {
  return until('Ctrl+Alt+K to put the cursor in the question box', async () => {
    await page.keyboard.press('Control+Alt+K');
    return waitViewFocus(page, 'the question box to have the focus', inQuestionBox, { timeoutMs: 5_000 }).catch(() => false);
  }, { timeoutMs });
}

/** Type a question where the cursor is and send it with Enter; wait for its turn. */
async function typeAndAsk(page, question) {
  const before = await panel(page).locator('#turns article.turn').filter({ has: panel(page).locator('.question', { hasText: question }) }).count();
  await page.keyboard.type(question, { delay: 10 });
  await page.keyboard.press('Enter');
  await waitNewTurn(page, question, before);
}

/** The newest turn shows a pending approval with its four actions; the focus is on `test`'s button. */
async function waitApprovalFocused(page, test, what) {
  await until('an approval with its four actions in the newest turn', async () => {
    const box = lastTurn(page).locator('.approval').last();
    const message = await textOf(box.locator('.approval-message')).catch(() => '');
    const buttons = (await box.locator('button.approval-action').allInnerTexts().catch(() => [])).map((t) => t.trim());
    return APPROVAL.test(message) && JSON.stringify(buttons) === JSON.stringify(TITLES);
  }, { timeoutMs: SERVER_START_MS });
  return waitViewFocus(page, what, (f) => f.className.includes('approval-action') && test(f));
}

async function waitApprovalAnswered(page) {
  await until('the approval to be answered (no buttons left)', async () => (await lastTurn(page).locator('.approval button.approval-action').count()) === 0, { timeoutMs: 15_000 });
}

async function waitToolStatus(page, status) {
  await until(`read_file ${status} in the newest turn`, async () => (await textOf(lastTurn(page).locator('.tools li.tool .tool-status').last()).catch(() => '')).startsWith(status), { timeoutMs: ANSWER_MS });
}

/** F1, the command's title, Enter. */
async function paletteCommand(page, title) {
  await page.keyboard.press('F1');
  await page.locator('.quick-input-widget input').first().waitFor({ state: 'visible', timeout: 10_000 });
  await page.keyboard.type(title, { delay: 10 });
  await page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first().waitFor({ state: 'visible', timeout: 10_000 });
  await page.keyboard.press('Enter');
}

async function newConversation(page) {
  await paletteCommand(page, 'Lantern: New Conversation');
  await until('no turns in the view', async () => (await panel(page).locator('#turns article.turn').count()) === 0, { timeoutMs: 15_000 });
}

/** The workbench (not the view) has the focus, in the text editor. */
async function editorHasFocus(page) {
  return page.evaluate(() => Boolean(document.activeElement?.closest('.monaco-editor')) && document.hasFocus());
}

const SCENARIOS = [
  {
    n: 1,
    name: 'Ctrl+Alt+K, ask, allow once on the card, Tab to the reference, Enter opens it',
    turns: [readApp('k1'), { content: 'The request handler is `handle_request`, at src/app.py:10-12.' }],
    async run({ page, fake, step }) {
      await step('Ctrl+Alt+K: the cursor is in the question box', () => focusQuestionBox(page));
      await step('type a question, Enter', () => typeAndAsk(page, 'Where is the request handler?'));
      const card = await step('the approval card takes the focus, on Deny (the action that never grants)', () =>
        waitApprovalFocused(page, (f) => f.safe && f.text === 'Deny', 'the card’s Deny to have the focus'),
      );
      log(`approval focus: ${brief(card)}`);
      await step('Home: Allow has the focus', async () => {
        await page.keyboard.press('Home');
        await waitViewFocus(page, 'Allow to have the focus', (f) => f.text === 'Allow');
      });
      await step('Enter allows: the card is answered, read_file done', async () => {
        await page.keyboard.press('Enter');
        await waitApprovalAnswered(page);
        await waitToolStatus(page, 'done');
      });
      await step('the focus is back in the question box', () => waitViewFocus(page, 'the question box to have the focus again', inQuestionBox));
      await step('answered', () => waitLastAnswer(page, /The request handler is handle_request, at src\/app\.py:10-12\./));
      await step('the view is idle', () => waitIdle(page));
      await step('the answer did not move the focus: still in the question box', async () => {
        await sleep(500);
        const f = await viewFocus(page);
        if (!f.viewHasFocus || !inQuestionBox(f)) throw new Error(`the focus moved to ${brief(f)}`);
      });
      const visited = [];
      const link = await step('Tab goes to Ask, then through the turn to the answer’s reference', async () => {
        for (let i = 0; i < MAX_TABS; i++) {
          await page.keyboard.press('Tab');
          const f = await viewFocus(page);
          visited.push(brief(f));
          if (i === 0 && !(f.tag === 'button' && f.text === 'Ask')) throw new Error(`the first Tab went to ${brief(f)}, not Ask`);
          if (f.tag === 'a' && f.className.includes('lantern-ref') && f.inAnswer) return f;
        }
        throw new Error(`no reference in the answer after ${MAX_TABS} Tabs: ${visited.join(' → ')}`);
      });
      log(`Tab order: ${visited.join(' → ')}`);
      await step('the reference is a link named by its text, with a title, and outlined in focusBorder', async () => {
        if (link.text !== 'src/app.py:10-12') throw new Error(`the link reads ${JSON.stringify(link.text)}`);
        if (!/^Open src\/app\.py, lines 10–12/.test(link.title)) throw new Error(`its title is ${JSON.stringify(link.title)}`);
        const { outline, focusBorder } = link;
        if (!outline || outline.style === 'none' || outline.width === '0px' || outline.color !== focusBorder) {
          throw new Error(`its outline is ${JSON.stringify(outline)}, the theme's focusBorder ${focusBorder}`);
        }
      });
      await step('Enter opens src/app.py', async () => {
        await page.keyboard.press('Enter');
        await waitForTab(page, 'app.py');
      });
      await step('lines 10–12 are selected, the cursor in the editor', () =>
        until('the status bar selection and the editor focus', async () => {
          const t = await textOf(page.locator('[id="status.editor.selection"]')).catch(() => '');
          const m = /Ln (\d+), Col (\d+) \((\d+) selected\)/.exec(t);
          const lines = APP_PY.split('\n').slice(9, 12);
          return m && Number(m[1]) === 12 && Number(m[3]) === lines.join('\n').length && (await editorHasFocus(page)) && t;
        }, { timeoutMs: 15_000 }),
      );
      await step('the model got the file', () => {
        const text = JSON.stringify(fake.chatRequests().at(-1)?.messages ?? []);
        if (!text.includes('def handle_request')) throw new Error('the model did not get the file');
      });
    },
  },
  {
    n: 2,
    name: 'Escape leaves the card unanswered; Shift+Tab reaches it from the question box; Enter denies',
    turns: [readApp('k2'), { content: 'Lantern was not allowed to read src/app.py.' }],
    async run({ page, step }) {
      await step('F1, Lantern: New Conversation', () => newConversation(page));
      await step('Ctrl+Alt+K: the cursor is in the question box', () => focusQuestionBox(page));
      await step('type a question, Enter', () => typeAndAsk(page, 'What does src/app.py return for an unknown path?'));
      await step('the read asks again (Allow granted nothing that stands); the card takes the focus, on Deny', () => waitApprovalFocused(page, (f) => f.safe, 'the card’s Deny to have the focus'));
      await step('Escape: the question box has the focus, the card is still waiting', async () => {
        await page.keyboard.press('Escape');
        await waitViewFocus(page, 'the question box to have the focus', inQuestionBox);
        const buttons = await lastTurn(page).locator('.approval button.approval-action').count();
        if (buttons !== TITLES.length) throw new Error(`the card shows ${buttons} buttons after Escape`);
      });
      await step('Shift+Tab: the card’s last button, Deny', async () => {
        await page.keyboard.press('Shift+Tab');
        await waitViewFocus(page, 'Deny to have the focus', (f) => f.safe && f.text === 'Deny');
      });
      await step('Enter denies; the focus is back in the question box', async () => {
        await page.keyboard.press('Enter');
        await waitApprovalAnswered(page);
        await waitViewFocus(page, 'the question box to have the focus again', inQuestionBox);
      });
      await step('read_file denied', () => waitToolStatus(page, 'denied'));
      await step('answered', () => waitLastAnswer(page, /not allowed to read/));
      await step('the view is idle', () => waitIdle(page));
    },
  },
  {
    n: 3,
    name: 'asked from the Command Palette in the editor: the approval takes no focus from the editor',
    turns: [readApp('k3'), { content: 'Lantern could not read src/app.py.' }],
    async run({ page, step }) {
      await step('Ctrl+P, src/app.py, Enter: the cursor is in the editor', async () => {
        await page.keyboard.press('Control+P');
        await page.locator('.quick-input-widget input').first().waitFor({ state: 'visible', timeout: 10_000 });
        await page.keyboard.type('src/app.py', { delay: 10 });
        await page.locator('.quick-input-list .monaco-list-row', { hasText: 'app.py' }).first().waitFor({ state: 'visible', timeout: 10_000 });
        await page.keyboard.press('Enter');
        await until('the editor to have the focus', () => editorHasFocus(page), { timeoutMs: 10_000 });
      });
      await step('F1, Lantern: New Conversation', () => newConversation(page));
      await step('F1, Lantern: Ask…, type a question, Enter', async () => {
        await paletteCommand(page, 'Lantern: Ask…');
        await page.locator('.quick-input-widget .quick-input-title', { hasText: 'Lantern: Ask' }).first().waitFor({ state: 'visible', timeout: 10_000 });
        await page.keyboard.type('Which routes are registered?', { delay: 10 });
        await page.keyboard.press('Enter');
        await waitNewTurn(page, 'Which routes are registered?', 0);
      });
      await step('the approval shows in the view; the editor keeps the focus', async () => {
        await until('an approval in the newest turn', async () => (await lastTurn(page).locator('.approval button.approval-action').count()) === TITLES.length, { timeoutMs: ANSWER_MS });
        await sleep(1_000);
        if (!(await editorHasFocus(page))) throw new Error(`the editor lost the focus; the view's: ${brief(await viewFocus(page))}`);
        const f = await viewFocus(page);
        if (f.viewHasFocus) throw new Error(`the view took the focus: ${brief(f)}`);
      });
      await step('Ctrl+Alt+K, Shift+Tab: Deny', async () => {
        await focusQuestionBox(page, 15_000);
        await page.keyboard.press('Shift+Tab');
        await waitViewFocus(page, 'Deny to have the focus', (f) => f.safe && f.text === 'Deny');
      });
      await step('Enter denies; the focus is back in the question box', async () => {
        await page.keyboard.press('Enter');
        await waitApprovalAnswered(page);
        await waitViewFocus(page, 'the question box to have the focus again', inQuestionBox);
      });
      await step('answered', () => waitLastAnswer(page, /could not read/));
      await step('the view is idle', () => waitIdle(page));
    },
  },
  {
    n: 4,
    name: 'a control keeps the focus while its answer streams',
    turns: [{ content: STREAMED, chunk_delay: 0.25 }],
    async run({ page, step }) {
      await step('F1, Lantern: New Conversation', () => newConversation(page));
      await step('Ctrl+Alt+K: the cursor is in the question box', () => focusQuestionBox(page));
      await step('type a question, Enter', () => typeAndAsk(page, 'How do I print a greeting?'));
      const copy = lastTurn(page).locator('.answer pre button.copy-code');
      await step('the streaming answer shows its code block’s Copy', () => copy.first().waitFor({ state: 'attached', timeout: ANSWER_MS }));
      const visited = [];
      await step('Tab goes to Ask, Stop (the answer is running), then on to Copy', async () => {
        for (let i = 0; i < MAX_TABS; i++) {
          await page.keyboard.press('Tab');
          const f = await viewFocus(page);
          visited.push(brief(f));
          if (f.className.includes('copy-code')) break;
        }
        log(`Tab order: ${visited.join(' → ')}`);
        if (!visited.at(-1)?.includes('copy-code')) throw new Error(`no Copy after ${MAX_TABS} Tabs`);
        if (!visited[0].startsWith('button "Ask"') || !visited[1].startsWith('button#stop')) throw new Error('Tab did not go to Ask, then Stop');
      });
      const before = await answerWords(page);
      await step('more of the answer arrives; Copy keeps the focus', async () => {
        await until('ten more words of the answer', async () => (await answerWords(page)) >= before + 10, { timeoutMs: ANSWER_MS });
        const f = await viewFocus(page);
        if (!f.viewHasFocus || !f.className.includes('copy-code')) throw new Error(`the focus moved to ${brief(f)} while the answer streamed`);
      });
      await step('the view is idle; Copy still has the focus', async () => {
        await waitIdle(page);
        const f = await viewFocus(page);
        if (!f.viewHasFocus || !f.className.includes('copy-code')) throw new Error(`the focus moved to ${brief(f)}`);
      });
    },
  },
];

async function answerWords(page) {
  const text = await textOf(lastTurn(page).locator('.answer').last()).catch(() => '');
  return text.split(' ').filter(Boolean).length;
}

// ------------------------------------------------------------------ main

async function main() {
  return runScenarios({
    prefix: 'e2e-keyboard',
    scenarios: SCENARIOS,
    ...lanternHooks({ tag: 'kb' }),
    async setUp(ctx) {
      const dirs = await prepareProfile('lantern-e2e-keyboard-');
      ctx.root = dirs.root;
      ctx.fakeDir = dirs.fakeDir;
      const { page } = await openLanternWorkbench(ctx, dirs, { userSettings: { 'lantern.editorContext': false } });
      await timed('the one click: into the workbench, once Lantern is in it', async () => {
        await page.locator('.part.activitybar .action-item .action-label[aria-label^="Lantern"]').first().waitFor({ state: 'visible', timeout: 60_000 });
        await page.locator('.part.editor').first().click({ position: { x: 200, y: 200 } });
      });
    },
  });
}

runSuite(main);
