// `npm run package [-- --target <vscode-target>]`: a platform-specific .vsix that
// carries Lantern's server as wheels (Lantern, its dependencies with the compiled
// ones for CPython 3.11–3.13, ripgrep with its rg), fetched from PyPI with
// `pip download`, plus one manifest per Python version (cp311.txt…) naming the
// wheels pip resolved for it. Writes lantern-<target>.vsix and checks it.
//
//   --target     linux-x64 (default on Linux x64), linux-arm64, darwin-x64,
//                darwin-arm64. No win32 target: native Windows has no Lantern
//                server yet; on Windows the default is the Linux package for WSL.
//   --python     the Python whose pip downloads (default: ../.venv/bin/python, else python3)
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PYTHON_VERSIONS, TARGETS, checkVsix, defaultTarget } from './targets.mjs';

const EXT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const REPO = path.resolve(EXT, '..');
const WHEELS = path.join(EXT, 'bundled', 'wheels');

function option(name) {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
}

function run(cmd, args, opts = {}) {
  console.error(`$ ${[cmd, ...args].join(' ')}`);
  const r = spawnSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], ...opts });
  if (r.status !== 0) throw new Error(`${cmd} failed (${r.status ?? r.signal})`);
}

const target = option('target') ?? defaultTarget();
if (!(target in TARGETS)) throw new Error(`unknown --target ${target}; one of ${Object.keys(TARGETS).join(', ')}`);
const venvPython = path.join(REPO, '.venv', 'bin', 'python');
const python = option('python') ?? (fs.existsSync(venvPython) ? venvPython : 'python3');
const pip = [python, '-m', 'pip', '--disable-pip-version-check'];

fs.rmSync(path.join(EXT, 'bundled'), { recursive: true, force: true });
fs.mkdirSync(WHEELS, { recursive: true });

// Lantern itself (pure Python), then everything it needs for each Python version.
run(pip[0], [...pip.slice(1), 'wheel', '--quiet', '--no-deps', '--wheel-dir', WHEELS, REPO]);
const lantern = fs.readdirSync(WHEELS).find((f) => f.startsWith('lantern-') && f.endsWith('.whl'));
if (!lantern) throw new Error('pip wheel made no lantern wheel');
const platforms = TARGETS[target].flatMap((p) => ['--platform', p]);
// One download per Python version into a folder of its own, so each version's
// manifest (cp311.txt…) lists exactly the wheels pip resolved for it.
for (const version of PYTHON_VERSIONS) {
  const cp = `cp${version.replace('.', '')}`;
  const dir = path.join(EXT, 'bundled', cp);
  run(pip[0], [
    ...pip.slice(1), 'download', '--quiet', '--only-binary=:all:', '--dest', dir,
    ...platforms, '--python-version', version, '--implementation', 'cp',
    '--abi', cp, '--abi', 'abi3', '--abi', 'none',
    path.join(WHEELS, lantern),
  ]);
  const names = fs.readdirSync(dir).filter((f) => f.endsWith('.whl')).sort();
  for (const name of names) fs.copyFileSync(path.join(dir, name), path.join(WHEELS, name));
  fs.writeFileSync(path.join(WHEELS, `${cp}.txt`), names.join('\n') + '\n');
  fs.rmSync(dir, { recursive: true, force: true });
}

const out = `lantern-${target}.vsix`;
run(path.join(EXT, 'node_modules', '.bin', 'vsce'), [
  'package', '--target', target, '--no-dependencies', '--allow-missing-repository', '--skip-license', '-o', out,
], { cwd: EXT });

const missing = checkVsix(fs.readFileSync(path.join(EXT, out)), target);
if (missing.length) throw new Error(`${out} is incomplete; missing: ${missing.join('; ')}`);
const mb = (fs.statSync(path.join(EXT, out)).size / 1024 / 1024).toFixed(1);
console.error(`${out}: ${mb} MB, ${fs.readdirSync(WHEELS).filter((f) => f.endsWith('.whl')).length} wheels, complete for CPython ${PYTHON_VERSIONS.join(', ')}`);
