// VS Code platform targets → the wheel platforms pip downloads for them, and the
// check that a packaged .vsix carries a complete server for every Python version.
// Linux and macOS only: native Windows has no Lantern server yet (docs/platforms.md);
// Windows users run the linux package on the remote side, through WSL or SSH.
import { zipEntries, zipRead } from './zip.mjs';

export const PYTHON_VERSIONS = ['3.11', '3.12', '3.13'];

/** pip `--platform` values per VS Code target (glibc 2.28 is what VS Code itself needs). */
const manylinux = (arch) => ['manylinux_2_28', 'manylinux_2_17', 'manylinux2014'].map((t) => `${t}_${arch}`);
export const TARGETS = {
  'linux-x64': manylinux('x86_64'),
  'linux-arm64': manylinux('aarch64'),
  'darwin-x64': ['macosx_11_0_x86_64'],
  'darwin-arm64': ['macosx_11_0_arm64'],
};

/** This machine's target; on Windows, the Linux package its WSL runs. */
export function defaultTarget(platform = process.platform, arch = process.arch) {
  const target = `${platform === 'win32' ? 'linux' : platform}-${arch}`;
  return target in TARGETS ? target : 'linux-x64';
}

const WHEELS = 'extension/bundled/wheels/';
const COMPILED = ['pydantic_core', 'jiter'];

/**
 * What is missing from a .vsix for `target`, given its entry names, the names
 * inside its ripgrep wheel, and the text of each Python version's manifest
 * (`manifests[cp311]`); an empty list means it is complete.
 */
export function missingFromBundle(names, ripgrepNames, target, manifests) {
  const wheels = names.filter((n) => n.startsWith(WHEELS) && n.endsWith('.whl')).map((n) => n.slice(WHEELS.length));
  const missing = [];
  if (!wheels.some((w) => /^lantern-[^-]+-py3-none-any\.whl$/.test(w))) missing.push('the lantern wheel');
  for (const version of PYTHON_VERSIONS) {
    const cp = `cp${version.replace('.', '')}`;
    const listed = manifests[cp]?.split('\n').filter(Boolean);
    if (!listed) {
      missing.push(`the manifest for CPython ${version} (${cp}.txt)`);
      continue;
    }
    for (const name of listed) if (!wheels.includes(name)) missing.push(`${name}, listed for CPython ${version}`);
    for (const pkg of [...COMPILED, 'lantern', 'ripgrep']) {
      const found = listed.some((w) => w.startsWith(`${pkg}-`) && (!COMPILED.includes(pkg) || w.includes(`-${cp}-`)) && (pkg === 'lantern' || platformMatches(w, target)));
      if (!found) missing.push(`${pkg} for CPython ${version} (${target})`);
    }
  }
  const rg = wheels.find((w) => w.startsWith('ripgrep-'));
  if (!rg || !platformMatches(rg, target)) missing.push(`the ripgrep wheel (${target})`);
  else if (!ripgrepNames.some((n) => n.endsWith('.data/scripts/rg'))) {
    missing.push('the rg binary inside the ripgrep wheel');
  }
  return missing;
}

function platformMatches(wheel, target) {
  const tag = wheel.replace(/\.whl$/, '').split('-').pop() ?? '';
  const [os, arch] = target.split('-');
  const osOk = os === 'linux' ? tag.includes('linux') : os === 'darwin' && tag.includes('macosx');
  const archName = { x64: /x86_64|amd64/, arm64: /aarch64|arm64/ }[arch];
  return osOk && archName.test(tag);
}

/** Check the .vsix file contents in `buf` for `target`; returns what is missing. */
export function checkVsix(buf, target) {
  const entries = zipEntries(buf);
  const names = entries.map((e) => e.name);
  const rgEntry = entries.find((e) => e.name.startsWith(`${WHEELS}ripgrep-`) && e.name.endsWith('.whl'));
  const rgNames = rgEntry ? zipEntries(zipRead(buf, rgEntry)).map((e) => e.name) : [];
  const manifests = {};
  for (const e of entries) {
    const m = new RegExp(`^${WHEELS}(cp3\\d+)\\.txt$`).exec(e.name);
    if (m) manifests[m[1]] = zipRead(buf, e).toString('utf8');
  }
  return missingFromBundle(names, rgNames, target, manifests);
}
