// Charts on uPlot (built for time series; drawn on a canvas, fast with a year of points).
import { html } from "htm/preact";
import { useEffect, useRef } from "preact/hooks";
import uPlot from "uplot";

/** A uPlot chart of `data` ([xs, ...ys], xs in Unix seconds) with `series` options, over
 * `span` ([from, to], Unix seconds: the chosen range, not just the data's). Bars stand for
 * `step` seconds each (a day by default) and their axis counts in whole steps. */
export function Chart({ title, data, series, height = 220, bars = false, label, span, step = 86_400 }) {
  const box = useRef(null);
  useEffect(() => {
    const el = box.current;
    if (!el || !data || data[0].length === 0) return undefined;
    const width = Math.max(280, el.clientWidth || 600);
    const paths = bars ? uPlot.paths.bars({ size: [0.6, 40] }) : undefined;
    const plot = new uPlot(
      {
        width,
        height,
        series: [{}, ...series.map((s) => ({ width: 1.5, points: { show: data[0].length < 60 }, paths, ...s }))],
        // Bars (one per `step` seconds) get half a step either side, and ticks in whole steps.
        scales: span ? { x: { time: true, range: () => (bars ? [span[0] - step / 2, span[1] + step / 2] : span) } } : {},
        axes: [bars ? { space: 60, incrs: [1, 3, 6, 12, 24, 7 * 24, 30 * 24].map((n) => n * 3600).filter((n) => n >= step) } : {}, { size: 64 }],
        // The legend names the series; values show while hovering, not "--" before.
        legend: { show: true, live: false },
      },
      data,
      el,
    );
    const resize = () => plot.setSize({ width: Math.max(280, el.clientWidth), height });
    addEventListener("resize", resize);
    return () => {
      removeEventListener("resize", resize);
      plot.destroy();
    };
  }, [data, height, bars, step, span && span[0], span && span[1]]);
  const empty = !data || data[0].length === 0;
  return html`<figure class="chart">
    <figcaption>${title}</figcaption>
    ${empty ? html`<p class="empty">No data in this range.</p>` : null}
    <div ref=${box} role="img" aria-label=${label || title} data-points=${empty ? 0 : data[0].length}></div>
  </figure>`;
}

const STAGES = ["awake", "rem", "light", "deep"];
const STAGE_LEVEL = { awake: 4, in_bed: 4, rem: 3, light: 2, sleeping: 2, unknown: 2, deep: 1 };

/** A night's stages as a hypnogram: a stepped line from awake (top) to deep (bottom). */
export function Hypnogram({ night }) {
  const intervals = (night && night.sleep_stage_intervals) || [];
  const xs = [];
  const ys = [];
  for (const i of intervals) {
    const level = STAGE_LEVEL[i.stage];
    if (!level) continue;
    xs.push(Date.parse(i.start_time) / 1000, Date.parse(i.end_time) / 1000);
    ys.push(level, level);
  }
  const data = xs.length ? [xs, ys] : [[], []];
  const series = [{ label: "stage", stroke: "#6d28d9", paths: uPlot.paths.stepped({ align: 1 }), points: { show: false } }];
  return html`<${Stages} data=${data} series=${series}
    title=${night ? `Sleep stages, night ending ${new Date(night.end_time).toLocaleDateString()}` : "Sleep stages"} />`;
}

function Stages({ data, series, title }) {
  const box = useRef(null);
  useEffect(() => {
    const el = box.current;
    if (!el || data[0].length === 0) return undefined;
    const plot = new uPlot(
      {
        width: Math.max(280, el.clientWidth || 600),
        height: 180,
        series: [{}, ...series],
        scales: { y: { range: [0.5, 4.5] } },
        axes: [{}, { size: 60, values: (u, ticks) => ticks.map((t) => STAGES[4 - t] || "") , splits: () => [1, 2, 3, 4] }],
        legend: { show: false },
      },
      data,
      el,
    );
    return () => plot.destroy();
  }, [data]);
  return html`<figure class="chart">
    <figcaption>${title}</figcaption>
    ${data[0].length === 0 ? html`<p class="empty">No stages for this night.</p>` : null}
    <div ref=${box} role="img" aria-label="Hypnogram" data-points=${data[0].length}></div>
  </figure>`;
}

/** A type as people write it: `strength_training` → "Strength training". */
const named = (t) => (t ? t.charAt(0).toUpperCase() + t.slice(1).replace(/_/g, " ") : "Workout");

/** Workouts along the range, each a bar from its start to its end. */
export function Timeline({ workouts, from, to }) {
  const span = Math.max(1, to - from);
  return html`<figure class="chart">
    <figcaption>Workouts</figcaption>
    ${workouts.length === 0 ? html`<p class="empty">No workouts in this range.</p>` : null}
    <ol class="timeline" aria-label="Workouts">
      ${workouts.map((w) => {
        const s = Date.parse(w.start_time);
        const e = Date.parse(w.end_time);
        // Inside the figure, whatever sticks out of the range.
        const left = Math.min(99.4, Math.max(0, ((s - from) / span) * 100));
        const width = Math.min(100 - left, Math.max(0.6, ((Math.min(e, to) - Math.max(s, from)) / span) * 100));
        return html`<li>
          <span class="bar" style=${`margin-left:${left}%;width:${width}%`}></span>
          <span>${named(w.type)} · ${new Date(s).toLocaleString()} · ${Math.round(w.duration_seconds / 60)} min
            ${w.calories_kcal ? ` · ${Math.round(w.calories_kcal)} kcal` : ""}
            ${w.distance_meters ? ` · ${(w.distance_meters / 1000).toFixed(2)} km` : ""}</span>
        </li>`;
      })}
    </ol>
  </figure>`;
}
