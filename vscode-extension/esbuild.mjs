// Bundles the extension host code and the webview script.
import * as esbuild from "esbuild";

const production = process.argv.includes("--production");
const common = { bundle: true, minify: production, sourcemap: !production, logLevel: "info" };

await esbuild.build({
  ...common,
  entryPoints: ["src/extension.ts"],
  outfile: "out/extension.js",
  platform: "node",
  format: "cjs",
  target: "node20",
  external: ["vscode"],
});
await esbuild.build({
  ...common,
  entryPoints: ["media/webview.ts"],
  outfile: "out/webview.js",
  platform: "browser",
  format: "iife",
  target: "es2022",
});
