import assert from "node:assert/strict";
import { test } from "node:test";
import { grantLabel } from "../src/grant_items";

// VS Code renders `$(name)` in a quick pick's label as an icon unless the `$` is escaped.
// Lantern's own icon leads the label; the names after it come from the workspace.
const NAMED_ICONS = /(^|[^\\])\$\([a-z0-9-]+\)/gi;

test("a grant's folder and file names show as written, never as icons", () => {
  const folder = grantLabel({ id: "1", scope: "conversation", kind: "folder", tool: "search", path: "src/$(zap)", workspace: "ws" });
  assert.equal(folder.label, "$(folder) Search in src/\\$(zap)");
  assert.equal(folder.label.match(NAMED_ICONS)?.length, 1);
  const file = grantLabel({ id: "2", scope: "conversation", kind: "file", path: "$(alert) read me.md", workspace: "ws" });
  assert.equal(file.label, "$(file) Read \\$(alert) read me.md");
  const workspace = grantLabel({ id: "3", scope: "always", kind: "workspace", workspace: "/home/me/$(shield)proj" });
  assert.equal(workspace.label, "$(shield) Every read in /home/me/\\$(shield)proj");
});

test("a folder grant names its verb by tool and the workspace for the root", () => {
  assert.equal(grantLabel({ id: "1", scope: "conversation", kind: "folder", tool: "find_symbol", path: ".", workspace: "ws" }).label, "$(folder) Look up code in ws");
  assert.equal(grantLabel({ id: "1", scope: "conversation", kind: "folder", tool: "list_files", path: "src", workspace: "ws" }).label, "$(folder) List src");
});
