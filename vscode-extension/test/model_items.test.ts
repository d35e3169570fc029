import assert from "node:assert/strict";
import { test } from "node:test";
import { ENTER_MODEL, modelItems, pickedMessage, serverItem } from "../src/model_items";

// VS Code renders `$(name)` in a quick pick's label, description and detail as an icon,
// unless the `$` is escaped; and turns `[label](command:…)` in a notification into a link.
const ICON = /(^|[^\\])\$\([a-z0-9-]+\)/i;
const NOTIFICATION_LINK = /\[[^\]]+\]\((?:https?:\/\/|command:|file:)[^)\s]+\)/i;

test("model names from a server show as written in the model picker, and pick that name", () => {
  const hostile = ["$(check) verified-by-lantern", "$(edit) Enter a model name…", "llama3"];
  const items = modelItems(hostile, "llama3");
  assert.equal(items.length, 4);
  for (const item of items.slice(0, 3)) assert.doesNotMatch(item.label, ICON, item.label);
  assert.deepEqual(
    items.map((i) => i.id),
    [...hostile, undefined],
  );
  assert.equal(items[0].label, "\\$(check) verified-by-lantern");
  assert.equal(items[2].description, "current");
  assert.equal(items[3].label, ENTER_MODEL); // Lantern's own item keeps its icon
});

test("a local server's name, address and models show as written in the connect picker", () => {
  const item = serverItem({ name: "Ollama $(sync~spin)", baseUrl: "http://127.0.0.1:11434/$(x)", models: ["$(warning) m1", "m2"] });
  assert.match(item.label, /^\$\(server\) /);
  for (const text of [item.label.slice("$(server) ".length), item.description, item.detail]) {
    assert.doesNotMatch(text, ICON, text);
  }
  assert.match(item.detail, /\\\$\(warning\) m1/);
});

test("the notification after a pick names the model, with no link in it", () => {
  const message = pickedMessage("m [run](command:workbench.action.terminal.new) [web](https://evil.example/x)");
  assert.doesNotMatch(message, NOTIFICATION_LINK, message);
  assert.match(message, /^Lantern will ask m \[run\].*\(command:workbench\.action\.terminal\.new\)/);
});
