// Driving the Lantern view (a webview inside two iframes) and the workbench around it
// as a user does, for the end-to-end tests in code-server: asking in the view's box,
// waiting for answers and approvals (failing at once on an error card), the quick picks
// Lantern opens, the user settings file, and what the model was sent.
import fsp from 'node:fs/promises';
import path from 'node:path';

import { log, runCommand } from './harness.mjs';
import { APPROVAL, clearNotifications, lastTurn, panel, sleep, textOf, until } from './helpers.mjs';

export const TITLES = ['Allow', 'Allow in Chat', 'Always Allow', 'Deny'];
export const ANSWER_MS = 90_000; // one answer from the fake model, busy 2-core box included

/** Take the keyboard focus out of a webview, so the workbench gets the palette key. */
export async function blurWebview(page) {
  await page.evaluate(() => (document.activeElement instanceof HTMLElement ? document.activeElement.blur() : undefined)).catch(() => {});
}

export async function command(page, title, opts) {
  await blurWebview(page);
  await runCommand(page, title, opts);
}

/**
 * Open the Lantern view from its activity bar icon (unless it is open) and wait for its
 * question box. The icon toggles: right after a reload the workbench may restore the view
 * between our look and our click, and the click then closes it, so look again and click
 * again until the box shows.
 */
export async function openLanternView(page, { timeoutMs = 60_000 } = {}) {
  const icon = page.locator('.part.activitybar .action-item .action-label[aria-label^="Lantern"]').first();
  const checked = page.locator('.part.activitybar .action-item.checked .action-label[aria-label^="Lantern"]');
  const box = panel(page).locator('#follow-up-text');
  await icon.waitFor({ state: 'visible', timeout: timeoutMs });
  await until('the Lantern view to show its question box', async () => {
    if (await box.isVisible().catch(() => false)) return true;
    if ((await checked.count()) === 0) await icon.click();
    await box.waitFor({ state: 'visible', timeout: 5_000 }).catch(() => {});
    return box.isVisible();
  }, { timeoutMs });
}

/** Type a question in the view's box, send it with Enter, and wait until it shows as the newest turn. */
export async function askInView(page, question) {
  const asked = turnsOf(page).filter({ has: panel(page).locator('.question', { hasText: question }) });
  const before = await asked.count();
  const input = panel(page).locator('#follow-up-text');
  await input.click();
  await input.fill(question);
  await input.press('Enter');
  await waitNewTurn(page, question, before);
}

/** Wait until the view has more than `before` turns asking `question`, the newest one last. */
export async function waitNewTurn(page, question, before, { timeoutMs = 15_000 } = {}) {
  const asked = turnsOf(page).filter({ has: panel(page).locator('.question', { hasText: question }) });
  await until(`the question ${JSON.stringify(question)} to show as the newest turn`, async () =>
    (await asked.count()) > before && (await textOf(lastTurn(page).locator('.question'))) === question,
  { timeoutMs });
}

export function turnsOf(page) {
  return panel(page).locator('#turns article.turn');
}

/** The text of a turn's answer (the current one, not a partial answer kept on a retry). */
export async function answerOf(turn) {
  return textOf(turn.locator('.answer:not(.interrupted)').last());
}

/** Fail at once, with what the user sees, when `turn` shows an error card instead of an answer. */
export async function failOnErrorCard(turn) {
  const card = turn.locator('.error-card');
  if ((await card.count().catch(() => 0)) > 0) {
    const text = await textOf(card.first()).catch(() => '(unreadable)');
    const error = new Error(`the question failed; the view shows: ${text}`);
    error.fatal = true;
    throw error;
  }
}

