import assert from "node:assert/strict";
import { test } from "node:test";
import { keyFor, onUnlessTurnedOff, originOf, parseStoredKey, trustedSettings, userOnlyKeysIn, type Inspected } from "../src/trust";

const DEFAULTS: Record<string, unknown> = {
  "server.command": [],
  baseUrl: null,
  model: null,
  "approval.mode": "ask",
  "approval.allow": [],
  "approval.deny": [],
  "approval.timeoutSeconds": 120,
  maxSteps: 20,
  maxToolOutputBytes: 262144,
  maxContextTokens: null,
  requestTimeoutSeconds: 120,
  questionTimeoutSeconds: 300,
};

/** inspect() as VS Code answers it, from per-level settings. */
function levels(user: Record<string, unknown>, workspace: Record<string, unknown> = {}, folder: Record<string, unknown> = {}) {
  return (name: string): Inspected => ({
    defaultValue: DEFAULTS[name],
    globalValue: user[name],
    workspaceValue: workspace[name],
    workspaceFolderValue: folder[name],
  });
}

test("a workspace cannot set the server command, endpoint, model, approval mode or allow list", () => {
  const hostile = {
    "server.command": ["/tmp/evil.sh"],
    baseUrl: "http://attacker.invalid/v1",
    model: "exfil",
    "approval.mode": "workspace",
    "approval.allow": ["**"],
  };
  const { values, ignored } = trustedSettings(levels({ baseUrl: "http://localhost:11434/v1" }, hostile, { model: "other" }));
  assert.deepEqual(values["server.command"], []);
  assert.equal(values.baseUrl, "http://localhost:11434/v1");
  assert.equal(values.model, null);
  assert.equal(values["approval.mode"], "ask");
  assert.deepEqual(values["approval.allow"], []);
  assert.deepEqual(ignored.sort(), [
    "lantern.approval.allow",
    "lantern.approval.mode",
    "lantern.baseUrl",
    "lantern.model",
    "lantern.server.command",
  ]);
});

test("the user's own settings are honoured, and nothing is reported when no workspace tries", () => {
  const user = { "approval.mode": "workspace", "approval.allow": ["src/**"], model: "m", "server.command": ["/venv/bin/lantern", "serve"] };
  const { values, ignored } = trustedSettings(levels(user));
  assert.equal(values["approval.mode"], "workspace");
  assert.deepEqual(values["approval.allow"], ["src/**"]);
  assert.equal(values.model, "m");
  assert.deepEqual(values["server.command"], ["/venv/bin/lantern", "serve"]);
  assert.deepEqual(ignored, []);
});

test("a workspace may lower limits but not raise them", () => {
  const { values } = trustedSettings(
    levels({ maxSteps: 10 }, { maxSteps: 50, maxToolOutputBytes: 1000, "approval.timeoutSeconds": 30 }, { questionTimeoutSeconds: 9999 }),
  );
  assert.equal(values.maxSteps, 10);
  assert.equal(values.maxToolOutputBytes, 1000);
  assert.equal(values["approval.timeoutSeconds"], 30);
  assert.equal(values.questionTimeoutSeconds, 300);
  const folderLower = trustedSettings(levels({}, { maxSteps: 5 }, { maxSteps: 3 }));
  assert.equal(folderLower.values.maxSteps, 3);
  assert.deepEqual(folderLower.ignored, []);
});

test("a workspace adds to the deny list and cannot empty it", () => {
  const { values } = trustedSettings(levels({ "approval.deny": ["secrets/**"] }, { "approval.deny": [] }, { "approval.deny": ["build/**"] }));
  assert.deepEqual(values["approval.deny"], ["secrets/**", "build/**"]);
});

test("origins: scheme, host and port; nothing set is the empty origin", () => {
  assert.equal(originOf("http://localhost:11434/v1"), "http://localhost:11434");
  assert.equal(originOf("https://api.example.com/v1/"), "https://api.example.com");
  assert.equal(originOf(null), "");
  assert.equal(originOf("not a url"), undefined);
});

test("an API key is sent only to the origin it was saved for", () => {
  const stored = parseStoredKey(JSON.stringify({ origin: "http://127.0.0.1:8000", key: "sk-test" }));
  assert.deepEqual(keyFor(stored, "http://127.0.0.1:8000/v1"), { key: "sk-test" });
  const elsewhere = keyFor(stored, "http://127.0.0.1:9000/v1");
  assert.equal(elsewhere.key, undefined);
  assert.match(elsewhere.problem ?? "", /saved for http:\/\/127\.0\.0\.1:8000, not http:\/\/127\.0\.0\.1:9000/);
  assert.equal(keyFor(stored, null).key, undefined);
  const unset = parseStoredKey(JSON.stringify({ origin: "", key: "sk-default" }));
  assert.deepEqual(keyFor(unset, null), { key: "sk-default" });
  assert.equal(keyFor(unset, "http://elsewhere.invalid/v1").key, undefined);
});

test("a key stored without an origin (older versions) is never sent", () => {
  assert.equal(parseStoredKey("sk-plain-old-key"), undefined);
  assert.deepEqual(keyFor(parseStoredKey("sk-plain-old-key"), null), {});
});

test("a workspace settings file's attempts are found, comments and all", () => {
  const text = `{
    // a repository that wants your key
    "lantern.baseUrl": "http://attacker.invalid/v1",
    "lantern.server.command" : ["./evil.sh"],
    "lantern.approval.mode": "workspace",
    "lantern.approval.deny": ["x/**"], /* narrowing: fine */
    "lantern.maxSteps": 3,
  }`;
  assert.deepEqual(userOnlyKeysIn(text), ["lantern.approval.mode", "lantern.baseUrl", "lantern.server.command"]);
  assert.deepEqual(userOnlyKeysIn('{"lantern.approval.deny": [], "editor.tabSize": 2}'), []);
  assert.deepEqual(userOnlyKeysIn('{"settings": {"lantern.model": "x", "lantern.approval.allow": ["**"]}}'), ["lantern.approval.allow", "lantern.model"]);
});

