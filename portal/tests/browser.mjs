// The portal in a real browser (Debian's Chromium, driven by playwright-core) against the real
// service: run by the e2e test `portal::the_portal_in_a_browser` (tests/e2e/portal.rs), which
// starts the service and a webhook receiver and makes an export, and passes them here:
//   BASE, EMAIL, PASSWORD, EXPORT (a file of 5 MiB or more), RECEIVER (a webhook URL),
//   SCREENSHOTS (a folder), CHROMIUM (the browser).
// Prints each step; exits non-zero at the first that fails.
import { env, launch, step } from "./harness.mjs";

const base = env("BASE");
const shots = env("SCREENSHOTS");
const chromium = await launch();
try {
  const page = await chromium.open({ viewport: { width: 1280, height: 900 } });
  const shot = async (name) => {
    await page.screenshot({ path: `${shots}/${name}.png`, fullPage: true });
  };

  step("the login page; a wrong password says so");
  await page.goto(base);
  await page.getByLabel("Email").fill(env("EMAIL"));
  await page.getByLabel("Password").fill("not-the-password");
  await page.getByRole("button", { name: "Log in" }).click();
  await page.getByRole("alert").filter({ hasText: "Incorrect email or password" }).waitFor();
  await shot("login");

  step("log in");
  await page.getByLabel("Password").fill(env("PASSWORD"));
  await page.getByRole("button", { name: "Log in" }).click();
  await page.getByRole("heading", { name: "Overview" }).waitFor();
  await page.getByText("samples stored in the last hour").waitFor();
  // What the stored data costs, per table and for the largest users.
  await page.getByRole("heading", { name: "Storage" }).waitFor();
  await page.getByText("bytes a sample (durable data)").waitFor();
  await page.getByRole("columnheader", { name: "Bytes a sample" }).first().waitFor();
  await shot("overview");

  step("create an API key: shown once");
  await page.getByRole("link", { name: "Settings" }).click();
  await page.getByLabel("Name").first().fill("portal-test");
  await page.getByRole("button", { name: "Create key" }).click();
  const key = (await page.locator("[data-key]").textContent()).trim();
  if (!key || key.length < 20) throw new Error(`no key shown: '${key}'`);
  await page.getByText("It is shown this once").waitFor();
  // How to use it: the header, a curl line, the reference.
  await page.locator("[data-curl]").filter({ hasText: `X-Service-API-Key: ${key}` }).waitFor();
  await page.getByRole("link", { name: "API reference" }).first().waitFor();
  // The deployment's priorities show the order in effect.
  await page.getByRole("button", { name: "Move phonehealth down" }).waitFor();
  await shot("settings");
  await page.reload();
  await page.getByRole("cell", { name: "portal-test" }).waitFor();
  if ((await page.content()).includes(key)) throw new Error("the key is shown again after a reload");
  // Renamed in place (no prompt), then back.
  for (const [from, to] of [["portal-test", "portal-renamed"], ["portal-renamed", "portal-test"]]) {
    await page.getByRole("row").filter({ hasText: from }).getByRole("button", { name: "Rename" }).click();
    await page.getByLabel("New name").fill(to);
    await page.getByRole("button", { name: "Save", exact: true }).click();
    await page.getByRole("cell", { name: to, exact: true }).waitFor();
  }

  step("a failing call shows the API's message");
  await page.getByRole("link", { name: "Account" }).click();
  await page.getByLabel("Current password").fill("wrong-password");
  await page.getByLabel("New password").fill("a-new-password-123");
  await page.getByRole("button", { name: "Change password" }).click();
  await page.getByRole("alert").filter({ hasText: "Incorrect password" }).waitFor();

  step("a password change keeps this session going (every other session ends)");
  await page.getByLabel("Current password").fill(env("PASSWORD"));
  await page.getByLabel("New password").fill("a-new-password-123");
  await page.getByRole("button", { name: "Change password" }).click();
  await page.getByRole("status").filter({ hasText: "The password was changed." }).waitFor();
  await page.getByText(`Logged in as`).waitFor();

  step("create a user");
  await page.getByRole("link", { name: "Users" }).click();
  await page.getByLabel("New user's email").fill("ada@example.com");
  await page.getByLabel("Your id for them").fill("ada-42");
  await page.getByLabel("Last name").fill("Lovelace");
  await page.getByRole("button", { name: "Create user" }).click();
  await page.getByRole("heading", { name: "ada@example.com" }).waitFor();
  const userId = page.url().split("/").pop();
  console.log(`  user ${userId}`);

  step("find the user by their full id; a search that finds no one says so; a bad id says so");
  await page.getByRole("link", { name: "Users", exact: true }).click();
  await page.getByRole("searchbox").fill(userId);
  await page.getByRole("button", { name: "Search" }).click();
  await page.getByText("1 user", { exact: true }).waitFor();
  await page.getByRole("searchbox").fill("nobody-at-all");
  await page.getByRole("button", { name: "Search" }).click();
  await page.getByText("No user matches “nobody-at-all”.").waitFor();
  await page.goto(`${base}/#/users/not-an-id`);
  await page.getByRole("alert").filter({ hasText: "is not a user id" }).waitFor();
  await page.goto(`${base}/#/users/${userId}`);
  await page.getByRole("heading", { name: "ada@example.com" }).waitFor();

  step("make a connect link for the user: shown with a copy button, listed, revoked");
  await page.getByRole("button", { name: "Make a connect link" }).click();
  const link = (await page.locator("[data-connect-link]").textContent()).trim();
  if (!/\/connect\/[0-9a-f]{48}$/.test(link)) throw new Error(`no connect link shown: '${link}'`);
  await page.getByRole("button", { name: "Copy link" }).waitFor();
  await page.getByRole("cell", { name: "not yet" }).waitFor();
  await page.getByRole("button", { name: "Revoke" }).click();
  await page.getByRole("button", { name: "Yes, revoke" }).click();
  await page.locator("[data-connect-link]").waitFor({ state: "detached" });
  await page.getByRole("cell", { name: "not yet" }).waitFor({ state: "detached" });

  step("upload an export and see the import finish");
  await page.getByLabel("export.zip or export.xml").setInputFiles(env("EXPORT"));
  await page.getByRole("button", { name: "Upload and import" }).click();
  await page.locator(".notice[data-run]").filter({ hasText: /success|partial/ }).waitFor({ timeout: 180_000 });
  await page.locator("progress").waitFor();

  step("what the import did not store is listed by reason; types not kept do not make it partial");
  const imported = page.locator("tr[data-run]").filter({ hasText: "xml_import" }).first();
  await imported.getByText(/items? not stored/).click();
  await imported.getByText("types not kept here (skipped)").waitFor();
  const status = (await imported.locator(".status").textContent()).trim();
  console.log(`  import ${status}: ${(await imported.locator("details").textContent()).replace(/\s+/g, " ").slice(0, 200)}`);

  step("without a reload: the sources, the heart-rate chart's points and the night's hypnogram");
  await page.locator(".sources li").first().waitFor();
  // The phone's connection, by its name, with when it last synced (as the users' list has it).
  const phoneRow = page.getByRole("row").filter({ has: page.getByRole("cell", { name: "Apple Health", exact: true }) });
  await phoneRow.waitFor();
  if ((await phoneRow.locator("td").nth(2).textContent()).trim() === "—") throw new Error("the connection has no last sync");
  const emptied = await page.getByLabel("export.zip or export.xml").inputValue();
  if (emptied) throw new Error(`the file box still holds ${emptied}`);
  const points = async (label) => {
    const el = page.locator(`[role=img][aria-label="${label}"]`).first();
    await el.waitFor();
    return Number(await el.getAttribute("data-points"));
  };
  await page.getByText("Heart rate (bpm").waitFor({ timeout: 60_000 });
  const hr = await points("Heart rate");
  const stages = await points("Hypnogram");
  console.log(`  heart rate ${hr} points, hypnogram ${stages} points`);
  if (!(hr > 0)) throw new Error("the heart-rate chart has no points");
  if (!(stages > 0)) throw new Error("the hypnogram has no points");
  await shot("user");

  step("a small export (under the multipart minimum) goes through the direct upload");
  const firstRun = await page.locator(".notice[data-run]").getAttribute("data-run");
  await page.getByLabel("export.zip or export.xml").setInputFiles(env("SMALL_EXPORT"));
  await page.getByRole("button", { name: "Upload and import" }).click();
  await page.locator(`.notice[data-run]:not([data-run="${firstRun}"])`).filter({ hasText: /success|partial/ }).waitFor({ timeout: 60_000 });
  const runs = await page.locator("tr[data-run]").filter({ hasText: "xml_import" }).count();
  if (runs < 2) throw new Error(`${runs} import runs listed, not 2`);

  step("the charts say where the data lies, and go back to a chosen day");
  const covered = await page.locator("[data-coverage]").textContent();
  if (!/Data from \d{4}-\d{2}-\d{2} to \d{4}-\d{2}-\d{2}/.test(covered)) throw new Error(`coverage: '${covered}'`);
  // A week ending the day after the first: the small export's day, over a year before the big
  // one's.
  const firstDay = covered.match(/from (\d{4}-\d{2}-\d{2})/)[1];
  const dayAfter = new Date(Date.parse(`${firstDay}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
  await page.getByRole("button", { name: "7d" }).click();
  await page.getByLabel("Ending on").fill(dayAfter);
  await page.locator('[role=img][aria-label="Heart rate"]').first().waitFor();
  await page.waitForFunction(() => Number(document.querySelector('[role=img][aria-label="Heart rate"]')?.getAttribute("data-points")) > 0);
  await page.getByRole("button", { name: "30d" }).click();

  step("the series: where each lies, its samples in the window, and a CSV of them");
  const hrRow = page.locator('tr[data-series="heart_rate"]');
  await hrRow.waitFor();
  await page.getByRole("button", { name: "Samples of heart_rate", exact: true }).click();
  await page.locator('[data-samples="heart_rate"] tbody tr').first().waitFor();
  const [csvFile] = await Promise.all([
    page.waitForEvent("download"),
    page.getByRole("button", { name: "Download heart_rate as CSV", exact: true }).click(),
  ]);
  const text = await new Promise((resolve, reject) => {
    csvFile.createReadStream().then((s) => {
      let out = "";
      s.on("data", (c) => (out += c));
      s.on("end", () => resolve(out));
      s.on("error", reject);
    }, reject);
  });
  const rows = text.trim().split("\n");
  if (rows[0] !== "timestamp,type,value,unit,provider,device,is_daily_total" || rows.length < 2) throw new Error(`the CSV: ${rows.slice(0, 2)}`);
  console.log(`  heart_rate CSV: ${rows.length - 1} samples`);

  step("reorder the user's sources");
  const first = (await page.locator(".sources li .name").first().textContent()).trim();
  await page.getByRole("button", { name: `Move ${first} down` }).click();
  await page.getByRole("button", { name: "Save order" }).click();
  await page.getByRole("status").filter({ hasText: "Saved." }).waitFor();
  const after = (await page.locator(".sources li .name").nth(1).textContent()).trim();
  if (after !== first) throw new Error(`the order did not stay: second is ${after}`);
  console.log(`  moved ${first} down`);

  step("register a webhook endpoint, send a test event, see its attempt");
  await page.getByRole("link", { name: "Settings" }).click();
  await page.getByLabel("URL").fill(env("RECEIVER"));
  await page.getByLabel("Description").fill("portal test receiver");
  await page.getByRole("button", { name: "Add endpoint" }).click();
  await page.getByRole("button", { name: "Send a test event" }).click();
  await page.getByText("Test event sent").waitFor();
  const attempt = page.locator("tr[data-attempt]").filter({ hasText: "success" }).first();
  for (let i = 0; i < 30 && !(await attempt.count()); i++) {
    await page.waitForTimeout(500);
    await page.getByRole("button", { name: "Refresh" }).first().click();
  }
  await attempt.waitFor();
  // The endpoint's own messages, with their payloads: the test event only (the imports' events
  // came before the endpoint).
  await page.getByRole("button", { name: "Refresh" }).nth(1).click();
  const messages = page.locator("tr[data-message]");
  await messages.first().waitFor();
  if ((await messages.count()) !== 1) throw new Error(`${await messages.count()} messages listed, not the one test event`);
  await messages.first().getByRole("cell", { name: "workout.created", exact: true }).waitFor();
  const payload = messages.first().locator("pre.payload");
  if (await payload.isVisible()) throw new Error("the payload is open before it is asked for");
  await messages.first().getByText("Payload").click();
  await payload.waitFor({ state: "visible" });
  if (!(await payload.textContent()).includes('"data"')) throw new Error("the payload shows no data");
  await shot("webhook");

  step("the overview charts what was stored per hour");
  await page.getByRole("link", { name: "Overview" }).click();
  await page.waitForFunction(() => Number(document.querySelector('[role=img][aria-label="Samples stored per hour"]')?.getAttribute("data-points")) > 0);

  step("phone width");
  await page.setViewportSize({ width: 390, height: 844 });
  for (const [name, hash] of [["phone-overview", "#/"], ["phone-user", `#/users/${userId}`], ["phone-settings", "#/settings"]]) {
    await page.goto(`${base}/${hash}`);
    await page.locator("main h1").first().waitFor();
    await page.waitForTimeout(300);
    const wide = await page.evaluate(() => document.documentElement.scrollWidth);
    if (wide > 390) {
      // Name the widest elements, to say what to mend.
      const culprits = await page.evaluate(() =>
        [...document.querySelectorAll("main *")]
          .filter((e) => e.getBoundingClientRect().right > 391 && e.children.length === 0)
          .slice(0, 5)
          .map((e) => `${e.tagName.toLowerCase()}.${e.className} '${(e.textContent || "").trim().slice(0, 40)}' ${Math.round(e.getBoundingClientRect().right)}`),
      );
      throw new Error(`${name} is ${wide} px wide on a 390 px phone: ${culprits.join("; ")}`);
    }
    await shot(name);
  }

  step("a user whose data ended over a year ago: the charts open on it");
  await page.getByRole("link", { name: "Users", exact: true }).click();
  await page.getByLabel("New user's email").fill("old@example.com");
  await page.getByRole("button", { name: "Create user" }).click();
  await page.getByRole("heading", { name: "old@example.com" }).waitFor();
  await page.getByLabel("export.zip or export.xml").setInputFiles(env("SMALL_EXPORT"));
  await page.getByRole("button", { name: "Upload and import" }).click();
  await page.locator(".notice[data-run]").filter({ hasText: /success|partial/ }).waitFor({ timeout: 60_000 });
  await page.waitForFunction(() => Number(document.querySelector('[role=img][aria-label="Heart rate"]')?.getAttribute("data-points")) > 0);
  const oldDays = await page.locator("[data-coverage]").textContent();
  const lastDay = oldDays.match(/to (\d{4}-\d{2}-\d{2})/)[1];
  if (Date.now() - Date.parse(lastDay) < 365 * 86_400_000) throw new Error(`the old export ends ${lastDay}`);

  step("a user opened in a new tab needs no second login");
  await page.setViewportSize({ width: 1280, height: 900 });
  const tab = await page.context().newPage();
  await tab.goto(`${base}/#/users/${userId}`);
  await tab.getByRole("heading", { name: "ada@example.com" }).waitFor();

  step("log out: every tab is, and a new tab finds no session to take");
  await page.getByRole("button", { name: "Log out" }).click();
  await page.getByRole("button", { name: "Log in" }).waitFor();
  await tab.getByRole("button", { name: "Log in" }).waitFor();
  await tab.close();
  const late = await page.context().newPage();
  await late.goto(`${base}/#/users/${userId}`);
  await late.waitForTimeout(2500);
  await late.getByRole("button", { name: "Log in" }).waitFor();
  await late.close();
  if (new URL(page.url()).hash) throw new Error(`the address keeps ${new URL(page.url()).hash} after logging out`);
  console.log(`RESULT ${JSON.stringify({ key_prefix: key.slice(0, 12), user: userId, moved: first })}`);
} catch (e) {
  await chromium.close();
  throw e;
}
await chromium.finish();
