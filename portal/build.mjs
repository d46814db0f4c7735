// Builds the portal into dist/: its bundled, minified scripts (the portal, and the connect page
// end users open from a connect link) and one stylesheet (uPlot's and ours), named by their
// content's hash so browsers may keep them, and the pages that load them. The service embeds
// dist/ (api/build.rs); nothing is fetched from any other host.
import { build } from "esbuild";
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";

const out = new URL("./dist/", import.meta.url);
rmSync(out, { recursive: true, force: true });
mkdirSync(new URL("assets/", out), { recursive: true });

const hash = (bytes) => createHash("sha256").update(bytes).digest("hex").slice(0, 12);
const style = Buffer.concat([
  readFileSync(new URL("./node_modules/uplot/dist/uPlot.min.css", import.meta.url)),
  readFileSync(new URL("./src/style.css", import.meta.url)),
]);
writeFileSync(new URL("assets/app.css", out), style);

// Each page: its HTML, and the script it loads.
for (const [page, entry] of [["index.html", "main.js"], ["connect.html", "connect.js"]]) {
  const name = entry === "main.js" ? "app.js" : entry;
  const bundle = await build({
    entryPoints: [new URL(`./src/${entry}`, import.meta.url).pathname],
    bundle: true,
    minify: true,
    format: "esm",
    target: "es2020",
    write: false,
    legalComments: "none",
  });
  const script = bundle.outputFiles[0].contents;
  writeFileSync(new URL(`assets/${name}`, out), script);
  const html = readFileSync(new URL(`./${page}`, import.meta.url), "utf8")
    .replace(`/assets/${name}`, `/assets/${name}?v=${hash(script)}`)
    .replace("/assets/app.css", `/assets/app.css?v=${hash(style)}`);
  writeFileSync(new URL(page, out), html);
  console.log(`portal built: ${page}, ${name} ${script.length} bytes`);
}
console.log(`portal built: app.css ${style.length} bytes`);