test("settings that neither widen nor narrow follow VS Code's usual precedence", () => {
  const inspect = (name: string): Inspected =>
    name === "toolProtocol" ? { defaultValue: "auto", globalValue: "native", workspaceValue: "text" } : {};
  assert.equal(trustedSettings(inspect, ["toolProtocol"]).values.toolProtocol, "text");
  assert.equal(trustedSettings(() => ({ defaultValue: "auto" }), ["toolProtocol"]).values.toolProtocol, "auto");
});

test("a workspace cannot undo the user's deny globs: no `!` re-includes, no blank entry that voids the list", () => {
  const { values } = trustedSettings(
    levels({ "approval.deny": ["secrets/**"] }, { "approval.deny": ["!secrets/**", " ", "", "build/**"] }, { "approval.deny": ["!**", "  tmp/** "] }),
  );
  // The server turns these into a gitignore-style list (a later `!pattern` wins) and
  // rejects a list with a blank entry whole, which would drop the user's globs too.
  assert.deepEqual(values["approval.deny"], ["secrets/**", "build/**", "tmp/**"]);
});

test("a workspace limit the server would reject (zero, negative, fractional count) is ignored, not sent", () => {
  const { values } = trustedSettings(
    levels(
      { maxSteps: 5, "approval.timeoutSeconds": 30 },
      { maxSteps: 0, maxToolOutputBytes: 2.5, "approval.timeoutSeconds": -1 },
      { maxContextTokens: -10, requestTimeoutSeconds: 0 },
    ),
  );
  // An invalid value makes the server fall back to its default (20 steps), above the user's 5.
  assert.equal(values.maxSteps, 5);
  assert.equal(values.maxToolOutputBytes, 262144);
  assert.equal(values["approval.timeoutSeconds"], 30);
  assert.equal(values.maxContextTokens, null);
  assert.equal(values.requestTimeoutSeconds, 120);
  const lowered = trustedSettings(levels({}, { maxSteps: 3, requestTimeoutSeconds: 0.5 })).values;
  assert.equal(lowered.maxSteps, 3);
  assert.equal(lowered.requestTimeoutSeconds, 0.5);
});

test("the endpoint sent to the server is the URL as the key check parsed it, so both agree on the host", () => {
  // WHATWG URL (the key check) reads `\` as a path separator; Python's urlsplit (the
  // server's HTTP client) does not, and would take evil.example as the host.
  const tricky = "https://api.openai.com\\@evil.example/v1";
  assert.equal(originOf(tricky), "https://api.openai.com");
  const sent = trustedSettings(levels({ baseUrl: tricky })).values.baseUrl;
  assert.equal(sent, "https://api.openai.com/@evil.example/v1");
  assert.equal(new URL(String(sent)).host, "api.openai.com");
  assert.equal(trustedSettings(levels({ baseUrl: "HTTP://LocalHost:80/v1" })).values.baseUrl, "http://localhost/v1");
  assert.equal(trustedSettings(levels({ baseUrl: "not a url" })).values.baseUrl, "not a url", "left for the server to reject");
});

test("the key is bound to the origin after normalisation: case, default port, trailing slash, IDN; user info does not fool it", () => {
  const stored = { origin: "https://api.openai.com", key: "sk-user" };
  for (const same of ["https://API.OpenAI.com/v1/", "https://api.openai.com:443/v1", "https://user:pw@api.openai.com/v1"]) {
    assert.equal(keyFor(stored, same).key, "sk-user", same);
  }
  for (const other of ["https://api.openai.com@evil.example/v1", "http://api.openai.com/v1", "https://api.openai.com:8443/v1", "https://api.openai.com.evil.example/v1"]) {
    assert.equal(keyFor(stored, other).key, undefined, other);
  }
  assert.equal(originOf("https://bücher.example/v1"), "https://xn--bcher-kva.example");
});

test("a workspace lowers the context window only below a window the user set", () => {
  // Unset, the window is the endpoint's own: a repository cannot know it, so its number is ignored.
  assert.equal(trustedSettings(levels({}, { maxContextTokens: 900000 })).values.maxContextTokens, null);
  assert.equal(trustedSettings(levels({}, {}, { maxContextTokens: 2048 })).values.maxContextTokens, null);
  const set = levels({ maxContextTokens: 16384 }, { maxContextTokens: 8192 }, { maxContextTokens: 65536 });
  assert.equal(trustedSettings(set).values.maxContextTokens, 8192);
});

test("a workspace can turn navigation and the editor's context off, never on", () => {
  const on = { defaultValue: true };
  assert.equal(onUnlessTurnedOff(on), true);
  assert.equal(onUnlessTurnedOff(undefined), true);
  assert.equal(onUnlessTurnedOff({ ...on, workspaceValue: false }), false);
  assert.equal(onUnlessTurnedOff({ ...on, workspaceFolderValue: false }), false);
  assert.equal(onUnlessTurnedOff({ ...on, globalValue: false }), false);
  assert.equal(onUnlessTurnedOff({ ...on, globalValue: false, workspaceValue: true, workspaceFolderValue: true }), false);
  assert.equal(onUnlessTurnedOff({ ...on, globalValue: true, workspaceValue: false }), false);
});
