// A user's data over a chosen range: heart rate (downsampled through `resolution` for long
// ranges), daily steps and energy, the latest night's stages, workouts, and scores.
import { html } from "htm/preact";
import { useState } from "preact/hooks";

import { api } from "../api.js";
import { Chart, Hypnogram, Timeline } from "../charts.js";
import { Failure, useLoad } from "../ui.js";
import { Series } from "./series.js";

const RANGES = [
  { key: "1d", days: 1, resolution: "5min", per: "5 min" },
  { key: "7d", days: 7, resolution: "1hour", per: "hour" },
  { key: "30d", days: 30, resolution: "1hour", per: "hour" },
  { key: "1y", days: 365, resolution: "1day", per: "day" },
];
const DAY = 86_400_000;
/** Pages of a cursor walk, at most (a chart of thousands of points is enough). */
const MAX_PAGES = 40;

async function walk(path, params) {
  const out = [];
  let cursor = null;
  for (let i = 0; i < MAX_PAGES; i++) {
    const q = new URLSearchParams(params);
    q.set("limit", "100");
    if (cursor) q.set("cursor", cursor);
    const page = await api(`${path}?${q}`);
    out.push(...page.data);
    cursor = page.pagination.next_cursor;
    if (!page.pagination.has_more || !cursor) break;
  }
  return out;
}

const day = (t) => new Date(t).toISOString().slice(0, 10);

/** The end of the UTC day `date` (YYYY-MM-DD) as a Date. */
const endOf = (date) => new Date(Date.parse(`${date}T00:00:00Z`) + DAY);

/** Where the charts open: on the user's latest data when it is older than today. */
function ending(coverage) {
  const now = new Date(Math.ceil(Date.now() / 3_600_000) * 3_600_000);
  if (!coverage || !coverage.last_day) return now;
  const last = endOf(coverage.last_day);
  return last < now ? last : now;
}

export function Data({ userId, version }) {
  const [range, setRange] = useState(RANGES[2]);
  const [coverage, coverageError] = useLoad(() => api(`/users/${userId}/data-coverage`), [userId, version]);
  // The end chosen in the date box, else where the data ends.
  const [chosen, setChosen] = useState(null);
  const end = chosen ? endOf(chosen) : ending(coverage);
  const start = new Date(end.getTime() - range.days * DAY);
  // The window's last day: its end is the midnight after it.
  const lastDay = day(new Date(end.getTime() - 1));
  const iso = (t) => t.toISOString();
  // Charts load once where the data lies is known (or could not be: then up to now).
  const ready = Boolean(coverage || coverageError);
  const [data, error] = useLoad(async () => {
    if (!ready) return null;
    const base = `/users/${userId}`;
    const [hr, activity, sleep, workouts, scores, recovery] = await Promise.all([
      walk(`${base}/timeseries`, { start_time: iso(start), end_time: iso(end), types: "heart_rate", resolution: range.resolution }),
      walk(`${base}/summaries/activity`, { start_date: day(start), end_date: lastDay }),
      api(`${base}/events/sleep?${new URLSearchParams({ start_date: iso(start), end_date: iso(end), limit: "1" })}`),
      walk(`${base}/events/workouts`, { start_date: iso(start), end_date: iso(end) }),
      api(`${base}/health-scores?${new URLSearchParams({ start_date: day(start), end_date: lastDay, limit: "200" })}`),
      // The vendor's score, else one computed from the stored data (phone data too).
      walk(`${base}/summaries/recovery`, { start_date: day(start), end_date: lastDay }),
    ]);
    return { hr, activity, night: sleep.data[0] || null, workouts, scores: scores.data, recovery };
  }, [userId, range.key, ready, coverage, end.getTime()]);
  const span = [start.getTime() / 1000, end.getTime() / 1000];
  const at = (t) => Date.parse(t) / 1000;
  const hr = data && [data.hr.map((p) => at(p.timestamp)), data.hr.map((p) => p.value)];
  // A summary's date is the user's local day: its bar stands at that date's noon on the
  // browser's clock, which is how the chart's axis reads dates.
  const noon = (date) => new Date(`${date}T12:00:00`).getTime() / 1000;
  const days = data && data.activity.map((d) => noon(d.date));
  const steps = data && [days, data.activity.map((d) => d.steps ?? null)];
  const energy = data && [days, data.activity.map((d) => d.total_calories_kcal ?? d.active_calories_kcal ?? null)];
  const scored = data && data.recovery.filter((d) => d.recovery_score != null);
  const recovery = data && [scored.map((d) => noon(d.date)), scored.map((d) => d.recovery_score)];
  const score = (category) =>
    data && data.scores.filter((s) => s.category === category).sort((a, b) => at(a.recorded_at) - at(b.recorded_at));
  const scoreData = (category) => {
    const s = score(category);
    return [s.map((x) => at(x.recorded_at)), s.map((x) => x.value)];
  };
  return html`<section aria-labelledby="data">
    <h2 id="data">Data</h2>
    ${coverage && html`<p class="muted" data-coverage>${coverage.first_day
      ? `Data from ${coverage.first_day} to ${coverage.last_day} (UTC days).`
      : "No samples stored yet."}</p>`}
    <div class="ranges">
      <div role="group" aria-label="Range" class="ranges">
        ${RANGES.map((r) => html`<button type="button" class=${r.key === range.key ? "" : "secondary"}
          aria-pressed=${r.key === range.key} onClick=${() => setRange(r)}>${r.key}</button>`)}
      </div>
      <label class="progress">Ending on <input type="date" value=${lastDay}
        min=${coverage && coverage.first_day} onChange=${(e) => setChosen(e.target.value || null)} /></label>
    </div>
    <${Failure} error=${error || coverageError} />
    ${!data && !error && html`<p role="status">Loading…</p>`}
    ${data && html`<div class="charts">
      <${Chart} title=${`Heart rate (bpm, mean per ${range.per})`} span=${span}
        data=${hr} series=${[{ label: "heart rate", stroke: "#dc2626" }]} label="Heart rate" />
      <${Chart} title="Steps per day" data=${steps} bars=${true} span=${span} series=${[{ label: "steps", stroke: "#2563eb", fill: "#93c5fd" }]} />
      <${Chart} title="Energy per day (kcal)" data=${energy} bars=${true} span=${span} series=${[{ label: "kcal", stroke: "#ea580c", fill: "#fdba74" }]} />
      <${Hypnogram} night=${data.night} />
      <${Timeline} workouts=${data.workouts} from=${start.getTime()} to=${end.getTime()} />
      <${Chart} title="Recovery score (the vendor's, else computed)" data=${recovery} span=${span}
        series=${[{ label: "recovery", stroke: "#059669" }]} label="Recovery score" />
      <${Chart} title="Sleep score" data=${scoreData("sleep")} span=${span} series=${[{ label: "sleep", stroke: "#7c3aed" }]} />
    </div>`}
    <${Series} userId=${userId} coverage=${coverage} from=${start} to=${end} />
  </section>`;
}
