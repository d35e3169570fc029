import assert from "node:assert/strict";
import { test } from "node:test";
import { NATIVE_WINDOWS, unsupportedHost } from "../src/host";

test("native Windows is refused with one message that says what to use instead", () => {
  assert.equal(unsupportedHost("win32"), NATIVE_WINDOWS);
  assert.match(NATIVE_WINDOWS, /native Windows/);
  assert.match(NATIVE_WINDOWS, /WSL/);
  assert.match(NATIVE_WINDOWS, /SSH/);
  assert.doesNotMatch(NATIVE_WINDOWS, /--|lantern\.server\.command/); // an editor takes no flags
});

test("Linux and macOS hosts (local, WSL, SSH, containers) start the server", () => {
  for (const platform of ["linux", "darwin"] as const) assert.equal(unsupportedHost(platform), undefined);
});
