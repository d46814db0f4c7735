// What the browser tests share: their settings from the environment, their steps printed, and
// Chromium (Debian's, driven by playwright-core) watching every page they open for requests to
// other hosts, page errors and console errors (4xx answers aside: the tests cause those).
import { chromium } from "playwright-core";

export const env = (k) => {
  const v = process.env[k];
  if (!v) throw new Error(`${k} is not set`);
  return v;
};

export const step = (s) => console.log(`- ${s}`);

/** Launches CHROMIUM for the service at BASE; ALSO_ALLOWED lists other origins pages may reach. */
export async function launch() {
  const allowed = new Set([new URL(env("BASE")).origin, ...(process.env.ALSO_ALLOWED || "").split(",").filter(Boolean)]);
  const browser = await chromium.launch({ executablePath: env("CHROMIUM"), args: ["--no-sandbox"] });
  const foreign = [];
  const failures = [];
  /** A page in a new context (its own cookies) with `options` (viewport, …). */
  const open = async (options) => {
    const context = await browser.newContext(options);
    context.on("request", (r) => {
      if (r.url().startsWith("data:")) return;
      if (!allowed.has(new URL(r.url()).origin)) foreign.push(r.url());
    });
    const page = await context.newPage();
    page.on("pageerror", (e) => failures.push(`page error: ${e.message}`));
    page.on("console", (m) => m.type() === "error" && !/status of 4\d\d/.test(m.text()) && failures.push(`console: ${m.text()}`));
    page.setDefaultTimeout(20_000);
    return page;
  };
  /** Closes the browser; exits non-zero if a page reached another host or failed. */
  const finish = async () => {
    await browser.close();
    if (foreign.length) {
      console.error(`requests to other hosts: ${foreign.join(", ")}`);
      process.exit(2);
    }
    if (failures.length) {
      console.error(failures.join("\n"));
      process.exit(3);
    }
  };
  return { open, finish, close: () => browser.close() };
}
