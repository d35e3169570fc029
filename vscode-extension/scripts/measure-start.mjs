// How long the bundled server takes to get ready: the first start (private
// environment made from the bundled wheels) and a later one (reused), plus the
// server's own start to `--version`. Needs `npm test` (compiles src/python.ts to
// out-test/) and `npm run package` (fills bundled/wheels) first:
//
//   node scripts/measure-start.mjs
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const EXT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { candidates, findPython, prepareServer } = createRequire(import.meta.url)(path.join(EXT, 'out-test', 'src', 'python.js'));
const bundleDir = path.join(EXT, 'bundled', 'wheels');
const storage = fs.mkdtempSync(path.join(os.tmpdir(), 'lantern-measure-'));
try {
  const { python, tried } = await findPython(candidates(undefined));
  if (!python) throw new Error(`no Python 3.11–3.13: ${JSON.stringify(tried)}`);
  const time = async (fn) => {
    const t = process.hrtime.bigint();
    const value = await fn();
    return [Number(process.hrtime.bigint() - t) / 1e9, value];
  };
  const [first, launch] = await time(() => prepareServer({ python, bundleDir, storageDir: storage }));
  const [later] = await time(() => prepareServer({ python, bundleDir, storageDir: storage }));
  const [serve] = await time(() => execFileSync(launch.command, ['-m', 'lantern.cli', '--version'], { encoding: 'utf8' }));
  console.log(`Python ${python.version.join('.')}: first prepare ${first.toFixed(2)} s, later prepare ${later.toFixed(3)} s, lantern --version ${serve.toFixed(2)} s`);
} finally {
  fs.rmSync(storage, { recursive: true, force: true });
}
