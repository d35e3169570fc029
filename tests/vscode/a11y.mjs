// Accessibility checks of the Lantern view in code-server: axe-core run inside the view's
// own document, the colour theme switched through the user settings, text a narrow view
// cuts, and what of the workbench lies over the view's controls.
//
// axe-core is a pinned devDependency of vscode-extension (npm ci there installs it, as
// tests/run.sh does before these tests). The view's document is transparent: what shows
// through is the workbench part around it. axe would take white for it, so while axe runs
// the document is painted with the colour the workbench shows there, as a user sees it.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

import { EXT_DIR, panel, sleep, until } from './helpers.mjs';
import { command } from './view.mjs';

// The built-in themes, one of each kind, in the order a run visits them (each differs in
// kind from the one before, so the view's theme kind says the switch has reached it).
export const THEMES = [
  { name: 'Default Dark Modern', kind: 'vscode-dark', slug: 'dark' },
  { name: 'Default Light Modern', kind: 'vscode-light', slug: 'light' },
  { name: 'Default High Contrast', kind: 'vscode-high-contrast', slug: 'hc-dark' },
  { name: 'Default High Contrast Light', kind: 'vscode-high-contrast-light', slug: 'hc-light' },
];

export const IMPACTS = ['critical', 'serious', 'moderate', 'minor'];

let axeSource;
function axeScript() {
  if (axeSource) return axeSource;
  const require = createRequire(path.join(EXT_DIR, 'package.json'));
  let file;
  try {
    file = require.resolve('axe-core/axe.min.js');
  } catch (err) {
    throw new Error(`axe-core is not installed in ${EXT_DIR}: run npm ci there (${err.message})`);
  }
  axeSource = fs.readFileSync(file, 'utf8');
  return axeSource;
}

/** The view's own document (the inner frame of the webview) as a Playwright Frame. */
export async function viewFrame(page) {
  const body = await panel(page).locator('body').elementHandle({ timeout: 15_000 });
  const frame = await body.ownerFrame();
  await body.dispose();
  if (!frame) throw new Error('the view has no frame');
  return frame;
}

/** The colour the workbench shows behind the visible webview (the first opaque ancestor). */
async function backdrop(page) {
  return page.evaluate(() => {
    const frame = [...document.querySelectorAll('iframe.webview')].find((f) => f.getBoundingClientRect().width > 0);
    for (let el = frame; el; el = el.parentElement) {
      const c = getComputedStyle(el).backgroundColor;
      if (c && c !== 'transparent' && !/^rgba\(.*,\s*0\)$/.test(c)) return c;
    }
    return null;
  });
}

/**
 * axe-core over the view's document: its violations, each with its rule, impact and the
 * elements it found (selector and axe's summary).
 */
export async function runAxe(page) {
  const frame = await viewFrame(page);
  if (!(await frame.evaluate(() => typeof window.axe === 'object'))) await frame.evaluate(axeScript());
  const bg = await backdrop(page);
  return frame.evaluate(async (bg) => {
    const html = document.documentElement;
    const before = html.style.backgroundColor;
    if (bg) html.style.backgroundColor = bg;
    try {
      const result = await window.axe.run(document, { resultTypes: ['violations'] });
      return result.violations.map((v) => ({
        id: v.id,
        impact: v.impact,
        help: v.help,
        nodes: v.nodes.map((n) => ({ target: n.target.join(' '), summary: (n.failureSummary ?? '').replace(/\s+/g, ' ').slice(0, 240) })),
      }));
    } finally {
      html.style.backgroundColor = before;
    }
  }, bg);
}

/** Violations counted by impact, e.g. {critical: 0, serious: 1, moderate: 0, minor: 0}. */
export function countByImpact(violations) {
  const counts = Object.fromEntries(IMPACTS.map((i) => [i, 0]));
  for (const v of violations) counts[v.impact] = (counts[v.impact] ?? 0) + v.nodes.length;
  return counts;
}

