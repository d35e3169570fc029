// How Lantern: Manage Approvals lists a grant. Pure (no vscode import), so it is unit-tested:
// the folder and file names come from the workspace, and a name like `$(zap)` must show as
// written, not as an icon.

import { iconSafe } from "./model_items";
import type { Grant } from "./protocol";

/** A folder grant's verb, by the tool it was given to (a code lookup: outline, find_symbol, find_references). */
const FOLDER_GRANTS: Record<string, string> = {
  search: "Search in",
  outline: "Look up code in",
  find_symbol: "Look up code in",
  find_references: "Look up code in",
};

/** How a grant reads in the list. Pure. */
export function grantLabel(grant: Grant): { label: string; description: string; detail?: string } {
  const since = grant.since ? `since ${new Date(grant.since * 1000).toLocaleString()}` : undefined;
  if (grant.kind === "workspace") {
    return { label: `$(shield) Every read in ${iconSafe(grant.workspace)}`, description: "Always Allow · remembered", detail: since };
  }
  const what = grant.kind === "folder" ? (FOLDER_GRANTS[grant.tool ?? ""] ?? "List") : "Read";
  const where = !grant.path || grant.path === "." ? grant.workspace : grant.path;
  return { label: `$(${grant.kind === "folder" ? "folder" : "file"}) ${what} ${iconSafe(where)}`, description: "Allow in Chat · this conversation", detail: since };
}
