// Where the extension host runs. Lantern's server guards the workspace with a read
// jail proven on Linux and macOS only, so on native Windows the extension starts
// nothing at all (no Python probe, no server, not even the user's own command) and
// says once how to use Lantern there: through WSL or SSH, where VS Code runs this
// extension on the remote side (`extensionKind: ["workspace"]`) and the server on
// Linux. No VS Code API here, so it is tested with plain Node.

export const NATIVE_WINDOWS =
  "Lantern does not run on native Windows yet. Open this folder in WSL or on a Linux or " +
  "macOS machine over SSH (VS Code's Remote - WSL or Remote - SSH), and Lantern runs there.";

/** Why Lantern cannot start on this extension host, or undefined where it can. */
export function unsupportedHost(platform: NodeJS.Platform = process.platform): string | undefined {
  return platform === "win32" ? NATIVE_WINDOWS : undefined;
}
