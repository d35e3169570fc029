// The bundled server: find a Python 3.11–3.13, make a private environment for it from
// the wheels inside the .vsix (no network), once per Python version, and say how to
// start `lantern serve` from it. No VS Code API here, so it is tested with plain Node.

import { execFile } from "child_process";
import * as crypto from "crypto";
import * as fs from "fs";
import * as path from "path";

export const SUPPORTED = { min: [3, 11], max: [3, 13] } as const;

export interface Python {
  /** Absolute path of the interpreter (its `sys.executable`). */
  executable: string;
  version: [number, number];
}

export interface Tried {
  command: string;
  reason: string;
}

export interface ServerLaunch {
  command: string;
  args: string[];
  /** Prepended to PATH, so the server finds the bundled `rg` even without its own lookup. */
  binDir: string;
}

/**
 * Runs a program. `cwd` should be a folder no repository controls (the extension's
 * storage): a bare name such as `python3` is looked up relative to it where PATH
 * has relative entries.
 */
function run(command: string, args: string[], timeoutMs: number, cwd?: string): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, timeout: timeoutMs, maxBuffer: 4 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error) reject(Object.assign(error, { stdout, stderr }));
      else resolve({ stdout, stderr });
    });
  });
}

const PROBE = "import sys; print(sys.version_info[0], sys.version_info[1]); print(sys.executable)";

/** Run `command -I -c …` (isolated: nothing from the working folder or PYTHON* variables)
 * in `cwd` and read its version and executable; a reason if unusable. */
export async function probe(command: string, timeoutMs = 10_000, cwd?: string): Promise<Python | string> {
  let out: string;
  try {
    out = (await run(command, ["-I", "-c", PROBE], timeoutMs, cwd)).stdout;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    return code === "ENOENT" ? "not found" : `did not run (${String(code ?? (error as Error).message).slice(0, 80)})`;
  }
  const [first, executable] = out.trim().split(/\r?\n/);
  const m = /^(\d+) (\d+)$/.exec(first ?? "");
  if (!m || !executable) return "did not report a version";
  const version: [number, number] = [Number(m[1]), Number(m[2])];
  if (!supported(version)) return `is Python ${version.join(".")}; Lantern needs 3.11–3.13`;
  return { executable: executable.trim(), version };
}

export function supported([major, minor]: readonly [number, number]): boolean {
  const at = major * 100 + minor;
  return at >= SUPPORTED.min[0] * 100 + SUPPORTED.min[1] && at <= SUPPORTED.max[0] * 100 + SUPPORTED.max[1];
}

/** Interpreters to try, in order: the Python extension's choice, then what PATH offers.
 * (Linux and macOS only: on native Windows nothing is started, see host.ts.) */
export function candidates(fromPythonExtension: string | undefined): string[] {
  const names = ["python3", "python"];
  const list = fromPythonExtension ? [fromPythonExtension, ...names] : names;
  return [...new Set(list)];
}

function within(file: string, folder: string): boolean {
  const rel = path.relative(folder, file);
  return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
}

function realOr(file: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    return file;
  }
}

/**
 * Whether an interpreter lies inside one of the opened folders, as named or after
 * links are followed. Such an interpreter (a committed `.venv`, whose `.pth` files
 * run at start, or a script named python) is the repository's choice, not the user's.
 */
export function insideFolders(interpreter: string, folders: readonly string[]): boolean {
  const named = path.resolve(interpreter);
  const real = realOr(named);
  return folders.some((f) => {
    const folder = path.resolve(f);
    return within(named, folder) || within(real, folder) || within(real, realOr(folder));
  });
}

/** The first supported interpreter, and what was wrong with the ones before it. */
export async function findPython(
  commands: readonly string[],
  check: (command: string) => Promise<Python | string> = probe,
): Promise<{ python?: Python; tried: Tried[] }> {
  const tried: Tried[] = [];
  for (const command of commands) {
    const result = await check(command);
    if (typeof result !== "string") return { python: result, tried };
    tried.push({ command, reason: result });
  }
  return { tried };
}

function venvBin(venv: string): string {
  return path.join(venv, "bin");
}

function venvPython(venv: string): string {
  return path.join(venvBin(venv), "python");
}

/** The bundle's list of wheels for one Python version (written by `npm run package`). */
export function manifestFor(bundleDir: string, python: Python): string {
  return path.join(bundleDir, `cp${python.version.join("")}.txt`);
}

/** What identifies one preparation: the Python version and the exact wheels. */
export function stampFor(python: Python, manifest: string): string {
  const hash = crypto.createHash("sha256").update(manifest).digest("hex").slice(0, 16);
  return `py${python.version.join(".")}-${hash}`;
}

