import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { candidates, findPython, insideFolders, prepareServer, probe, supported, type Python } from "../src/python";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "lantern-python-test-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** An executable that answers the probe like a Python of this version would. */
function fakeInterpreter(name: string, version: string): string {
  const file = path.join(tmp, name);
  fs.writeFileSync(file, `#!/bin/sh\necho "${version.replace(".", " ")}"\necho "${file}"\n`, { mode: 0o755 });
  return file;
}

/** A Python >= 3.11 on this machine, as the tests' real interpreter. */
function realPython(): string {
  for (const name of ["python3", "python3.13", "python3.12", "python3.11"]) {
    try {
      const out = execFileSync(name, ["-c", "import sys; print(sys.version_info >= (3, 11)); print(sys.executable)"], { encoding: "utf8" });
      const [ok, exe] = out.trim().split("\n");
      if (ok === "True") return exe;
    } catch {
      // try the next name
    }
  }
  throw new Error("these tests need a Python 3.11+ on PATH");
}

test("supported versions are 3.11 to 3.13", () => {
  assert.equal(supported([3, 10]), false);
  assert.equal(supported([3, 11]), true);
  assert.equal(supported([3, 13]), true);
  assert.equal(supported([3, 14]), false);
  assert.equal(supported([2, 7]), false);
});

test("the Python extension's interpreter is tried first, then PATH names, without repeats", () => {
  assert.deepEqual(candidates("/envs/a/bin/python"), ["/envs/a/bin/python", "python3", "python"]);
  assert.deepEqual(candidates(undefined), ["python3", "python"]);
  assert.deepEqual(candidates("python3"), ["python3", "python"]);
});

test("discovery skips missing and too old interpreters and says why", async () => {
  const old = fakeInterpreter("python-old", "3.10");
  const future = fakeInterpreter("python-future", "3.14");
  const real = realPython();
  const { python, tried } = await findPython([path.join(tmp, "no-such-python"), old, future, real]);
  assert.ok(python, "the real interpreter is found");
  assert.ok(python.version[0] === 3 && python.version[1] >= 11);
  assert.ok(path.isAbsolute(python.executable));
  assert.deepEqual(
    tried.map((t) => t.reason),
    ["not found", "is Python 3.10; Lantern needs 3.11–3.13", "is Python 3.14; Lantern needs 3.11–3.13"],
  );
});

test("discovery with nothing usable finds nothing", async () => {
  const { python, tried } = await findPython([fakeInterpreter("python-39", "3.9")]);
  assert.equal(python, undefined);
  assert.equal(tried.length, 1);
  assert.equal(typeof (await probe(path.join(tmp, "missing"))), "string");
});

// ------------------------------------------------------------------ environment preparation

let python: Python;
let bundle: string;

/** A small wheel named `lantern` whose `lantern.cli serve` prints a line: enough to prove the install. */
function writeLanternWheel(dir: string, version: string): void {
  const script = `
import sys, zipfile, base64, hashlib
dest, version = sys.argv[1], sys.argv[2]
files = {
    "lantern/__init__.py": "",
    "lantern/cli/__init__.py": "",
    "lantern/cli/__main__.py": "import sys\\nif __name__ == '__main__':\\n    print('bundled lantern', ' '.join(sys.argv[1:]))\\n",
    f"lantern-{version}.dist-info/METADATA": f"Metadata-Version: 2.1\\nName: lantern\\nVersion: {version}\\n",
    f"lantern-{version}.dist-info/WHEEL": "Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
}
record = []
for name, text in files.items():
    digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
    record.append(f"{name},sha256={digest},{len(text.encode())}")
record.append(f"lantern-{version}.dist-info/RECORD,,")
files[f"lantern-{version}.dist-info/RECORD"] = "\\n".join(record) + "\\n"
with zipfile.ZipFile(f"{dest}/lantern-{version}-py3-none-any.whl", "w") as z:
    for name, text in files.items():
        z.writestr(name, text)
`;
  execFileSync(python.executable, ["-c", script, dir, version]);
}

/** Write the manifest that lists `wheels` for the test's Python version. */
function writeManifest(dir: string, wheels: string[]): void {
  fs.writeFileSync(path.join(dir, `cp${python.version.join("")}.txt`), wheels.join("\n") + "\n");
}

