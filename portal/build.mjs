// Builds the portal into dist/: one bundled, minified script and one stylesheet (uPlot's and
// ours), named by their content's hash so browsers may keep them, and the page that loads them.
// The service embeds dist/ (api/build.rs); nothing is fetched from any other host.
import { build } from "esbuild";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";

const out = new URL("./dist/", import.meta.url);
rmSync(out, { recursive: true, force: true });
mkdirSync(new URL("assets/", out), { recursive: true });

const bundle = await build({
  entryPoints: [new URL("./src/main.js", import.meta.url).pathname],
  bundle: true,
  minify: true,
  format: "esm",
  target: "es2020",
  write: false,
  legalComments: "none",
});
const script = bundle.outputFiles[0].contents;
const style = Buffer.concat([
  readFileSync(new URL("./node_modules/uplot/dist/uPlot.min.css", import.meta.url)),
  readFileSync(new URL("./src/style.css", import.meta.url)),
]);
const hash = (bytes) => createHash("sha256").update(bytes).digest("hex").slice(0, 12);
writeFileSync(new URL("assets/app.js", out), script);
writeFileSync(new URL("assets/app.css", out), style);
const page = readFileSync(new URL("./index.html", import.meta.url), "utf8")
  .replace("/assets/app.js", `/assets/app.js?v=${hash(script)}`)
  .replace("/assets/app.css", `/assets/app.css?v=${hash(style)}`);
writeFileSync(new URL("index.html", out), page);
console.log(`portal built: app.js ${script.length} bytes, app.css ${style.length} bytes`);
