// Verifies a wearhouse webhook with the official Standard Webhooks library
// (`npm install standardwebhooks`). In your receiver, pass the raw body and the request headers.
//
//   node verify.mjs headers.json body.json     # WEBHOOK_SECRET=whsec_... ; prints the event type
import { readFileSync } from "node:fs";
import { Webhook } from "standardwebhooks";

export function verify(secret, headers, body) {
  // Throws when the signature or the timestamp (5 minutes of tolerance) does not hold: answer 400
  // then, and do not process it. The library wants the secret without its `whsec_` prefix.
  return new Webhook(secret.replace(/^whsec_/, "")).verify(body, headers);
}

const [headersFile, bodyFile] = process.argv.slice(2);
if (headersFile && bodyFile) {
  const headers = JSON.parse(readFileSync(headersFile, "utf8"));
  const event = verify(process.env.WEBHOOK_SECRET ?? "", headers, readFileSync(bodyFile, "utf8"));
  console.log(event.type);
}