/** A wheel `name` with one module and one script under .data/scripts (as ripgrep ships rg). */
function writeToolWheel(dir: string, name: string): string {
  const file = `${name}-1.0-py3-none-any.whl`;
  const script = `
import sys, zipfile
dest, name, file = sys.argv[1:4]
with zipfile.ZipFile(f"{dest}/{file}", "w") as z:
    z.writestr(f"{name}/__init__.py", "VALUE = 42\\n")
    z.writestr(f"{name}-1.0.dist-info/METADATA", f"Metadata-Version: 2.1\\nName: {name}\\nVersion: 1.0\\n")
    z.writestr(f"{name}-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n")
    info = zipfile.ZipInfo(f"{name}-1.0.data/scripts/{name}-tool")
    info.external_attr = 0o755 << 16
    z.writestr(info, "#!/bin/sh\\necho tool ran\\n")
`;
  execFileSync(python.executable, ["-c", script, dir, name, file]);
  return file;
}

before(async () => {
  const found = (await findPython([realPython()])).python;
  assert.ok(found);
  python = found;
  bundle = path.join(tmp, "bundle");
  fs.mkdirSync(bundle);
  writeLanternWheel(bundle, "0.0.1");
  const tool = writeToolWheel(bundle, "lanterntool");
  writeManifest(bundle, ["lantern-0.0.1-py3-none-any.whl", tool]);
});

test("the first start makes a private environment from the bundled wheels; later starts reuse it", async () => {
  const storage = path.join(tmp, "storage-reuse");
  const lines: string[] = [];
  const launch = await prepareServer({ python, bundleDir: bundle, storageDir: storage, log: (l) => lines.push(l) });
  assert.ok(launch.command.startsWith(storage), "the server runs from the extension's storage");
  const out = execFileSync(launch.command, launch.args, { encoding: "utf8" });
  assert.equal(out.trim(), "bundled lantern serve");
  const value = execFileSync(launch.command, ["-c", "import lanterntool; print(lanterntool.VALUE)"], { encoding: "utf8" });
  assert.equal(value.trim(), "42", "every wheel in the manifest is installed");
  assert.equal(execFileSync(path.join(launch.binDir, "lanterntool-tool"), { encoding: "utf8" }).trim(), "tool ran", "scripts are executable in bin");
  assert.match(lines.join("\n"), /preparing the server for Python 3\.\d+/);
  assert.deepEqual(fs.readdirSync(storage), [`server-py${python.version.join(".")}`], "no scratch folder is left behind");

  const marker = path.join(path.dirname(launch.binDir), "marker-from-test");
  fs.writeFileSync(marker, "");
  lines.length = 0;
  const again = await prepareServer({ python, bundleDir: bundle, storageDir: storage, log: (l) => lines.push(l) });
  assert.deepEqual(again, launch);
  assert.ok(fs.existsSync(marker), "the environment was reused, not rebuilt");
  assert.deepEqual(lines, []);
});

test("a different bundle (an updated extension) rebuilds the environment", async () => {
  const storage = path.join(tmp, "storage-update");
  const first = await prepareServer({ python, bundleDir: bundle, storageDir: storage });
  const marker = path.join(path.dirname(first.binDir), "marker-from-test");
  fs.writeFileSync(marker, "");
  const newer = path.join(tmp, "bundle-newer");
  fs.mkdirSync(newer);
  writeLanternWheel(newer, "0.0.2");
  writeManifest(newer, ["lantern-0.0.2-py3-none-any.whl"]);
  const second = await prepareServer({ python, bundleDir: newer, storageDir: storage });
  assert.equal(second.command, first.command);
  assert.equal(fs.existsSync(marker), false, "the old environment was replaced");
  const version = execFileSync(second.command, ["-c", "import importlib.metadata as m; print(m.version('lantern'))"], { encoding: "utf8" });
  assert.equal(version.trim(), "0.0.2");
});

test("a wheel missing from the bundle fails with the reason, and nothing half-made is left", async () => {
  const broken = path.join(tmp, "bundle-broken");
  fs.mkdirSync(broken);
  writeLanternWheel(broken, "0.0.3");
  writeManifest(broken, ["lantern-0.0.3-py3-none-any.whl", "pydantic_core-9-cp311-cp311-any.whl"]);
  const storage = path.join(tmp, "storage-broken");
  await assert.rejects(
    prepareServer({ python, bundleDir: broken, storageDir: storage }),
    /could not prepare Lantern's server with Python 3\.\d+: the bundle lacks pydantic_core-9-cp311-cp311-any\.whl/,
  );
  assert.deepEqual(fs.existsSync(storage) ? fs.readdirSync(storage) : [], []);
});