export async function waitTurnAnswer(turn, re, { timeoutMs = ANSWER_MS } = {}) {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    await failOnErrorCard(turn);
    last = await answerOf(turn).catch(() => last);
    if (re.test(last)) return last;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for the answer to match ${re} (last: ${JSON.stringify(last.slice(0, 300))})`);
    await sleep(200);
  }
}

export async function waitLastAnswer(page, re, opts) {
  return waitTurnAnswer(lastTurn(page), re, opts);
}

/** The status text of the last turn's row for `tool`. */
export async function toolStatus(page, tool) {
  const row = lastTurn(page).locator('.tools li.tool').filter({ has: panel(page).locator('.tool-name', { hasText: tool }) });
  return textOf(row.last().locator('.tool-status'));
}

/** Rows of the open quick pick: their label and description. */
export async function quickRows(page) {
  return page
    .locator('.quick-input-widget .quick-input-list .monaco-list-row')
    .evaluateAll((rows) =>
      rows.map((r) => ({
        label: (r.querySelector('.label-name')?.textContent ?? '').trim(),
        description: (r.querySelector('.label-description')?.textContent ?? '').trim(),
        text: r.innerText.replace(/\s+/g, ' ').trim(),
      })),
    )
    .catch(() => []);
}

/** Wait for a quick pick titled `title` to show a row whose label matches `label`; returns that row. */
export async function quickRow(page, { title, label, description, timeoutMs = 30_000 }) {
  const widget = page.locator('.quick-input-widget').filter({ has: page.locator('.quick-input-title', { hasText: title }) });
  // Visible parts only: a row reused from an earlier list keeps hidden labels of the old item.
  let rows = widget.locator('.quick-input-list .monaco-list-row').filter({ has: page.locator('.label-name:visible', { hasText: label }) });
  if (description) rows = rows.filter({ has: page.locator('.label-description:visible', { hasText: description }) });
  try {
    await rows.first().waitFor({ state: 'visible', timeout: timeoutMs });
  } catch (err) {
    const listed = await quickRows(page);
    const shownTitle = await page.locator('.quick-input-widget .quick-input-title').first().textContent({ timeout: 500 }).catch(() => null);
    throw new Error(`no row ${label} ${description ?? ''} in the quick pick "${title}" within ${timeoutMs} ms; shown: title ${JSON.stringify(shownTitle)}, rows ${JSON.stringify(listed)}`, { cause: err });
  }
  return rows.first();
}

/** The user settings file code-server writes (JSON, possibly with comments). */
export async function userSettings(userDataDir) {
  const text = await fsp.readFile(path.join(userDataDir, 'User', 'settings.json'), 'utf8');
  const json = text.replace(/^\s*\/\/.*$/gm, '').replace(/,(\s*[}\]])/g, '$1');
  return JSON.parse(json);
}

/** A chat request's messages as {role, content-as-text}. */
export function messagesOf(request) {
  return (request?.messages ?? []).map((m) => ({
    role: m.role,
    content: typeof m.content === 'string' ? m.content : JSON.stringify(m.content ?? ''),
  }));
}

/** Fail unless `request` carries each earlier exchange as a user and an assistant message, then `question` last. */
export function checkHistory(request, exchanges, question) {
  const messages = messagesOf(request);
  const brief = () => JSON.stringify(messages.map((m) => ({ role: m.role, content: m.content.slice(0, 120) })));
  let at = 0;
  for (const { q, a } of exchanges) {
    const u = messages.findIndex((m, i) => i >= at && m.role === 'user' && m.content.includes(q));
    if (u < 0) throw new Error(`the request does not carry the earlier question ${JSON.stringify(q)} (in order): ${brief()}`);
    const r = messages.findIndex((m, i) => i > u && m.role === 'assistant' && m.content.includes(a));
    if (r < 0) throw new Error(`the request does not carry the earlier answer ${JSON.stringify(a)} after its question: ${brief()}`);
    at = r + 1;
  }
  const lastUser = messages.filter((m) => m.role === 'user').pop();
  if (!lastUser?.content.includes(question)) throw new Error(`the last user message is not the new question ${JSON.stringify(question)}: ${brief()}`);
}

/** Geometry of the newest references section and the question box, in the view's own frame. */
export async function referencesLayout(page) {
  return panel(page)
    .locator('body')
    .evaluate(() => {
      const box = (el) => {
        if (!el) return null;
        const r = el.getBoundingClientRect();
        return { top: Math.round(r.top), bottom: Math.round(r.bottom), height: Math.round(r.height) };
      };
      const refs = [...document.querySelectorAll('#turns .references')].pop();
      const scroller = document.getElementById('conversation') ?? document.scrollingElement;
      return {
        refs: box(refs),
        form: box(document.getElementById('follow-up')),
        scroller: scroller ? box(scroller) : null,
        overflow: scroller ? scroller.scrollHeight - scroller.clientHeight : 0, // > 0: the conversation scrolls
        viewport: window.innerHeight,
      };
    });
}

/**
 * The newest References section lies wholly inside the part of the view that shows the
 * conversation, above the question box, as the view left it (the test does not scroll).
 * `overflowing`: also require a conversation longer than the view, so that it must have
 * scrolled to its end by itself.
 */
export async function referencesFullyVisible(page, { overflowing = false } = {}) {
  let last;
  try {
    await until('the references above the question box', async () => {
      const l = (last = await referencesLayout(page));
      if (!l.refs || !l.form || l.refs.height <= 0) return false;
      const top = Math.max(0, l.scroller?.top ?? 0);
      const bottom = Math.min(l.form.top, l.scroller?.bottom ?? l.form.top);
      return l.refs.top >= top && l.refs.bottom <= bottom && l.form.bottom <= l.viewport && (!overflowing || l.overflow > 0);
    }, { timeoutMs: 10_000 });
  } catch (err) {
    const short = overflowing && last && last.overflow <= 0 ? ' (the conversation does not fill the view: it needs the earlier flows)' : '';
    throw new Error(`${err.message}${short}; layout ${JSON.stringify(last)}`);
  }
  log(`layout: ${JSON.stringify(last)}`);
  return last;
}

/** The last question is answered: no Stop button, no queued or running turn left. */
export async function waitIdle(page, { timeoutMs = ANSWER_MS } = {}) {
  await until('the view to show no running answer', async () => {
    const stopShown = await panel(page).locator('#stop').isVisible().catch(() => false);
    const queued = await panel(page).locator('article.turn.queued').count();
    return !stopShown && queued === 0;
  }, { timeoutMs });
}

/** The pending approval in the last turn: its message and its buttons' titles. */
export async function pendingApproval(page) {
  const box = lastTurn(page).locator('.approval').last();
  const message = await textOf(box.locator('.approval-message'));
  const buttons = (await box.locator('button.approval-action').allInnerTexts()).map((t) => t.trim());
  return { message, buttons };
}

export async function waitPendingApproval(page, { timeoutMs = ANSWER_MS } = {}) {
  return until('an approval with its four actions in the view', async () => {
    const a = await pendingApproval(page);
    return APPROVAL.test(a.message) && JSON.stringify(a.buttons) === JSON.stringify(TITLES) && a;
  }, { timeoutMs });
}

export async function answerApprovalInView(page, action) {
  await lastTurn(page).locator('.approval button.approval-action', { hasText: new RegExp(`^\\s*${action}\\s*$`) }).first().click();
  await until('the approval to be answered (no buttons left)', async () => (await lastTurn(page).locator('.approval button.approval-action').count()) === 0, {
    timeoutMs: 15_000,
  });
}

/**
 * Say (not fail) when an approval answered in the view still shows as a notification with
 * its buttons: VS Code cannot take back a notification, so the extension leaves it there.
 */
export async function noteStaleApprovalToast(page) {
  const stale = page.locator('.notification-toast').filter({ hasText: APPROVAL });
  if ((await stale.count()) > 0) {
    log(`NOTE: answered in the view, the approval notification is still on screen: ${JSON.stringify(await textOf(stale.first()).catch(() => ''))}`);
  }
}

/** The view's "+" (New Conversation): the view empties. */
export async function newConversation(page) {
  await page.locator('.part.sidebar a.action-label[aria-label^="New Conversation"]').first().click();
  await until('no turns in the view', async () => (await turnsOf(page).count()) === 0, { timeoutMs: 15_000 });
}

/** Run `fn` and fail if an approval shows, in the view or as a notification, meanwhile. */
export async function watchNoApproval(page, fn) {
  let seen = null;
  let watching = true;
  const watch = (async () => {
    while (watching) {
      if ((await panel(page).locator('.approval button.approval-action').count().catch(() => 0)) > 0) seen ??= 'in the view';
      if ((await page.locator('.notification-toast').filter({ hasText: 'Lantern wants to' }).count().catch(() => 0)) > 0) seen ??= 'as a notification';
      await sleep(100);
    }
  })();
  try {
    return await fn();
  } finally {
    watching = false;
    await watch;
    if (seen) throw new Error(`an approval showed ${seen}`);
  }
}

/** What the view shows of each turn: its question, its answer's text and its reference links. */
export async function viewTurns(page) {
  return turnsOf(page).evaluateAll((turns) =>
    turns.map((t) => ({
      question: (t.querySelector('.question')?.textContent ?? '').trim(),
      answer: (t.querySelector('.answer:not(.interrupted)')?.textContent ?? '').replace(/\s+/g, ' ').trim(),
      error: (t.querySelector('.error-summary')?.textContent ?? '').trim(),
      links: t.querySelectorAll('.references a.lantern-ref').length,
    })),
  );
}

/** Between two scenarios (lanternHooks' reset): no notifications, the view open, a new conversation. */
export async function resetConversation(ctx, step, scenario, first) {
  if (first) return;
  await step('reset: clear notifications, new conversation', async () => {
    await clearNotifications(ctx.page);
    await openLanternView(ctx.page);
    await newConversation(ctx.page);
  });
}
