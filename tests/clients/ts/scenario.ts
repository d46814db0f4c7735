// An integrator's first steps through the TypeScript client: types generated from the served
// document by openapi-typescript (generated/schema.d.ts) and openapi-fetch. Type-checked by tsc
// and run by tests/e2e/clients.rs. Environment: WEARHOUSE_URL, ADMIN_EMAIL, ADMIN_PASSWORD.
import createClient from "openapi-fetch";
import type { paths } from "./generated/schema";

const baseUrl = process.env.WEARHOUSE_URL ?? "";

function expect(cond: unknown, what: string): asserts cond {
  if (!cond) {
    console.error(`FAILED: ${what}`);
    process.exit(1);
  }
  console.log(`ok: ${what}`);
}

async function main() {
  const anonymous = createClient<paths>({ baseUrl });
  const login = await anonymous.POST("/api/v1/auth/login", {
    body: { username: process.env.ADMIN_EMAIL ?? "", password: process.env.ADMIN_PASSWORD ?? "" },
    bodySerializer: (body) => new URLSearchParams(body as Record<string, string>),
  });
  expect(login.data, "log in as the developer");
  const developer = createClient<paths>({
    baseUrl,
    headers: { Authorization: `Bearer ${login.data.access_token}` },
  });

  const created = await developer.POST("/api/v1/developer/api-keys", { body: { name: "ts client" } });
  expect(created.data?.key, "create an API key");
  const api = createClient<paths>({ baseUrl, headers: { "X-Service-API-Key": created.data.key } });

  const user = await api.POST("/api/v1/users", { body: { external_user_id: "ts-1" } });
  expect(user.data, "create a user");
  const user_id = String(user.data.id);

  const source = { name: "Apple Watch", bundleIdentifier: "com.apple.health", deviceModel: "Watch6,2" };
  const records = [
    ...Array.from({ length: 60 }, (_, m) => ({
      type: "HKQuantityTypeIdentifierHeartRate",
      startDate: `2026-03-14T10:${String(m).padStart(2, "0")}:00Z`,
      zoneOffset: "+01:00",
      value: 60 + (m % 20),
      unit: "count/min",
      source,
    })),
    ...[8, 9, 10, 11].map((h) => ({
      type: "HKQuantityTypeIdentifierStepCount",
      startDate: `2026-03-14T${String(h).padStart(2, "0")}:00:00Z`,
      zoneOffset: "+01:00",
      value: 500,
      unit: "count",
      source,
    })),
  ];
  const accepted = await api.POST("/api/v1/sdk/users/{user_id}/sync", {
    params: { path: { user_id } },
    body: {
      provider: "apple",
      sdkVersion: "0.13.0",
      syncTimestamp: "2026-03-14T12:00:00Z",
      data: { records, sleep: [], workouts: [] },
    },
  });
  expect(accepted.response.status === 202 && accepted.data, "post an SDK batch");
  const task = String(accepted.data.task_id);

  let status: string | undefined;
  for (let i = 0; i < 300 && !["success", "partial", "failed"].includes(status ?? ""); i++) {
    const runs = await api.GET("/api/v1/users/{user_id}/sync/runs", { params: { path: { user_id } } });
    status = runs.data?.find((r) => String(r.run_id) === task)?.status;
    if (!status || status === "queued" || status === "in_progress") await new Promise((r) => setTimeout(r, 100));
  }
  expect(status === "success", `its sync run succeeds (status ${status})`);

  let cursor: string | undefined;
  let samples = 0;
  let pages = 0;
  for (;;) {
    const page = await api.GET("/api/v1/users/{user_id}/timeseries", {
      params: {
        path: { user_id },
        query: {
          start_time: "2026-03-14T00:00:00Z",
          end_time: "2026-03-15T00:00:00Z",
          types: ["heart_rate"],
          limit: 25,
          cursor,
        },
      },
    });
    expect(page.data, `timeseries page ${pages + 1}`);
    samples += page.data.data.length;
    pages += 1;
    if (!page.data.pagination.has_more) break;
    cursor = page.data.pagination.next_cursor ?? undefined;
  }
  expect(samples === 60 && pages === 3, `60 heart-rate samples over 3 pages (${samples}, ${pages})`);

  const days = await api.GET("/api/v1/users/{user_id}/summaries/activity", {
    params: { path: { user_id }, query: { start_date: "2026-03-14", end_date: "2026-03-14" } },
  });
  expect(days.data?.data.length === 1, "an activity summary day");
  expect(days.data.data[0].steps === 2000, `its steps are the day's total (${days.data.data[0].steps})`);

  // A portability request answered with one call: the user's whole record, then its download.
  const asked = await api.POST("/api/v1/users/{user_id}/exports", { params: { path: { user_id } } });
  expect(asked.response.status === 202 && asked.data, "ask for an export");
  let exported = asked.data;
  for (let i = 0; i < 300 && exported.status !== "done" && exported.status !== "failed"; i++) {
    await new Promise((r) => setTimeout(r, 100));
    const got = await api.GET("/api/v1/users/{user_id}/exports/{export_id}", {
      params: { path: { user_id, export_id: asked.data.id } },
    });
    expect(got.data, "read the export");
    exported = got.data;
  }
  expect(exported.status === "done" && exported.download_url, `the export is done (${exported.status})`);
  const zip = await fetch(exported.download_url);
  expect(zip.ok && (await zip.arrayBuffer()).byteLength > 0, "download it");

  // Webhook endpoints are the developer's to manage (an API key is not enough).
  const endpoint = await developer.POST("/api/v1/webhooks/endpoints", {
    body: { url: "https://example.com/hooks/wearhouse", filter_types: ["workout.created"] },
  });
  expect(endpoint.data?.id, "register a webhook endpoint");
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