test("a wheel that would write outside the environment is refused", async () => {
  const evil = path.join(tmp, "bundle-evil");
  fs.mkdirSync(evil);
  execFileSync(python.executable, ["-c", "import sys, zipfile\nwith zipfile.ZipFile(sys.argv[1], 'w') as z:\n    z.writestr('../../escaped.txt', 'x')\n", path.join(evil, "evil-1-py3-none-any.whl")]);
  writeManifest(evil, ["evil-1-py3-none-any.whl"]);
  const storage = path.join(tmp, "storage-evil");
  await assert.rejects(prepareServer({ python, bundleDir: evil, storageDir: storage }), /has a file outside its place/);
  assert.equal(fs.existsSync(path.join(tmp, "escaped.txt")), false);
  assert.equal(fs.existsSync(path.join(storage, "escaped.txt")), false);
});

test("a package without a server says so", async () => {
  const empty = path.join(tmp, "bundle-empty");
  fs.mkdirSync(empty);
  await assert.rejects(prepareServer({ python, bundleDir: empty, storageDir: path.join(tmp, "s") }), /carries no server for Python 3\.\d+; set lantern\.server\.command/);
});

test("a repository's own modules never run: not while preparing, not when the server starts there", async () => {
  // VS Code may start the server with the opened folder as its working directory, and
  // `python -m` puts the working directory first on sys.path.
  const repo = path.join(tmp, "hostile-repo");
  const marker = path.join(tmp, "hostile-marker");
  const plant = `open(${JSON.stringify(marker)}, "a").write(__name__ + "\\n")\n`;
  fs.mkdirSync(path.join(repo, "lantern", "cli"), { recursive: true });
  fs.writeFileSync(path.join(repo, "venv.py"), plant);
  fs.writeFileSync(path.join(repo, "lantern", "__init__.py"), plant);
  fs.writeFileSync(path.join(repo, "lantern", "cli", "__init__.py"), plant);
  fs.writeFileSync(path.join(repo, "lantern", "cli", "__main__.py"), plant);
  const storage = path.join(tmp, "storage-hostile");
  const before = process.cwd();
  process.chdir(repo);
  let launch;
  try {
    launch = await prepareServer({ python, bundleDir: bundle, storageDir: storage });
  } finally {
    process.chdir(before);
  }
  const out = execFileSync(launch.command, launch.args, { encoding: "utf8", cwd: repo });
  assert.equal(out.trim(), "bundled lantern serve");
  assert.equal(fs.existsSync(marker), false, "no module from the repository was imported");
});

test("a `python3` in the opened folder is not run through a relative PATH entry when probing from a safe folder", async () => {
  const repo = path.join(tmp, "repo-with-python3");
  const safe = path.join(tmp, "safe-cwd");
  fs.mkdirSync(repo);
  fs.mkdirSync(safe);
  const marker = path.join(tmp, "python3-marker");
  fs.writeFileSync(path.join(repo, "python3"), `#!/bin/sh\ntouch ${JSON.stringify(marker)}\necho "3 12"\necho /repo/python3\n`, { mode: 0o755 });
  const before = { cwd: process.cwd(), PATH: process.env.PATH };
  process.chdir(repo);
  process.env.PATH = ["." , path.dirname(python.executable), before.PATH].join(path.delimiter);
  let found;
  try {
    found = await probe("python3", 10_000, safe);
  } finally {
    process.chdir(before.cwd);
    process.env.PATH = before.PATH;
  }
  assert.equal(fs.existsSync(marker), false, "the repository's python3 never ran");
  assert.notEqual(typeof found, "string");
});

test("an interpreter inside an opened folder, named or through a link, is the repository's", () => {
  const repo = path.join(tmp, "repo-venv");
  fs.mkdirSync(path.join(repo, ".venv", "bin"), { recursive: true });
  const inside = path.join(repo, ".venv", "bin", "python");
  fs.writeFileSync(inside, "");
  const link = path.join(tmp, "python-link");
  fs.symlinkSync(inside, link);
  assert.equal(insideFolders(inside, [repo]), true);
  assert.equal(insideFolders(path.join(repo, "sub", "..", ".venv", "bin", "python"), [repo]), true);
  assert.equal(insideFolders(link, ["/elsewhere", repo]), true, "a link outside pointing in");
  assert.equal(insideFolders(python.executable, [repo]), false);
  assert.equal(insideFolders(path.join(tmp, "repo-venv-other", "python"), [repo]), false, "a sibling with a common prefix");
});
