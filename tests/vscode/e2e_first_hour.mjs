// End-to-end test of a new user's first hour with the Lantern VS Code extension in a
// real workbench (code-server + Chromium, window 1024×768), against the server bundled
// in the .vsix and the scripted fake model (tests/fakes/openai_server.py).
//
// code-server starts with NO model configured: no LANTERN_MODEL / LANTERN_BASE_URL, no
// lantern.model / lantern.baseUrl setting. OLLAMA_HOST points at the fake model server,
// which plays a local Ollama that lists two models. As in e2e.mjs, Lantern is neither
// on PATH nor importable: the extension prepares its own server.
//
//   bash tests/vscode/setup.sh        # once; cached in .tools
//   node tests/vscode/e2e_first_hour.mjs
//
// Flows, in this order, in one window; 1–7 in one conversation, each building on the last:
//   1. first run: the Lantern view shows the "connect a model" card → Connect a Model…
//      lists Ollama at the fake's address → its two models → pick one → lantern.model and
//      lantern.baseUrl are in the user settings → ask in the view → the approval waits in
//      the view, with no notification over it → Allow there → the answer and its
//      references, fully visible above the question box.
//   2. Developer: Reload Window → the conversation is restored → a follow-up → the model
//      gets the earlier question and answer (a new server, seeded by the extension).
//   3. Lantern: Restart Server → a follow-up → the model gets the history again (and a
//      read of .env is refused: the canary never leaves).
//   4. a 404 "model not found" → the error card offers Pick Model and Retry → pick the
//      other model → Retry → answered, by the model picked.
//   5. a slow streaming reply → Stop in the view → "Stopped."
//   6. a question typed while an answer streams is shown queued, then answered; in this
//      conversation, now longer than the view, its References are fully visible too.
//   7. Lantern: Export Conversation to Markdown… → a path typed in the save dialog → the
//      file has the question, the answer and the reference as a link.
//   8. Always Allow → in a new conversation a read does not ask → Lantern: Manage
//      Approvals… lists it → revoke → in another new conversation the read asks again.
//   9. the view's "+" while an answer streams → a question in the new conversation is
//      answered (without the old turns) → Show Conversations… still lists the old one.
// After each flow: the workspace's .env (a canary) never reached the model.
//
// Environment:
//   LANTERN_E2E_SKIP_BUILD=1   use vscode-extension/lantern-linux-x64.vsix as it is
//   LANTERN_E2E_VSIX=path      install this .vsix (implies no build)
//   LANTERN_E2E_ONLY=1,4       run only these flows (flows after 1 need a model: one is
//                              written to the user settings when flow 1 did not run or pass;
//                              2, 3, 6 and 7 check what earlier flows left in the conversation)
//   LANTERN_E2E_HEADED=1       show the browser
//   LANTERN_E2E_KEEP=1         keep the temp folder (workspace, user data, fake model records)
//
// Screenshots go to tests/artifacts/e2e-first-hour-*.png (setup, approval and restored
// on success; e2e-first-hour-<n>-failure.png on a failure).
// The last line of output is "<passed> passed, <failed> failed".
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';

import { log, runScenarios, runSuite, screenshot, waitForNotification } from './harness.mjs';
import {
  APPROVAL,
  CANARY,
  clearNotifications,
  groupPids,
  lanternHooks,
  lastTurn,
  openLanternWorkbench,
  panel,
  readApp,
  sleep,
  textOf,
  until,
  waitToolStatus,
  prepareProfile,
} from './helpers.mjs';
import {
  ANSWER_MS,
  answerApprovalInView,
  answerOf,
  askInView,
  checkHistory,
  command,
  messagesOf,
  newConversation,
  noteStaleApprovalToast,
  openLanternView,
  quickRow,
  quickRows,
  referencesFullyVisible,
  toolStatus,
  turnsOf,
  userSettings,
  viewTurns,
  waitIdle,
  waitLastAnswer,
  waitNewTurn,
  waitPendingApproval,
  waitTurnAnswer,
  watchNoApproval,
} from './view.mjs';

