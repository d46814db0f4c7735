// The connect page in a real browser (Debian's Chromium, driven by playwright-core) at phone
// width, against the real service and two vendors' local servers with consent pages: run by
// the e2e test `connect_page::the_connect_page_in_a_browser`, which makes the links and checks
// the rows and webhooks afterwards. Environment: BASE, LINK, EXPIRED_LINK, DELETED_LINK,
// SCREENSHOTS, CHROMIUM, ALSO_ALLOWED (the vendors' origins).
// Prints each step; exits non-zero at the first that fails.
import { env, launch, step } from "./harness.mjs";

const shots = env("SCREENSHOTS");
const phone = { viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, deviceScaleFactor: 2 };
const chromium = await launch();
const open = () => chromium.open(phone);
const shot = (page, name) => page.screenshot({ path: `${shots}/${name}.png`, fullPage: true });
const row = (page, name) => page.locator(".vendor").filter({ hasText: name });

try {
  const page = await open();
  step("open the link: the deployment, two vendors, neither connected");
  await page.goto(env("LINK"));
  await page.getByRole("heading", { name: "Connect your devices" }).waitFor();
  await page.getByText("Acme Health").first().waitFor();
  for (const name of ["Oura", "Strava"]) {
    await row(page, name).getByText("Not connected").waitFor();
  }
  if ((await page.title()) !== "Connect your devices · Acme Health") throw new Error(`title: ${await page.title()}`);
  const wide = await page.evaluate(() => document.documentElement.scrollWidth);
  if (wide > 390) throw new Error(`the page is ${wide} px wide on a 390 px phone`);
  await shot(page, "connect");

  step("connect Oura with the keyboard; allow at Oura; back, connected");
  let reached = false;
  for (let i = 0; i < 12 && !reached; i++) {
    await page.keyboard.press("Tab");
    reached = await page.evaluate(() => document.activeElement && document.activeElement.getAttribute("aria-label") === "Connect Oura");
  }
  if (!reached) throw new Error("Tab never reached 'Connect Oura'");
  await page.keyboard.press("Enter");
  await page.getByRole("link", { name: "Allow" }).click();
  await page.getByRole("status").filter({ hasText: "Oura is connected" }).waitFor();
  await row(page, "Oura").getByText("Connected").waitFor();
  if (page.url().includes("outcome=")) throw new Error(`the outcome stays in the URL: ${page.url()}`);
  await shot(page, "connect-connected");

  step("Strava refused at the vendor: the page says so; then connected");
  await page.getByRole("button", { name: "Connect Strava" }).click();
  await page.getByRole("link", { name: "Deny" }).click();
  await page.getByRole("alert").filter({ hasText: "Strava was not connected: access_denied" }).waitFor();
  await row(page, "Strava").getByText("Not connected").waitFor();
  await shot(page, "connect-refused");
  await page.getByRole("button", { name: "Connect Strava" }).click();
  await page.getByRole("link", { name: "Allow" }).click();
  await page.getByRole("status").filter({ hasText: "Strava is connected" }).waitFor();

  step("disconnect Oura: asked first (Cancel focused), then done");
  await page.getByRole("button", { name: "Disconnect Oura" }).click();
  await page.waitForFunction(() => document.activeElement && document.activeElement.textContent === "Cancel", null, { timeout: 5_000 });
  await page.keyboard.press("Escape");
  await page.waitForFunction(() => document.activeElement && document.activeElement.getAttribute("aria-label") === "Disconnect Oura", null, { timeout: 5_000 });
  await page.getByRole("button", { name: "Disconnect Oura" }).click();
  await page.getByRole("group", { name: "Disconnect Oura?" }).getByRole("button", { name: "Disconnect Oura" }).click();
  await page.getByRole("status").filter({ hasText: "Oura is disconnected" }).waitFor();
  await row(page, "Oura").getByText("Disconnected").waitFor();
  await row(page, "Strava").getByText("Connected").waitFor();
  const done = await page.getByRole("link", { name: "Done" }).getAttribute("href");
  if (done !== "https://app.example.com/connected") throw new Error(`Done goes to ${done}`);

  step("the same link in another browser: used");
  const other = await open();
  await other.goto(env("LINK"));
  await other.getByRole("heading", { name: "This link does not work" }).waitFor();
  await other.getByRole("alert").filter({ hasText: "opened in another browser" }).waitFor();
  await shot(other, "connect-used");

  step("an expired link, and a deleted user's link");
  await other.goto(env("EXPIRED_LINK"));
  await other.getByRole("alert").filter({ hasText: "This link has expired" }).waitFor();
  await shot(other, "connect-expired");
  await other.goto(env("DELETED_LINK"));
  await other.getByRole("alert").filter({ hasText: "This link is not valid" }).waitFor();
  console.log("RESULT {}");
} catch (e) {
  await chromium.close();
  throw e;
}
await chromium.finish();
