import assert from "node:assert/strict";
import { test } from "node:test";
import { serverCommand, toServerOptions } from "../src/settings";

test("settings become nested initializationOptions in the server's vocabulary", () => {
  const values: Record<string, unknown> = {
    model: "qwen2.5-coder",
    baseUrl: "http://localhost:11434/v1",
    "approval.mode": "workspace",
    "approval.allow": ["src/**"],
    "approval.deny": [],
    "approval.timeoutSeconds": 30,
    maxSteps: 8,
    "server.command": ["x"],
  };
  assert.deepEqual(toServerOptions((name) => values[name]), {
    model: "qwen2.5-coder",
    baseUrl: "http://localhost:11434/v1",
    approval: { mode: "workspace", allow: ["src/**"], deny: [], timeoutSeconds: 30 },
    maxSteps: 8,
  });
});

test("unset settings are left out so the server's own precedence applies", () => {
  assert.deepEqual(toServerOptions(() => null), {});
  assert.deepEqual(toServerOptions((name) => (name === "model" ? "" : undefined)), {});
});

test("server command: unset or empty is the bundled server, a list is used as given, a bad value says why", () => {
  assert.deepEqual(serverCommand(undefined), { args: [], problem: undefined });
  assert.deepEqual(serverCommand([]), { args: [], problem: undefined });
  assert.deepEqual(serverCommand(["/venv/bin/lantern", "serve"]), { command: "/venv/bin/lantern", args: ["serve"] });
  const bad = serverCommand("lantern serve");
  assert.equal(bad.command, undefined);
  assert.match(bad.problem ?? "", /list of strings; using the bundled server/);
});