// The fake's model list, as Ollama's and OpenAI's /models answer it. Flow 1 picks the
// second; flow 4 (a 404 for it) picks the first.
const MODELS = ['llama3.2:3b', 'qwen2.5-coder:7b'];
const SERVER_PROCESS = /-m lantern\.cli serve|\/lantern serve/;
const SERVER_START_MS = 240_000; // the first start prepares a Python environment (busy 2-core box)

// ------------------------------------------------------------------ flows

const Q1 = 'Where is the request handler?';
const A1 = 'The request handler is `handle_request`, at src/app.py:10-12. It parses the JSON body and dispatches on the path.';
const A1_SHOWN = /The request handler is handle_request, at src\/app\.py:10-12\./;
const Q2 = 'What does it do with an unknown path?';
const A2 = 'Unknown paths go to not_found, which answers with status 404.';
const Q3 = 'And which routes are registered?';
const A3 = 'Only /health is registered, through the route decorator.';
const Q4 = 'Where is ROUTES defined?';
const A4 = 'ROUTES is a module-level dict near the top of app.py.';
const SLOW = `Let me walk through the router slowly. ${'This sentence streams one word at a time so there is time to stop it. '.repeat(8)}`;
const Q6A = 'Explain the decorator in detail.';
const A6A = `The decorator registers handlers. ${'Each word of this answer arrives on its own, a little later than the one before. '.repeat(3)}All done.`;
const Q6B = 'Is there a health check?';
const A6B = 'Yes: /health answers 200 with ok set to true, at src/app.py:27-29.';
const Q8A = 'Read the router again, please.';
const A8A = 'Read with your permission for this whole workspace: handle_request is at src/app.py:10-12.';
const Q8N = 'Where do unknown paths go?';
const A8N = 'Without asking: not_found is at src/app.py:23-24.';
const Q8B = 'And once more after revoking?';
const A8B = 'Asked again before reading: not_found is at src/app.py:23-24.';
const Q9A = 'Walk me through the whole router, slowly.';
const Q9B = 'Start over: what is this repository?';
const A9B = 'A new conversation answers at once: this is a tiny request router.';

