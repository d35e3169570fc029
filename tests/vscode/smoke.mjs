// Smoke test for the VS Code end-to-end setup: code-server starts, Chromium
// renders the workbench, Quick Open opens hello.py in an editor tab.
// Run tests/vscode/setup.sh first, then: node tests/vscode/smoke.mjs
// Screenshot: tests/artifacts/vscode-smoke.png
import fsp from 'node:fs/promises';
import path from 'node:path';

import {
  closeBrowser,
  launchBrowser,
  log,
  makeTempDir,
  openFile,
  openWorkbench,
  removeDir,
  screenshot,
  startCodeServer,
  tabLabels,
  timed,
} from './harness.mjs';

async function main() {
  const t0 = Date.now();
  const workspace = await makeTempDir('lantern-smoke-ws-');
  const userDataDir = await makeTempDir('lantern-smoke-user-');
  const extensionsDir = await makeTempDir('lantern-smoke-ext-');
  await fsp.writeFile(path.join(workspace, 'hello.py'), 'def hello():\n    return "hello from Lantern"\n');

  let server;
  let browser;
  let page;
  try {
    server = await timed('code-server start (until /healthz answers)', () =>
      startCodeServer({ workspace, userDataDir, extensionsDir }),
    );
    log(`code-server listening on ${server.url}`);
    browser = await timed('chromium launch', () => launchBrowser());
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await timed('workbench load', () => openWorkbench(page, server.port, workspace));
    await timed('quick open hello.py', () => openFile(page, 'hello.py'));
    const labels = await tabLabels(page);
    if (!labels.map((l) => l.trim()).includes('hello.py')) {
      throw new Error(`hello.py is not among the open tabs: ${JSON.stringify(labels)}`);
    }
    log(`open tabs: ${JSON.stringify(labels)}`);
    const file = await timed('screenshot', () => screenshot(page, 'vscode-smoke'));
    log(`screenshot: ${file}`);
  } catch (err) {
    if (page) {
      const file = await screenshot(page, 'vscode-smoke-failure').catch(() => null);
      if (file) log(`failure screenshot: ${file}`);
    }
    if (server) log(`code-server output:\n${server.output()}`);
    throw err;
  } finally {
    await timed('close browser', () => closeBrowser(browser));
    if (server) await timed('stop code-server', () => server.stop());
    await removeDir(workspace);
    await removeDir(userDataDir);
    await removeDir(extensionsDir);
  }
  log(`smoke OK in ${((Date.now() - t0) / 1000).toFixed(1)}s`);
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(`[vscode-e2e] smoke FAILED: ${err.stack || err}`);
    process.exit(1);
  },
);
