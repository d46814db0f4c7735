// The team in a real browser: run by the e2e test `team::the_team_in_a_browser`
// (tests/e2e/team.rs), which starts the service and passes BASE, EMAIL, PASSWORD (the owner),
// SCREENSHOTS and CHROMIUM. The owner invites a viewer and copies the link; the viewer opens it
// logged out, chooses a password and is in, without the audit trail or the key form; the owner
// finds the viewer's joining on the audit trail.
import { env, launch, step } from "./harness.mjs";

const base = env("BASE");
const shots = env("SCREENSHOTS");
const chromium = await launch();
try {
  const owner = await chromium.open({ viewport: { width: 1280, height: 900 } });

  step("the owner invites a viewer: the link is shown once, with a copy button");
  await owner.goto(base);
  await owner.getByLabel("Email").fill(env("EMAIL"));
  await owner.getByLabel("Password").fill(env("PASSWORD"));
  await owner.getByRole("button", { name: "Log in" }).click();
  await owner.getByRole("heading", { name: "Overview" }).waitFor();
  await owner.getByRole("link", { name: "Settings" }).click();
  await owner.getByRole("heading", { name: "Team" }).waitFor();
  await owner.getByRole("cell", { name: `${env("EMAIL")} (you)` }).waitFor();
  const invite = owner.getByRole("form", { name: "Invite a colleague" });
  await invite.getByLabel("Email").fill("vera@acme.example");
  await invite.getByLabel("Role").selectOption("viewer");
  await invite.getByRole("button", { name: "Invite" }).click();
  const link = (await owner.locator("[data-invitation]").textContent()).trim();
  if (!link.includes("/#/join/")) throw new Error(`no link shown: '${link}'`);
  await owner.getByText("Send this link to").waitFor();
  await owner.getByRole("button", { name: "Copy" }).first().waitFor();
  await owner.getByRole("cell", { name: "vera@acme.example" }).waitFor();
  // A key's scopes are chosen when it is made, and listed.
  const keys = owner.getByRole("form", { name: "Create an API key" });
  await keys.getByLabel("Name").fill("reader");
  await keys.getByLabel("write").uncheck();
  await keys.getByLabel("sdk").uncheck();
  await keys.getByRole("button", { name: "Create key" }).click();
  await owner.getByText("The key reader (read)").waitFor();
  await owner.getByRole("row").filter({ hasText: "reader" }).getByRole("cell", { name: "read", exact: true }).waitFor();
  await owner.screenshot({ path: `${shots}/team.png`, fullPage: true });

  step("the viewer opens the link logged out, chooses a password, and is in");
  const viewer = await chromium.open({ viewport: { width: 390, height: 844 } });
  await viewer.goto(link);
  await viewer.getByText("as viewer").waitFor();
  await viewer.getByLabel("Choose a password").fill("vera's long password");
  await viewer.getByLabel("The same password again").fill("not the same one");
  await viewer.getByRole("button", { name: "Join" }).click();
  await viewer.getByRole("alert").filter({ hasText: "The two passwords differ" }).waitFor();
  await viewer.getByLabel("The same password again").fill("vera's long password");
  await viewer.screenshot({ path: `${shots}/join.png`, fullPage: true });
  await viewer.getByRole("button", { name: "Join" }).click();
  await viewer.getByRole("heading", { name: "Overview" }).waitFor();
  if (new URL(viewer.url()).hash.includes("join")) throw new Error(`the link stays in the address: ${viewer.url()}`);

  step("a viewer reads: no audit trail, no key form, no team changes");
  await viewer.getByRole("link", { name: "Settings" }).click();
  await viewer.getByRole("heading", { name: "Team" }).waitFor();
  await viewer.getByRole("cell", { name: "vera@acme.example (you)" }).waitFor();
  if (await viewer.getByRole("link", { name: "Audit" }).count()) throw new Error("a viewer sees the audit trail");
  if (await viewer.getByRole("button", { name: "Create key" }).count()) throw new Error("a viewer can make keys");
  if (await viewer.getByRole("button", { name: "Remove" }).count()) throw new Error("a viewer can remove members");
  // Nothing else a viewer would be refused either: no saving, no adding, no creating (which
  // the owner, on the same page, is offered).
  await owner.getByRole("button", { name: "Move phonehealth down" }).waitFor();
  await viewer.getByRole("heading", { name: "Webhook endpoints" }).waitFor();
  for (const name of ["Save priorities", "Add endpoint", "Move phonehealth down"]) {
    if (await viewer.getByRole("button", { name }).count()) throw new Error(`a viewer is offered "${name}"`);
  }
  await viewer.getByRole("link", { name: "Users" }).click();
  await viewer.getByRole("heading", { name: "Users" }).waitFor();
  if (await viewer.getByRole("button", { name: "Create user" }).count()) throw new Error("a viewer can create users");
  await viewer.getByRole("link", { name: "Settings" }).click();
  await viewer.getByRole("heading", { name: "Team" }).waitFor();

  step("the link works once");
  const again = await chromium.open({ viewport: { width: 390, height: 844 } });
  await again.goto(link);
  await again.getByRole("alert").filter({ hasText: "not valid or has expired" }).waitFor();

  step("the owner finds the joining on the audit trail");
  await owner.getByRole("link", { name: "Audit" }).click();
  await owner.getByRole("heading", { name: "Audit trail" }).waitFor();
  await owner.getByLabel("Operation").fill("team_invitations_accept");
  await owner.getByRole("button", { name: "Filter" }).click();
  // The filtered page replaces the whole trail (which also lists the joining) once it loads.
  await owner.getByRole("cell", { name: "api_keys_create" }).waitFor({ state: "detached" });
  await owner.getByRole("row").filter({ hasText: "team_invitations_accept" }).getByRole("cell", { name: "201" }).waitFor();
  await owner.getByLabel("Operation").fill("");
  await owner.getByRole("button", { name: "Filter" }).click();
  await owner.getByRole("cell", { name: "api_keys_create" }).waitFor();
  await owner.screenshot({ path: `${shots}/audit.png`, fullPage: true });

  step("the owner makes the viewer an admin, then removes her: her session ends");
  await owner.getByRole("link", { name: "Settings" }).click();
  await owner.getByLabel("Role of vera@acme.example").selectOption("admin");
  await owner.getByRole("row").filter({ hasText: "vera@acme.example" }).getByRole("button", { name: "Remove" }).click();
  await owner.getByRole("button", { name: "Yes, remove" }).click();
  await owner.getByRole("cell", { name: "vera@acme.example" }).waitFor({ state: "detached" });
  await viewer.getByRole("link", { name: "Users" }).click();
  await viewer.getByRole("button", { name: "Log in" }).waitFor();
  console.log(`RESULT ${JSON.stringify({ joined: true })}`);
} catch (e) {
  await chromium.close();
  throw e;
}
await chromium.finish();