const FLOWS = [
  {
    n: 1,
    name: 'first run: connect a model, pick it, ask, approve in the view',
    turns: [readApp('c1'), { content: A1 }],
    async run({ page, fake, step, shot, userDataDir, fakePort, server, convo, timings }) {
      await step('open the Lantern view from the activity bar', () => openLanternView(page));
      const setup = panel(page).locator('#setup');
      await step('the view shows the "connect a model" card', () => setup.waitFor({ state: 'visible', timeout: 30_000 }));
      const setupText = await textOf(setup);
      log(`setup card: ${setupText}`);
      await step('the card offers its three actions, and no command line', async () => {
        const buttons = (await setup.locator('button.setup-action').allInnerTexts()).map((t) => t.trim());
        for (const b of ['Connect a Model…', 'Set API Key…', 'Open Settings']) {
          if (!buttons.includes(b)) throw new Error(`the setup card's buttons are ${JSON.stringify(buttons)}; ${b} is missing`);
        }
        if (/--[a-z]|lantern ask|LANTERN_API_KEY/.test(setupText)) throw new Error(`the setup card shows a command line: ${setupText}`);
      });
      await shot('setup', { name: 'e2e-first-hour-setup' });
      await step('click "Connect a Model…"', () => setup.locator('button.setup-action', { hasText: 'Connect a Model…' }).click());
      const clicked = Date.now();
      const ollama = await step('the quick pick lists Ollama at the fake server', () =>
        quickRow(page, { title: 'Connect a Model', label: /Ollama/, description: `127.0.0.1:${fakePort}`, timeoutMs: SERVER_START_MS }),
      );
      timings.firstStart = (Date.now() - clicked) / 1000;
      log(`connect list (server prepared and started, local servers probed): ${timings.firstStart.toFixed(1)} s; rows ${JSON.stringify(await quickRows(page))}`);
      await step('choose Ollama', () => ollama.click());
      await step('the model picker lists both models', async () => {
        for (const m of MODELS) await quickRow(page, { title: 'Pick Model', label: m, timeoutMs: 60_000 });
      });
      await step(`pick ${MODELS[1]}`, async () => (await quickRow(page, { title: 'Pick Model', label: MODELS[1] })).click());
      const settings = await step('lantern.model and lantern.baseUrl are in the user settings', () =>
        until('the settings file to name the model and the endpoint', async () => {
          const s = await userSettings(userDataDir);
          const ok = s['lantern.model'] === MODELS[1] && typeof s['lantern.baseUrl'] === 'string' && s['lantern.baseUrl'].includes(`127.0.0.1:${fakePort}`);
          if (!ok) throw new Error(`settings.json has lantern.model ${JSON.stringify(s['lantern.model'])}, lantern.baseUrl ${JSON.stringify(s['lantern.baseUrl'])}`);
          return s;
        }),
      );
      log(`settings: lantern.model=${settings['lantern.model']} lantern.baseUrl=${settings['lantern.baseUrl']}`);
      await step('the setup card goes; the model chip names the model', async () => {
        await setup.waitFor({ state: 'hidden', timeout: 15_000 });
        await until('the model chip', async () => (await textOf(panel(page).locator('#model-chip'))).includes(MODELS[1]));
      });
      await step('ask in the view: the question shows at once', () => askInView(page, Q1));
      await step('the view shows the approval with its four actions', () => waitPendingApproval(page, { timeoutMs: SERVER_START_MS }));
      await step('the approval waits in the view, with no notification over it', async () => {
        await sleep(1500); // a notification would have slid in by now
        const a = await waitPendingApproval(page, { timeoutMs: 5000 });
        const status = await toolStatus(page, 'read_file');
        if (!/awaiting approval/i.test(status)) throw new Error(`read_file shows ${JSON.stringify(status)} after the notification closed`);
        if ((await page.locator('.notification-toast').filter({ hasText: APPROVAL }).count()) !== 0) throw new Error('the approval is also a notification');
        log(`approval in the view: ${a.message} [${a.buttons.join(' | ')}]`);
        if (fake.chatRequests().length !== 1) throw new Error(`the model was asked again before the approval: ${fake.chatRequests().length} requests`);
      });
      await shot('approval', { name: 'e2e-first-hour-approval' });
      await step('answer Allow in the view', () => answerApprovalInView(page, 'Allow'));
      await step('read_file is done', () => waitToolStatus(page, 'read_file', /^done/, { timeoutMs: ANSWER_MS }));
      const answer = await step('the answer shows', () => waitLastAnswer(page, A1_SHOWN));
      log(`answer: ${answer}`);
      convo.push({ q: Q1, a: 'The request handler is `handle_request`, at src/app.py:10-12.' });
      await step('the model got the file', async () => {
        const [, second] = fake.chatRequests();
        const toolMsg = second?.messages?.find((m) => m.role === 'tool');
        if (!toolMsg || !String(toolMsg.content).includes('def handle_request')) {
          throw new Error(`second model request has no tool message with app.py: ${JSON.stringify(second?.messages?.slice(-2))}`);
        }
        if (second.model !== MODELS[1]) throw new Error(`the request asked model ${JSON.stringify(second.model)}, not the one picked`);
      });
      await step('the references list src/app.py:10-12', () =>
        until('the references section', async () => {
          const t = await textOf(lastTurn(page).locator('.references'));
          return t.includes('src/app.py:10-12') && (await lastTurn(page).locator('.references a.lantern-ref').count()) > 0 && t;
        }),
      );
      await step('the references are fully visible above the question box, without scrolling', () => referencesFullyVisible(page));
      await step('the view is idle', () => waitIdle(page));
      await shot('answered');
      void server;
    },
  },
  {
    n: 2,
    name: 'reload the window: the conversation is restored and the model keeps its context',
    turns: [{ content: A2 }],
    async run({ page, fake, step, shot, server, convo }) {
      const before = groupPids(server.proc.pid, SERVER_PROCESS);
      log(`server processes before the reload: ${JSON.stringify(before)}`);
      const shown = await step('the view shows the conversation so far', async () => {
        const turns = await viewTurns(page);
        if (turns.length === 0) throw new Error('the view shows no conversation to restore');
        return turns;
      });
      await step('run Developer: Reload Window', async () => {
        await page.evaluate(() => (window.__lanternBeforeReload = true));
        await command(page, 'Developer: Reload Window').catch(() => {});
        await until('the page to reload', async () => !(await page.evaluate(() => window.__lanternBeforeReload === true).catch(() => true)), { timeoutMs: 30_000 });
        await page.waitForSelector('.monaco-workbench .part.statusbar', { timeout: 60_000 });
      });
      await step('the Lantern view is there', () => openLanternView(page));
      await step('the conversation is restored as it was shown', async () => {
        let now;
        try {
          await until('the restored turns', async () => JSON.stringify((now = await viewTurns(page))) === JSON.stringify(shown), { timeoutMs: 60_000 });
        } catch (err) {
          throw new Error(`${err.message}; before the reload ${JSON.stringify(shown)}, after ${JSON.stringify(now)}`);
        }
      });
      await step('no setup card after the reload', async () => {
        if (await panel(page).locator('#setup').isVisible()) throw new Error('the "connect a model" card shows although a model is set');
      });
      await shot('restored', { name: 'e2e-first-hour-restored' });
      await step('ask a follow-up in the view', () => askInView(page, Q2));
      await step('the follow-up is answered', () => waitLastAnswer(page, /Unknown paths go to not_found/, { timeoutMs: SERVER_START_MS }));
      const earlier = [...convo];
      convo.push({ q: Q2, a: A2 });
      await step('the model got the earlier question and answer', () => {
        if (earlier.length === 0) throw new Error('no earlier answered question to carry (flow 1 did not answer)');
        checkHistory(fake.chatRequests().at(-1), earlier, Q2);
      });
      await step('a new server answered it', async () => {
        const after = groupPids(server.proc.pid, SERVER_PROCESS);
        log(`server processes after the reload: ${JSON.stringify(after)}`);
        if (!after.some((pid) => !before.includes(pid))) throw new Error(`no new server process: before ${JSON.stringify(before)}, after ${JSON.stringify(after)}`);
      });
      await step('the restored references are links', async () => {
        if (!shown.some((t) => t.links > 0)) throw new Error('no turn with reference links was restored (flow 1 did not answer)');
      });
      await step('the view is idle', () => waitIdle(page));
    },
  },
  {
    n: 3,
    name: 'restart the server: the model keeps its context; .env stays refused',
    turns: [{ tool_calls: [{ id: 'env1', name: 'read_file', arguments: { path: '.env' } }] }, { content: A3 }],
    async run({ page, fake, step, server, convo }) {
      const before = groupPids(server.proc.pid, SERVER_PROCESS);
      await step('run Lantern: Restart Server', () => command(page, 'Lantern: Restart Server'));
      await step('a new server runs', () =>
        until('a new server process', async () => {
          const now = groupPids(server.proc.pid, SERVER_PROCESS);
          return now.some((pid) => !before.includes(pid)) && now;
        }, { timeoutMs: SERVER_START_MS }),
      );
      await step('ask a follow-up in the view', () => askInView(page, Q3));
      await step('the follow-up is answered', () => waitLastAnswer(page, /Only \/health is registered/, { timeoutMs: SERVER_START_MS }));
      const earlier = [...convo];
      convo.push({ q: Q3, a: A3 });
      await step('the model got the whole conversation so far', () => {
        if (earlier.length === 0) throw new Error('no earlier answered question to carry (flows 1 and 2 did not answer)');
        checkHistory(fake.chatRequests()[0], earlier, Q3);
      });
      await step('the read of .env was refused without asking', async () => {
        const status = await toolStatus(page, 'read_file');
        if (/done|awaiting/i.test(status)) throw new Error(`read_file of .env shows ${JSON.stringify(status)}`);
        log(`.env read: ${status} — ${await textOf(lastTurn(page).locator('.tools li.tool').last()).catch(() => '')}`);
        const toolMsg = fake.chatRequests()[1]?.messages?.find((m) => m.role === 'tool');
        if (!toolMsg) throw new Error('the model got no tool result for the .env read');
      });
      await step('the view is idle', () => waitIdle(page));
    },
  },
  {
    n: 4,
    name: 'an error with a fix: Pick Model, then Retry',
    turns: [{ status: 404, error_code: 'model_not_found' }, { content: A4 }],
    async run({ page, fake, step, shot, userDataDir }) {
      const before = (await userSettings(userDataDir))['lantern.model'];
      const other = MODELS.find((m) => m !== before);
      await step('ask in the view', () => askInView(page, Q4));
      const card = lastTurn(page).locator('.error-card');
      await step('the error card shows', () => card.waitFor({ state: 'visible', timeout: ANSWER_MS }));
      const text = await textOf(card);
      log(`error card: ${text}`);
      await step('it says the model was not found, in settings words', async () => {
        if (!/not found/i.test(text) || !text.includes(before)) throw new Error(`the error card does not say ${before} was not found: ${text}`);
        if (/--(model|base-url|api-key)\b/.test(text)) throw new Error(`the error card shows a command-line flag: ${text}`);
        const fixes = (await card.locator('.error-fix').allInnerTexts()).join(' | ');
        if (!fixes.includes('lantern.model')) throw new Error(`no fix names lantern.model: ${JSON.stringify(fixes)}`);
      });
      const buttons = await step('it offers Pick Model and Retry', async () => {
        const b = (await card.locator('button.fix-action').allInnerTexts()).map((t) => t.trim());
        if (!b.includes('Pick Model') || !b.includes('Retry')) throw new Error(`the error card's buttons are ${JSON.stringify(b)}`);
        return b;
      });
      log(`error card buttons: ${JSON.stringify(buttons)}`);
      await shot('error');
      await step('click Pick Model', () => card.locator('button.fix-action', { hasText: 'Pick Model' }).click());
      await step(`the picker lists the endpoint's models; pick ${other}`, async () => {
        await quickRow(page, { title: 'Pick Model', label: before, timeoutMs: 60_000 });
        (await quickRow(page, { title: 'Pick Model', label: other })).click();
      });
      await step('lantern.model is changed in the user settings', () =>
        until('the new model in the settings file', async () => (await userSettings(userDataDir))['lantern.model'] === other),
      );
      await clearNotifications(page);
      await step('click Retry: the question is asked again', async () => {
        const asked = await turnsOf(page).filter({ has: panel(page).locator('.question', { hasText: Q4 }) }).count();
        await lastTurn(page).locator('.error-card button.fix-action', { hasText: 'Retry' }).click();
        await waitNewTurn(page, Q4, asked);
      });
      await step('the question is answered', () => waitLastAnswer(page, /ROUTES is a module-level dict/));
      await step('by the model picked', async () => {
        const requests = fake.chatRequests();
        if (requests[0]?.model !== before) throw new Error(`the failed request asked ${JSON.stringify(requests[0]?.model)}, expected ${before}`);
        if (requests.at(-1)?.model !== other) throw new Error(`the retried request asked ${JSON.stringify(requests.at(-1)?.model)}, expected ${other}`);
      });
      await step('the view is idle', () => waitIdle(page));
      await shot('retried');
    },
  },
  {
    n: 5,
    name: 'Stop a slow answer from the view',
    turns: [{ content: SLOW, chunk_delay: 0.5 }],
    async run({ page, step, shot }) {
      await step('ask in the view', () => askInView(page, 'Explain the router slowly, please.'));
      await step('the answer starts streaming', () => waitLastAnswer(page, /Let me walk through/));
      const stop = panel(page).locator('#stop');
      await step('the Stop button shows', () => stop.waitFor({ state: 'visible', timeout: 10_000 }));
      await shot('streaming');
      await step('click Stop', () => stop.click());
      await step('"Stopped." shows', () =>
        until('the stop line', async () => (await textOf(lastTurn(page).locator('.stop').last())) === 'Stopped.', { timeoutMs: 30_000 }),
      );
      await step('the Stop button goes', () => stop.waitFor({ state: 'hidden', timeout: 10_000 }));
      const partial = await answerOf(lastTurn(page)).catch(() => '');
      if (partial.length >= SLOW.trim().length) throw new Error(`the whole reply arrived (${partial.length} chars): Stop came too late`);
      await shot('stopped');
    },
  },
  {
    n: 6,
    name: 'a question typed during an answer is queued, then answered',
    turns: [{ content: A6A, chunk_delay: 0.3 }, { content: A6B }],
    async run({ page, fake, step, shot }) {
      await step('ask in the view', () => askInView(page, Q6A));
      await step('the answer starts streaming', () => waitLastAnswer(page, /The decorator registers/));
      await step('type a second question', () => askInView(page, Q6B));
      const queued = panel(page).locator('article.turn.queued');
      await step('it shows as queued', async () => {
        await queued.first().waitFor({ state: 'visible', timeout: 10_000 });
        const q = await textOf(queued.first().locator('.question'));
        const label = await textOf(queued.first().locator('.queued-label'));
        if (q !== Q6B || label !== 'Queued') throw new Error(`queued turn shows ${JSON.stringify({ q, label })}`);
        if ((await queued.first().locator('button.remove-queued').count()) !== 1) throw new Error('the queued turn has no remove button');
        if (fake.chatRequests().length !== 1) throw new Error(`the second question went to the model while the first was answering (${fake.chatRequests().length} requests)`);
      });
      await shot('queued');
      await step('the first answer completes', () => waitTurnAnswer(turnsOf(page).filter({ has: panel(page).locator('.question', { hasText: Q6A }) }).last(), /All done\./));
      await step('then the queued question is answered', () => waitLastAnswer(page, /Yes: \/health answers 200/));
      await step('it is no longer queued', async () => {
        if ((await queued.count()) !== 0) throw new Error('a turn still shows as queued');
        if ((await textOf(lastTurn(page).locator('.question'))) !== Q6B) throw new Error('the last turn is not the queued question');
      });
      await step('in a conversation longer than the view, the newest References are fully visible above the question box', () =>
        referencesFullyVisible(page, { overflowing: true }),
      );
      await shot('long-conversation');
      await step('the model got the second question after the first answer', () => {
        const requests = fake.chatRequests();
        if (requests.length !== 2) throw new Error(`expected 2 model requests, got ${requests.length}`);
        checkHistory(requests[1], [{ q: Q6A, a: 'All done.' }], Q6B);
      });
      await step('the view is idle', () => waitIdle(page));
    },
  },
  {
    n: 7,
    name: 'export the conversation to Markdown',
    turns: [],
    async run({ page, step, workspace, convo }) {
      const target = path.join(workspace, 'first-hour-export.md');
      await step('run Lantern: Export Conversation to Markdown…', () => command(page, 'Lantern: Export Conversation to Markdown…'));
      await step('type the path in the save dialog', async () => {
        const widget = page.locator('.quick-input-widget').filter({ has: page.locator('.quick-input-title', { hasText: 'Export Conversation' }) });
        await widget.waitFor({ state: 'visible', timeout: 15_000 });
        const input = widget.locator('input').first();
        // The dialog opens on a folder, then fills in the proposed file name: type once it has.
        const proposed = await until('the dialog to propose a file name', async () => {
          const value = await input.inputValue();
          return value.endsWith('.md') && value;
        }, { timeoutMs: 15_000 });
        log(`save dialog proposes ${JSON.stringify(proposed)}`);
        await input.fill(target);
        await until('the typed path to stay in the dialog', async () => (await input.inputValue()) === target, { timeoutMs: 5000 });
        await sleep(300); // the dialog checks the typed path before it takes Enter
        await input.press('Enter');
        await widget.waitFor({ state: 'hidden', timeout: 15_000 });
      });
      await step('Lantern says where it exported', async () => {
        const toast = await waitForNotification(page, /Lantern: exported to/, { timeoutMs: 15_000 });
        log(`export notification: ${await textOf(toast)}`);
      });
      const text = await step('the file is written', () => until('the exported file', async () => fs.existsSync(target) && fsp.readFile(target, 'utf8'), { timeoutMs: 15_000 }));
      log(`exported:\n${text.slice(0, 1500)}`);
      await step('it holds the question, the answer and the reference as a link', () => {
        // Flow 6's exchange is always there; flow 1's when it was answered.
        const expected = [[Q6B, 'Yes: /health answers 200', '[src/app.py:27-29](src/app.py#L27-L29)']];
        if (convo.some((c) => c.q === Q1)) expected.unshift([Q1, 'The request handler is', '[src/app.py:10-12](src/app.py#L10-L12)']);
        for (const [q, a, link] of expected) {
          if (!text.includes(`> ${q}`)) throw new Error(`no question ${JSON.stringify(q)} in the export`);
          if (!text.includes(a)) throw new Error(`no answer ${JSON.stringify(a)} in the export`);
          if (!text.includes(link)) throw new Error(`no ${link} link in the export`);
        }
        if (text.includes(CANARY)) throw new Error('the export holds the .env canary');
      });
    },
  },
  {
    n: 8,
    name: 'Always Allow, then Manage Approvals revokes it',
    turns: [readApp('a1'), { content: A8A }, readApp('a2'), { content: A8N }, readApp('a3'), { content: A8B }],
    async run({ page, fake, step, shot, workspace }) {
      await step('ask in the view', () => askInView(page, Q8A));
      await step('the approval shows in the view', () => waitPendingApproval(page));
      await step('answer Always Allow in the view', () => answerApprovalInView(page, 'Always Allow'));
      await step('the question is answered', () => waitLastAnswer(page, /Read with your permission for this whole workspace/));
      await step('the view is idle', () => waitIdle(page));
      await noteStaleApprovalToast(page);
      await clearNotifications(page);
      // A new conversation each time, so no "Allow in Chat" or earlier read can stand in for the grant.
      await step('start a new conversation with the view\'s +', () => newConversation(page));
      await step('ask in the view', () => askInView(page, Q8N));
      await step('it reads without asking', () =>
        watchNoApproval(page, () => waitLastAnswer(page, /Without asking: not_found/)),
      );
      await step('the view is idle', () => waitIdle(page));
      await clearNotifications(page);
      await step('run Lantern: Manage Approvals…', () => command(page, 'Lantern: Manage Approvals…'));
      const row = await step('it lists the Always Allow for this workspace', () =>
        quickRow(page, { title: 'Manage Approvals', label: /Every read in/, timeoutMs: 30_000 }),
      );
      const rows = await quickRows(page);
      log(`approvals listed: ${JSON.stringify(rows)}`);
      if (!rows.some((r) => r.text.includes(path.basename(workspace)) && /Always Allow/.test(r.text))) {
        throw new Error(`the listed approval does not name the workspace ${path.basename(workspace)} as Always Allow: ${JSON.stringify(rows)}`);
      }
      await shot('approvals');
      await step('select it and revoke', async () => {
        await row.click();
        const ok = page.locator('.quick-input-widget .quick-input-action a.monaco-button', { hasText: /^\s*OK\s*$/ });
        if (await ok.isVisible().catch(() => false)) await ok.click();
        else await page.keyboard.press('Enter');
      });
      await step('Lantern says it revoked it', () => waitForNotification(page, /revoked 1 approval/, { timeoutMs: 15_000 }));
      await clearNotifications(page);
      await step('start a new conversation with the view\'s +', () => newConversation(page));
      await step('ask again in the view', () => askInView(page, Q8B));
      await step('the read asks again', () => waitPendingApproval(page));
      await shot('asks-again');
      await step('answer Allow in the view', () => answerApprovalInView(page, 'Allow'));
      await step('the question is answered', () => waitLastAnswer(page, /Asked again before reading/));
      await step('the model got the file each time', () => {
        const tools = fake.chatRequests().map((r) => r.messages?.filter((m) => m.role === 'tool').map((m) => String(m.content)) ?? []);
        for (const [at, what] of [[1, 'def handle_request'], [3, 'def not_found'], [5, 'def not_found']]) {
          if (!tools[at]?.some((c) => c.includes(what))) throw new Error(`model request ${at + 1} has no tool result with ${what}: ${JSON.stringify(tools.map((t) => t.map((c) => c.slice(0, 80))))}`);
        }
      });
      await step('the view is idle', () => waitIdle(page));
    },
  },
  {
    n: 9,
    name: '"+" during an answer: a new conversation that answers, the old one kept',
    turns: [{ content: SLOW, chunk_delay: 0.5 }, { content: A9B }],
    async run({ page, fake, step, shot }) {
      await step("start a new conversation with the view's +", () => newConversation(page));
      await step('ask in the view', () => askInView(page, Q9A));
      await step('the answer starts streaming', () => waitLastAnswer(page, /Let me walk through/));
      await step("start a new conversation with the view's +", () => newConversation(page));
      await step('ask in the new conversation', () => askInView(page, Q9B));
      await step('it is answered (not left queued)', () =>
        waitLastAnswer(page, /A new conversation answers at once/, { timeoutMs: 60_000 }).catch(async (err) => {
          const queued = await panel(page).locator('article.turn.queued').count();
          throw new Error(`${err.message}${queued ? `; the view shows ${queued} queued question(s)` : ''}`);
        }),
      );
      await step('the model got only the new conversation', () => {
        const last = fake.chatRequests().at(-1);
        checkHistory(last, [], Q9B);
        if (messagesOf(last).some((m) => m.content.includes(Q9A))) throw new Error('the new conversation carries the earlier question');
      });
      await step('the view is idle', () => waitIdle(page));
      await step('Lantern: Show Conversations… lists the earlier conversation', async () => {
        await command(page, 'Lantern: Show Conversations…');
        try {
          await quickRow(page, { title: 'Conversations', label: Q9A, timeoutMs: 15_000 });
          log(`conversations listed: ${JSON.stringify(await quickRows(page))}`);
        } finally {
          await page.keyboard.press('Escape').catch(() => {});
        }
      });
      await shot('new-conversation');
    },
  },
];