/** A readable list of violations for a failure message. */
export function describeViolations(violations) {
  return violations
    .map((v) => `${v.impact} ${v.id} (${v.help}): ${v.nodes.slice(0, 4).map((n) => `${n.target} — ${n.summary}`).join('; ')}${v.nodes.length > 4 ? ` (+${v.nodes.length - 4} more)` : ''}`)
    .join('\n  ');
}

/**
 * Switch the colour theme with Preferences: Color Theme, which sets workbench.colorTheme
 * in the user settings as a user does (code-server keeps that setting in the browser's
 * user settings, not in the settings file of its user data folder, so a test cannot
 * write it there), then wait until the view has the theme's kind.
 */
export async function setTheme(page, theme) {
  if ((await panel(page).locator('body').getAttribute('data-vscode-theme-kind', { timeout: 5000 })) !== theme.kind) {
    await command(page, 'Preferences: Color Theme', { opensPicker: true });
    const input = page.locator('.quick-input-widget input').first();
    await page.locator('.quick-input-widget .quick-input-list .label-description', { hasText: /^\s*Default / }).first().waitFor({ state: 'visible', timeout: 15_000 });
    await input.fill(theme.name);
    const row = page
      .locator('.quick-input-widget .quick-input-list .monaco-list-row')
      // labelled by the theme's name ("Light Modern"), its setting id ("Default Light Modern") beside it
      .filter({ has: page.locator('.label-name, .label-description', { hasText: new RegExp(`^\\s*${theme.name}\\s*$`) }) });
    await row.first().waitFor({ state: 'visible', timeout: 15_000 });
    await row.first().click();
    await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: 15_000 }).catch(() => {});
  }
  await until(`the view to take the theme ${theme.name}`, async () => {
    const kind = await panel(page).locator('body').getAttribute('data-vscode-theme-kind', { timeout: 1000 });
    return kind === theme.kind;
  }, { timeoutMs: 30_000 });
  await sleep(500); // the new colours are applied with the kind; let a frame draw them
}

/**
 * Text the view cuts: elements that hide their overflow and are narrower than their
 * content, without a tooltip that holds the whole text. A region that scrolls (a code
 * block) loses nothing.
 */
export async function clippedText(page) {
  return panel(page)
    .locator('body')
    .evaluate(() => {
      const cut = [];
      for (const el of document.body.querySelectorAll('*')) {
        if (!(el instanceof HTMLElement) || el.closest('[hidden], .visually-hidden') || el.getClientRects().length === 0) continue;
        const style = getComputedStyle(el);
        if (!['hidden', 'clip'].includes(style.overflowX)) continue;
        if (el.scrollWidth <= el.clientWidth + 1) continue;
        const text = (el.textContent ?? '').replace(/\s+/g, ' ').trim();
        if (!text) continue;
        const title = el.getAttribute('title') ?? el.closest('[title]')?.getAttribute('title') ?? '';
        if (title.includes(text)) continue;
        cut.push({ tag: el.tagName.toLowerCase(), className: el.className, text: text.slice(0, 120), width: el.clientWidth, needs: el.scrollWidth });
      }
      return cut;
    });
}

/** Whether two page rectangles overlap (by more than a pixel). */
export function overlaps(a, b) {
  return Boolean(a && b) && a.x + 1 < b.x + b.width && b.x + 1 < a.x + a.width && a.y + 1 < b.y + b.height && b.y + 1 < a.y + a.height;
}

/** The rectangles of the notification toasts on screen, with their text. */
export async function toastRects(page) {
  const toasts = page.locator('.notifications-toasts .notification-toast');
  const out = [];
  for (let i = 0; i < (await toasts.count()); i++) {
    const t = toasts.nth(i);
    const box = await t.boundingBox().catch(() => null);
    if (box && box.width > 0 && box.height > 0) out.push({ ...box, text: (await t.innerText().catch(() => '')).replace(/\s+/g, ' ').trim().slice(0, 120) });
  }
  return out;
}