/**
 * Installs the wheels named in a manifest into the running (fresh, private)
 * environment: each wheel's files go to site-packages, its `.data/scripts` (rg)
 * to the scripts folder. Which wheels fit this Python was decided by pip when the
 * package was built; this only unpacks them, which takes a second where running
 * pip takes ten.
 */
const UNPACK = `
import os, sys, sysconfig, zipfile
bundle, manifest = sys.argv[1], sys.argv[2]
site = os.path.realpath(sysconfig.get_path("purelib"))
scripts = os.path.realpath(sysconfig.get_path("scripts"))
names = [n.strip() for n in open(manifest, encoding="utf-8") if n.strip()]
for name in names:
    if os.path.basename(name) != name or not name.endswith(".whl"):
        sys.exit(f"bad wheel name in the manifest: {name}")
    path = os.path.join(bundle, name)
    if not os.path.isfile(path):
        sys.exit(f"the bundle lacks {name}")
    with zipfile.ZipFile(path) as wheel:
        for info in wheel.infolist():
            if info.is_dir():
                continue
            head, _, rest = info.filename.partition("/")
            if head.endswith(".data"):
                kind, _, sub = rest.partition("/")
                root = scripts if kind == "scripts" else site
            else:
                root, sub = site, info.filename
            dest = os.path.realpath(os.path.join(root, sub))
            if not dest.startswith(root + os.sep):
                sys.exit(f"{name} has a file outside its place: {info.filename}")
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with wheel.open(info) as src, open(dest, "wb") as out:
                out.write(src.read())
            if (info.external_attr >> 16) & 0o111 or root == scripts:
                os.chmod(dest, 0o755)
print(len(names))
`;

export interface PrepareOptions {
  python: Python;
  bundleDir: string;
  /** Where environments live (the extension's global storage). */
  storageDir: string;
  log?: (line: string) => void;
  timeoutMs?: number;
}

/**
 * A private environment with Lantern installed from the bundled wheels only, made
 * once per Python version and reused. It is built in a scratch folder and renamed
 * into place when complete, so an interrupted or concurrent start never leaves a
 * half-made environment behind that looks ready.
 */
export async function prepareServer(options: PrepareOptions): Promise<ServerLaunch> {
  const { python, bundleDir, storageDir } = options;
  const log = options.log ?? (() => undefined);
  const version = python.version.join(".");
  const manifestFile = manifestFor(bundleDir, python);
  const manifest = readText(manifestFile);
  if (manifest === undefined) {
    throw new Error(`this Lantern package carries no server for Python ${version}; set lantern.server.command in your user settings`);
  }
  const stamp = stampFor(python, manifest);
  const venv = path.join(storageDir, `server-py${version}`);
  const launch: ServerLaunch = {
    command: venvPython(venv),
    // -I: `-m` would otherwise put the working folder (VS Code may use the opened
    // repository) first on sys.path, where a `lantern/` or `openai/` there would run.
    args: ["-I", "-m", "lantern.cli", "serve"],
    binDir: venvBin(venv),
  };
  const stampFile = path.join(venv, "lantern-bundle.txt");
  if (readText(stampFile) === stamp && fs.existsSync(launch.command)) return launch;

  fs.mkdirSync(storageDir, { recursive: true });
  const scratch = `${venv}.partial-${process.pid}-${crypto.randomBytes(4).toString("hex")}`;
  const timeout = options.timeoutMs ?? 120_000;
  const started = Date.now();
  try {
    log(`preparing the server for Python ${version} (${python.executable}) from the bundled wheels`);
    await run(python.executable, ["-I", "-m", "venv", "--without-pip", scratch], timeout, storageDir);
    await run(venvPython(scratch), ["-I", "-c", UNPACK, bundleDir, manifestFile], timeout, storageDir);
    fs.writeFileSync(path.join(scratch, "lantern-bundle.txt"), stamp);
    // Replace an outdated environment; if another window finished first, keep its.
    if (fs.existsSync(venv) && readText(stampFile) !== stamp) fs.rmSync(venv, { recursive: true, force: true });
    try {
      fs.renameSync(scratch, venv);
    } catch (error) {
      if (readText(stampFile) !== stamp) throw error;
    }
    log(`server prepared in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return launch;
  } catch (error) {
    const e = error as { stderr?: string; message?: string };
    const detail = (e.stderr || e.message || String(error)).trim().split(/\r?\n/).slice(-3).join(" ");
    throw new Error(`could not prepare Lantern's server with Python ${version}: ${detail}`);
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

function readText(file: string): string | undefined {
  try {
    return fs.readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}