// ------------------------------------------------------------------ main

/** Before each flow but the first: no notifications, and a model configured (as flow 1 leaves it). */
async function resetFlow({ page, userDataDir, fakePort }, step, flow) {
  if (flow.n === 1) return;
  await step('reset: clear notifications, model configured', async () => {
    await clearNotifications(page);
    const s = await userSettings(userDataDir).catch(() => ({}));
    if (!s['lantern.model']) {
      // Flow 1 did not connect a model: set one as it would have, so the rest can run.
      log('no lantern.model in the user settings: writing it (flow 1 did not connect one)');
      await fsp.writeFile(
        path.join(userDataDir, 'User', 'settings.json'),
        JSON.stringify({ ...s, 'lantern.model': MODELS[1], 'lantern.baseUrl': `http://127.0.0.1:${fakePort}/v1` }, null, 2),
      );
      await openLanternView(page);
      await until('the view to know the model', async () => (await textOf(panel(page).locator('#model-chip'))).includes(MODELS[1]), { timeoutMs: 30_000 }).catch(() => {});
    }
    await openLanternView(page);
  });
}

async function main() {
  return runScenarios({
    prefix: 'e2e-first-hour',
    noun: 'flow',
    scenarios: FLOWS,
    shotOnPass: false,
    ...lanternHooks({ tag: 'f', reset: resetFlow }),
    extra: (flow, { page }) => ({
      async shot(what, { name } = {}) {
        await page.mouse.move(660, 300).catch(() => {}); // no hover tooltip over the view (the editor area is empty)
        await sleep(600); // let notification toasts finish sliding in, and a tooltip go
        return screenshot(page, name ?? `e2e-first-hour-${flow.n}-${what}`);
      },
    }),
    async setUp(ctx) {
      const dirs = await prepareProfile('lantern-e2e-first-hour-');
      ctx.root = dirs.root;
      const { workspace, userDataDir, fakeDir } = dirs;
      Object.assign(ctx, { workspace, userDataDir, fakeDir, models: MODELS });
      ctx.timings = {};
      ctx.convo = []; // the exchanges so far in the conversation, for the history checks

      // No model anywhere: the fake plays a local Ollama (OLLAMA_HOST), nothing else is set.
      const unset = Object.fromEntries(['LANTERN_MODEL', 'LANTERN_BASE_URL'].filter((name) => process.env[name] !== undefined).map((name) => [name, '']));
      await openLanternWorkbench(ctx, dirs, { ollama: true, env: unset });
      log('checked: no lantern on PATH and none importable by python3 for code-server; no model configured');
    },
    finish({ timings }) {
      if (timings.firstStart) log(`timings: first start (click → local servers listed) ${timings.firstStart.toFixed(1)} s`);
    },
  });
}

runSuite(main);
