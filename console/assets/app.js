// timetable's web console: see package console's documentation.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { key: "", table: "", series: null, seriesCursor: "", eventsCursor: "", eventsQuery: null };

// api calls the server with the signed-in key and returns the decoded
// JSON body, or throws an Error with the server's reason.
async function api(path, params, method, body) {
  const url = new URL(path, location.origin);
  for (const [k, v] of Object.entries(params || {})) {
    if (v !== undefined && v !== null && v !== "") url.searchParams.set(k, v);
  }
  const init = { method: method || "GET", headers: { Authorization: "Bearer " + state.key } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(url, init);
  const answer = await res.json().catch(() => ({}));
  if (!res.ok) {
    const err = new Error(answer.error || res.status + " " + res.statusText);
    err.status = res.status;
    throw err;
  }
  return answer;
}

function clear(el) { while (el.firstChild) el.removeChild(el.firstChild); }

function li(text, data) {
  const el = document.createElement("li");
  el.textContent = text === "" ? "(no series)" : text;
  for (const [k, v] of Object.entries(data)) el.dataset[k] = v;
  return el;
}

// Signing in: the key is tried as a tenant's key, then as the admin
// token.
$("signin").addEventListener("submit", async (e) => {
  e.preventDefault();
  state.key = $("key").value.trim();
  $("signin-error").textContent = "";
  try {
    const body = await api("/v1/tables");
    showTenant(body.tables);
    return;
  } catch (err) {
    if (err.status !== 401 && err.status !== 403) { $("signin-error").textContent = err.message; return; }
  }
  try {
    await api("/v1/admin/tables");
    showOperator();
  } catch (err) {
    $("signin-error").textContent = err.status === 401 || err.status === 404 ? "Neither an API key nor the admin token." : err.message;
  }
});

$("signout").addEventListener("click", () => location.reload());

function signedIn(who) {
  $("signin-view").hidden = true;
  $("signout").hidden = false;
  $("who").textContent = who;
}

// The tenant view.

function showTenant(tables) {
  signedIn("tenant view");
  $("tenant-view").hidden = false;
  const ul = $("tables");
  clear(ul);
  for (const t of tables) {
    const el = li(t.name, { table: t.name, first: t.first || "", last: t.last || "" });
    el.addEventListener("click", () => pickTable(t, el));
    ul.appendChild(el);
  }
}

function pickTable(t, el) {
  for (const x of $("tables").children) x.classList.toggle("selected", x === el);
  state.table = t.name;
  state.series = null;
  state.preset = 0;
  $("series-prefix").value = "";
  $("field").value = "";
  $("chart-title").textContent = `${t.name} / every series`;
  setRange(...defaultRange(t.last, new Date()));
  loadSeries(true);
  showTable();
}

// defaultRange is the day ending now when the table's newest event is
// within it; else the day ending just after its newest event (last is
// kept to the minute: the window ends a minute after that minute ends),
// so that a table with events never opens on an empty chart.
function defaultRange(last, now) {
  let to = now;
  if (last) {
    const after = new Date(Math.ceil((new Date(last).getTime() + 1) / 60e3) * 60e3 + 60e3);
    if (now - after > 24 * 3600e3) to = after;
  }
  return [new Date(to.getTime() - 24 * 3600e3), to];
}

// showTable shows the events of the table picked, of every series or of
// the series picked, and charts the first numeric field unless one is
// typed.
async function showTable() {
  try {
    await loadEvents(true);
  } catch (err) {
    showChartError(err.message);
    return;
  }
  if (!$("field").value) {
    const first = (state.lastEvents || []).find((e) => Object.values(e.fields || {}).some((v) => typeof v === "number"));
    if (first) $("field").value = Object.keys(first.fields).find((k) => typeof first.fields[k] === "number");
  }
  if ($("field").value) await plotOrSay();
}

// Times are written and read as the API's, in UTC: RFC 3339, the "Z"
// optional.
const formatTime = (d) => d.toISOString().replace(/\.\d{3}Z$/, "Z");

function setRange(from, to) {
  $("from").value = formatTime(from);
  $("to").value = formatTime(to);
}

function readRange() {
  const read = (id) => {
    const v = $(id).value.trim();
    const d = new Date(/[zZ]|[+-]\d\d:\d\d$/.test(v) ? v : v + "Z");
    if (isNaN(d)) throw new Error(`${id}: ${JSON.stringify(v)} is not a time like 2026-11-21T00:00:00Z`);
    return d;
  };
  return [read("from"), read("to")];
}

let searchTimer = 0;
$("series-prefix").addEventListener("input", () => {
  clearTimeout(searchTimer);
  searchTimer = setTimeout(() => loadSeries(true), 200);
});
$("series-more").addEventListener("click", () => loadSeries(false));

// loadSeries shows the first page of the table's series with the prefix
// typed (fresh), or the next page. An answer to a search typed over since
// is dropped.
let seriesSearch = 0;
async function loadSeries(fresh) {
  if (!state.table) return;
  const ul = $("series");
  if (fresh) { state.seriesCursor = ""; seriesSearch++; }
  const search = seriesSearch;
  const page = await api(`/v1/tables/${encodeURIComponent(state.table)}/series`,
    { prefix: $("series-prefix").value, limit: 100, cursor: state.seriesCursor });
  if (search !== seriesSearch) return;
  if (fresh) clear(ul);
  for (const s of page.series) {
    const el = li(s, { series: s });
    el.addEventListener("click", () => pickSeries(s, el));
    ul.appendChild(el);
  }
  state.seriesCursor = page.next_cursor || "";
  $("series-more").hidden = !page.next_cursor;
}

async function pickSeries(s, el) {
  for (const x of $("series").children) x.classList.toggle("selected", x === el);
  state.series = s;
  $("chart-title").textContent = `${state.table} / ${s === "" ? "(no series)" : s}`;
  await showTable();
}

// The chart.

const buckets = [["1m", 60], ["5m", 300], ["15m", 900], ["30m", 1800], ["1h", 3600], ["3h", 10800], ["6h", 21600], ["12h", 43200], ["1d", 86400]];
const maxPoints = 500, maxEvents = 5000, rawSpan = 6 * 3600e3;
const colours = ["#1565c0", "#c62828", "#2e7d32", "#ef6c00", "#6a1b9a", "#00838f"];

$("chart-form").addEventListener("submit", (e) => { e.preventDefault(); plotOrSay(); });

// Range presets: the last hour, day, week... ending now; the auto-refresh
// slides such a range to the new now.
for (const b of document.querySelectorAll("#presets button")) {
  b.addEventListener("click", () => {
    state.preset = Number(b.dataset.hours) * 3600e3;
    const now = new Date();
    setRange(new Date(now.getTime() - state.preset), now);
    plotOrSay();
  });
}
for (const id of ["from", "to"]) $(id).addEventListener("input", () => { state.preset = 0; });

let refreshTimer = 0;
$("refresh").addEventListener("change", () => {
  clearInterval(refreshTimer);
  const every = Number($("refresh").value);
  if (!every) return;
  refreshTimer = setInterval(() => {
    if (!state.table || $("tenant-view").hidden) return;
    if (state.preset) {
      const now = new Date();
      setRange(new Date(now.getTime() - state.preset), now);
    }
    plotOrSay();
  }, every * 1000);
});

// plotOrSay plots, or replaces the chart with what went wrong.
// The chart's data-busy counts the plots under way, data-plot those done,
// for tests to wait on.
async function plotOrSay() {
  const chart = $("chart");
  chart.dataset.busy = String(Number(chart.dataset.busy || 0) + 1);
  try {
    await plot();
    $("chart-error").textContent = "";
  } catch (err) {
    showChartError(err.message);
  } finally {
    chart.dataset.busy = String(Number(chart.dataset.busy) - 1);
    chart.dataset.plot = String(Number(chart.dataset.plot || 0) + 1);
  }
}

// showChartError replaces the chart, its caption and legend with msg.
function showChartError(msg) {
  $("chart-box").hidden = true;
  clear($("chart"));
  $("chart").dataset.points = "0";
  $("chart").dataset.mode = "error";
  $("chart-mode").textContent = "";
  clear($("legend"));
  $("chart-error").textContent = msg;
}

// plot charts the fields typed over the range: the events themselves
// when the bucket is auto and the range at most six hours, else an
// aggregate with the function and bucket chosen (auto: the shortest
// that keeps the chart under 500 points).
async function plot() {
  const [from, to] = readRange();
  if (!state.table) throw new Error("pick a table first");
  const fields = $("field").value.split(",").map((f) => f.trim()).filter((f) => f);
  if (fields.length === 0) throw new Error("type a field to chart, or several separated by commas");
  const series = state.series ?? undefined;
  const fn = $("fn").value;
  let bucket = $("bucket").value;
  const lines = new Map(fields.map((f) => [f, []]));
  let caption;
  if (bucket !== "auto" || to - from > rawSpan) {
    if (bucket === "auto") {
      const seconds = (to - from) / 1000;
      [bucket] = buckets.find(([, s]) => seconds / s <= maxPoints) || buckets[buckets.length - 1];
    }
    const body = await api(`/v1/tables/${encodeURIComponent(state.table)}/aggregate`,
      { from: from.toISOString(), to: to.toISOString(), series, bucket, fields: fields.join(","), fn });
    for (const b of body.buckets) {
      for (const f of fields) {
        const v = b.values[f] && b.values[f][fn];
        if (v !== undefined && v !== null) lines.get(f).push({ t: b.start, v: Number(v) });
      }
    }
    caption = `aggregate: ${fn} of ${fields.join(", ")} per ${bucket}`;
    $("chart").dataset.mode = "aggregate";
    $("chart").dataset.bucket = bucket;
  } else {
    let cursor = "", n = 0;
    do {
      const page = await api(`/v1/tables/${encodeURIComponent(state.table)}/events`,
        { from: from.toISOString(), to: to.toISOString(), series, fields: fields.join(","), limit: 1000, cursor });
      for (const ev of page.events) {
        for (const f of fields) {
          if (typeof ev.fields[f] === "number") { lines.get(f).push({ t: ev.time, v: ev.fields[f] }); n++; }
        }
      }
      cursor = page.next_cursor || "";
    } while (cursor && n < maxEvents);
    caption = `events: ${fields.join(", ")}, ${n} points`;
    $("chart").dataset.mode = "events";
    delete $("chart").dataset.bucket;
  }
  const missing = fields.filter((f) => lines.get(f).length === 0);
  if (missing.length === fields.length) {
    const where = state.series == null ? "" : ` of series ${JSON.stringify(state.series)}`;
    throw new Error(`no numeric values of ${missing.map((f) => JSON.stringify(f)).join(", ")}${where} between ${formatTime(from)} and ${formatTime(to)}: ` +
      `check the field's name (the events below show the fields there are) and the range`);
  }
  $("chart-mode").textContent = caption + (missing.length ? ` (no values of ${missing.join(", ")})` : "");
  draw([...lines].filter(([, ps]) => ps.length).map(([field, points]) => ({ field, points })), from, to, $("unit").value.trim());
}

// Chart geometry, in the SVG's own units.
const W = 900, H = 320, padLeft = 70, padRight = 20, padTop = 15, padBottom = 45;

// timeSteps are the steps of the time axis's ticks.
const timeSteps = [1, 5, 15, 30, 60, 300, 900, 1800, 3600, 3 * 3600, 6 * 3600, 12 * 3600, 86400, 2 * 86400, 7 * 86400, 14 * 86400, 30 * 86400, 91 * 86400, 365 * 86400].map((s) => s * 1000);

// timeTicks returns the ticks of [from, to], at most about eight, aligned
// to their step in UTC, and a label of each: the time of day, with the
// date when the range spans days, the date alone for steps of days.
function timeTicks(from, to) {
  const span = Math.max(to - from, 1);
  const step = timeSteps.find((s) => span / s <= 8) || timeSteps[timeSteps.length - 1];
  const ticks = [];
  for (let t = Math.ceil(from / step) * step; t <= to; t += step) ticks.push(t);
  const iso = (t) => new Date(t).toISOString();
  const label = step >= 86400e3 ? (t) => iso(t).slice(0, 10)
    : span > 86400e3 ? (t) => iso(t).slice(5, 16).replace("T", " ")
    : step < 60e3 ? (t) => iso(t).slice(11, 19)
    : (t) => iso(t).slice(11, 16);
  return ticks.map((t) => ({ t, label: label(t) }));
}

// valueTicks returns round ticks (1, 2 or 5 times a power of ten) that
// span [lo, hi], about five.
function valueTicks(lo, hi) {
  if (lo === hi) { lo -= Math.abs(lo) / 10 || 1; hi += Math.abs(hi) / 10 || 1; }
  const raw = (hi - lo) / 5;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw);
  const ticks = [];
  for (let v = Math.floor(lo / step) * step; v <= hi + step / 2; v += step) {
    ticks.push(Number(v.toPrecision(12)));
    if (v >= hi) break;
  }
  return ticks;
}

// formatNumber shows a value to six significant digits (the JSON keeps
// every digit; a chart has no use for them).
const formatNumber = (v) => String(Number(v.toPrecision(6)));

function svgEl(name, attrs, text) {
  const el = document.createElementNS("http://www.w3.org/2000/svg", name);
  for (const [k, v] of Object.entries(attrs || {})) el.setAttribute(k, v);
  if (text !== undefined) el.textContent = text;
  return el;
}

// draw charts lines, [{field, points: [{t, v}]}], over [from, to], with
// a time axis (UTC) and a value axis labelled with the unit.
function draw(lines, from, to, unit) {
  $("chart-box").hidden = false;
  const svg = $("chart");
  clear(svg);
  clear($("legend"));
  const all = lines.flatMap((l) => l.points);
  svg.dataset.points = String(all.length);
  const ticks = valueTicks(Math.min(...all.map((p) => p.v)), Math.max(...all.map((p) => p.v)));
  const lo = ticks[0], hi = ticks[ticks.length - 1];
  const x = (t) => padLeft + ((new Date(t) - from) / Math.max(to - from, 1)) * (W - padLeft - padRight);
  const y = (v) => H - padBottom - ((v - lo) / (hi - lo)) * (H - padTop - padBottom);
  const axes = svgEl("g", { class: "axes" });
  axes.appendChild(svgEl("line", { x1: padLeft, y1: H - padBottom, x2: W - padRight, y2: H - padBottom }));
  axes.appendChild(svgEl("line", { x1: padLeft, y1: padTop, x2: padLeft, y2: H - padBottom }));
  for (const { t, label } of timeTicks(from.getTime(), to.getTime())) {
    const g = svgEl("g", { class: "x-tick", "data-t": new Date(t).toISOString() });
    g.appendChild(svgEl("line", { x1: x(t), y1: H - padBottom, x2: x(t), y2: H - padBottom + 5 }));
    g.appendChild(svgEl("text", { x: x(t), y: H - padBottom + 18, "text-anchor": "middle" }, label));
    axes.appendChild(g);
  }
  for (const v of ticks) {
    const g = svgEl("g", { class: "y-tick", "data-v": String(v) });
    g.appendChild(svgEl("line", { class: "grid", x1: padLeft, y1: y(v), x2: W - padRight, y2: y(v) }));
    g.appendChild(svgEl("text", { x: padLeft - 6, y: y(v) + 4, "text-anchor": "end" }, formatNumber(v)));
    axes.appendChild(g);
  }
  axes.appendChild(svgEl("text", { class: "x-title", x: (padLeft + W - padRight) / 2, y: H - 6, "text-anchor": "middle" }, "time (UTC)"));
  const fn = $("chart").dataset.mode === "aggregate" ? $("fn").value : "";
  const title = `${fn ? fn + " of " : ""}${lines.map((l) => l.field).join(", ")}${unit ? ` (${unit})` : ""}`;
  axes.appendChild(svgEl("text", { class: "y-title", x: 14, y: (padTop + H - padBottom) / 2, "text-anchor": "middle", transform: `rotate(-90 14 ${(padTop + H - padBottom) / 2})` }, title));
  svg.appendChild(axes);
  lines.forEach(({ field, points }, i) => {
    const colour = colours[i % colours.length];
    const g = svgEl("g", { class: "line", "data-field": field });
    g.appendChild(svgEl("polyline", { stroke: colour, points: points.map((p) => `${x(p.t).toFixed(1)},${y(p.v).toFixed(1)}`).join(" ") }));
    for (const p of points) {
      const c = svgEl("circle", { cx: x(p.t).toFixed(1), cy: y(p.v).toFixed(1), r: "2.5", fill: colour, "data-t": p.t, "data-v": String(p.v), "data-field": field });
      c.appendChild(svgEl("title", {}, `${p.t}\n${field}: ${formatNumber(p.v)}${unit ? " " + unit : ""}`));
      g.appendChild(c);
    }
    svg.appendChild(g);
    const item = document.createElement("span");
    item.className = `legend-item colour-${i % colours.length}`;
    item.textContent = field;
    $("legend").appendChild(item);
  });
}

// The tooltip: the point nearest the pointer, its time and value.
$("chart").addEventListener("mousemove", (e) => {
  const svg = $("chart"), tip = $("tooltip");
  const circles = [...svg.querySelectorAll("circle")];
  if (circles.length === 0) { tip.hidden = true; return; }
  const box = svg.getBoundingClientRect();
  const px = ((e.clientX - box.left) / box.width) * W, py = ((e.clientY - box.top) / box.height) * H;
  let best = null, bestD = Infinity;
  for (const c of circles) {
    const d = Math.hypot(Number(c.getAttribute("cx")) - px, (Number(c.getAttribute("cy")) - py) / 4);
    if (d < bestD) { best = c; bestD = d; }
  }
  const unit = $("unit").value.trim();
  tip.textContent = `${best.dataset.t.replace("T", " ").replace(/\.0+Z|Z/, "")} UTC — ${best.dataset.field}: ${formatNumber(Number(best.dataset.v))}${unit ? " " + unit : ""}`;
  tip.hidden = false;
  tip.dataset.t = best.dataset.t;
  tip.style.left = `${(Number(best.getAttribute("cx")) / W) * box.width + 8}px`;
  tip.style.top = `${(Number(best.getAttribute("cy")) / H) * box.height - 28}px`;
});
$("chart").addEventListener("mouseleave", () => { $("tooltip").hidden = true; });

// The events table.

$("events-next").addEventListener("click", () => loadEvents(false));

async function loadEvents(fresh) {
  const [from, to] = readRange();
  if (fresh) {
    state.eventsQuery = { from: from.toISOString(), to: to.toISOString(), series: state.series ?? undefined, limit: 50, order: "desc" };
    state.eventsCursor = "";
  }
  const page = await api(`/v1/tables/${encodeURIComponent(state.table)}/events`, { ...state.eventsQuery, cursor: state.eventsCursor });
  state.lastEvents = page.events;
  const fields = [...new Set(page.events.flatMap((e) => Object.keys(e.fields || {})))].sort();
  const head = $("events").tHead, body = $("events").tBodies[0];
  clear(head);
  clear(body);
  const hr = head.insertRow();
  for (const h of ["time", "series", "id", ...fields]) hr.insertCell().textContent = h;
  for (const ev of page.events) {
    const r = body.insertRow();
    r.insertCell().textContent = ev.time;
    r.insertCell().textContent = ev.series;
    r.insertCell().textContent = ev.id;
    for (const f of fields) {
      const v = ev.fields[f];
      r.insertCell().textContent = v === undefined ? "" : typeof v === "object" ? JSON.stringify(v) : String(v);
    }
  }
  state.eventsCursor = page.next_cursor || "";
  $("events-next").hidden = !page.next_cursor;
}

// The operator view.

async function showOperator() {
  signedIn("operator view");
  $("operator-view").hidden = false;
  readMetrics();
  setInterval(readMetrics, 5000);
  loadTenants();
  try {
    const { tables } = await api("/v1/admin/tables");
    drawTimeline(tables);
    drawPhysical(tables);
    drawArchives(tables);
  } catch (err) {
    $("operator-error").textContent = err.message;
  }
  try {
    const { last_cycle: c } = await api("/v1/admin/lifecycle");
    $("cycle").textContent = c ? `${c.start || ""} to ${c.end || ""}: ${c.outcome || ""}${c.error ? " (" + c.error + ")" : ""}, ${(c.actions || []).length} actions` +
      ((c.actions || []).length ? ": " + c.actions.map((a) => `${a.action} ${a.table}`).join("; ") : "")
      : "no cycle has run in this server yet";
  } catch (err) {
    $("cycle").textContent = err.message;
  }
  plan();
  try {
    const { actions } = await api("/v1/admin/plan");
    const body = $("plan").tBodies[0];
    clear(body);
    for (const a of actions) {
      const r = body.insertRow();
      r.dataset.action = a.action;
      for (const v of [a.action, a.table, a.tier, a.reason]) r.insertCell().textContent = v || "";
    }
    if (actions.length === 0) body.insertRow().insertCell().textContent = "nothing to do now";
    $("plan").dataset.actions = String(actions.length);
  } catch (err) {
    $("operator-error").textContent = err.message;
  }
}

// The capacity planner: the server's report for a workload, and its cost
// chart, an SVG document parsed here (never run as script).
$("planner-form").addEventListener("submit", (e) => { e.preventDefault(); plan(); });

async function plan() {
  $("planner-summary").textContent = "";
  try {
    const { report: r, svg } = await api("/v1/admin/planner",
      { rate: $("plan-rate").value, item_bytes: $("plan-item").value, retention: $("plan-retention").value });
    // The recommended month as AWS bills it, line by line in r.bill.lines.
    const cost = r.bill.total;
    $("planner-summary").textContent = `${r.period} tables, ${r.shards} shards, ${r.recommended_billing.replace("_", " ")}: $${cost.toFixed(2)} a month as billed, ${r.bill.lines.length} lines (${r.costed_at})`;
    $("planner-summary").dataset.period = r.period;
    const doc = new DOMParser().parseFromString(svg, "image/svg+xml");
    const chart = $("planner-chart");
    clear(chart);
    chart.appendChild(document.importNode(doc.documentElement, true));
  } catch (err) {
    $("planner-summary").textContent = err.message;
  }
}

const esc = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

// drawTimeline draws, per family, one row per period and one column per
// write month, each cell the table of that period written in that month,
// coloured by its tier. It builds each family's grid as one string.
function drawTimeline(tables) {
  const byFamily = new Map();
  for (const t of tables) {
    if (!byFamily.has(t.family)) byFamily.set(t.family, []);
    byFamily.get(t.family).push(t);
  }
  let html = "";
  for (const [family, ts] of [...byFamily].sort()) {
    const months = [...new Set(ts.map((t) => t.write_month || "—"))].sort();
    const periods = [...new Set(ts.map((t) => t.period_start))].sort();
    const cell = new Map(ts.map((t) => [t.period_start + "|" + (t.write_month || "—"), t]));
    html += `<h3>${esc(family)}</h3><table class="timeline" data-family="${esc(family)}"><thead><tr><th>period</th>`;
    for (const m of months) html += `<th>${esc(m)}</th>`;
    html += "</tr></thead><tbody>";
    for (const p of periods) {
      const label = p.endsWith("T00:00:00Z") ? p.slice(0, 10) : p.slice(0, 16).replace("T", " ");
      html += `<tr><th>${esc(label)}</th>`;
      for (const m of months) {
        const t = cell.get(p + "|" + m);
        // A table archived and deleted is read from its archive: marked
        // apart from the tiers, its last tier still in data-tier.
        html += t
          ? `<td class="tier-${esc(t.state === "deleted" ? "archived" : t.tier)}" data-table="${esc(t.name)}" data-tier="${esc(t.tier)}" title="${esc(t.name)}: ${esc(t.tier)}, ${esc(t.state)}"></td>`
          : "<td></td>";
      }
      html += "</tr>";
    }
    html += "</tbody></table>";
  }
  $("timeline").innerHTML = html || "<p>No tables yet.</p>";
}

function drawPhysical(tables) {
  const body = $("physical").tBodies[0];
  clear(body);
  for (const t of tables) {
    const r = body.insertRow();
    r.dataset.table = t.name;
    const cap = t.billing === "PAY_PER_REQUEST" ? ["on demand", ""] : [t.read_capacity, t.write_capacity];
    for (const v of [t.name, t.family, t.tier, t.state, t.billing, cap[0], cap[1], t.item_count ?? "?"]) r.insertCell().textContent = String(v ?? "");
  }
}


// The server's key metrics, from its Prometheus text: sums over labels,
// and rates between two reads.

// parseMetrics reads Prometheus' text format into samples.
function parseMetrics(text) {
  const out = [];
  for (const line of text.split("\n")) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels = {};
    for (const [, k, v] of (m[3] || "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[k] = v;
    out.push({ name: m[1], labels, value: Number(m[4]) });
  }
  return out;
}

const metricRows = [
  ["events written", (s) => sum(s, "timetable_events_written_total"), "rate", "writes/s (events)"],
  ["events a write failed to store", (s) => sum(s, "timetable_events_write_failed_total")],
  ["HTTP requests", (s) => sum(s, "timetable_http_requests_total"), "rate", "requests/s"],
  ["HTTP errors (5xx)", (s) => sum(s, "timetable_http_requests_total", (l) => /^5/.test(l.code))],
  ["HTTP refusals (4xx)", (s) => sum(s, "timetable_http_requests_total", (l) => /^4/.test(l.code))],
  ["DynamoDB throttles", (s) => sum(s, "timetable_dynamodb_throttles_total")],
  ["reads refused, query budget full", (s) => sum(s, "timetable_query_budget_exhausted_total")],
  ["lifecycle cycles", (s) => byLabel(s, "timetable_lifecycle_cycles_total", "outcome")],
  ["lifecycle actions", (s) => byLabel(s, "timetable_lifecycle_actions_total", "action")],
  ["last lifecycle cycle", (s) => { const v = sum(s, "timetable_lifecycle_last_cycle_timestamp_seconds"); return v ? formatTime(new Date(v * 1000)) : "none"; }],
];

function sum(samples, name, keep) {
  return samples.filter((x) => x.name === name && (!keep || keep(x.labels))).reduce((a, x) => a + x.value, 0);
}

function byLabel(samples, name, label) {
  const parts = samples.filter((x) => x.name === name).map((x) => `${x.labels[label] || "?"} ${x.value}`);
  return parts.length ? parts.join(", ") : "0";
}

let lastMetrics = null;
async function readMetrics() {
  try {
    const res = await fetch("/metrics", { headers: { Authorization: "Bearer " + state.key } });
    if (!res.ok) throw new Error(`/metrics: ${res.status} ${res.statusText}`);
    const samples = parseMetrics(await res.text());
    const at = Date.now();
    const body = $("metrics").tBodies[0];
    clear(body);
    for (const [label, value, rate, rateLabel] of metricRows) {
      const v = value(samples);
      const r = body.insertRow();
      r.dataset.metric = label;
      r.insertCell().textContent = label;
      r.insertCell().textContent = String(v);
      if (rate && lastMetrics) {
        const before = value(lastMetrics.samples);
        const rr = body.insertRow();
        rr.dataset.metric = rateLabel;
        rr.insertCell().textContent = rateLabel;
        rr.insertCell().textContent = formatNumber(Math.max(v - before, 0) / ((at - lastMetrics.at) / 1000));
      }
    }
    lastMetrics = { samples, at };
    $("metrics").dataset.read = String(Number($("metrics").dataset.read || 0) + 1);
  } catch (err) {
    $("operator-error").textContent = err.message;
  }
}

// Tenants and their keys: add a tenant, add, rotate and revoke keys. A
// new key's secret is shown once, as the API answers it once.

$("tenant-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const name = $("tenant-name").value.trim();
  if (!name) return;
  await adminAction(async () => {
    const { key } = await api("/v1/admin/tenants", null, "POST", { name });
    showSecret(`Tenant ${name} added. Its first key, shown this once: ${key.secret}`, key.secret);
    $("tenant-name").value = "";
    await loadTenants();
  });
});

async function adminAction(fn) {
  $("operator-error").textContent = "";
  try {
    await fn();
  } catch (err) {
    $("operator-error").textContent = err.message;
  }
}

function showSecret(msg, secret) {
  $("secret").textContent = msg;
  $("secret").dataset.secret = secret;
  $("secret").hidden = false;
}

async function loadTenants() {
  await adminAction(async () => {
    const { tenants } = await api("/v1/admin/tenants");
    const body = $("tenants").tBodies[0];
    clear(body);
    for (const t of tenants) {
      const r = body.insertRow();
      r.dataset.tenant = t.name;
      r.insertCell().textContent = t.name;
      r.insertCell().textContent = t.created;
      const b = document.createElement("button");
      b.textContent = "Keys";
      b.className = "show-keys";
      b.addEventListener("click", () => loadKeys(t.name));
      r.insertCell().appendChild(b);
    }
    $("tenants").dataset.count = String(tenants.length);
  });
}

let keysTenant = "";
async function loadKeys(tenant) {
  keysTenant = tenant;
  await adminAction(async () => {
    const { keys } = await api(`/v1/admin/tenants/${encodeURIComponent(tenant)}/keys`);
    $("keys-box").hidden = false;
    $("keys-title").textContent = `Keys of ${tenant}`;
    const body = $("keys").tBodies[0];
    clear(body);
    for (const k of keys) {
      const r = body.insertRow();
      r.dataset.key = k.id;
      r.dataset.state = k.state;
      for (const v of [k.id, k.scope, k.created, k.expires || "", k.state]) r.insertCell().textContent = v;
      const cell = r.insertCell();
      if (k.state !== "revoked") {
        for (const [label, act] of [["Rotate", rotateKey], ["Revoke", revokeKey]]) {
          const b = document.createElement("button");
          b.textContent = label;
          b.className = label.toLowerCase();
          b.addEventListener("click", () => act(k.id));
          cell.appendChild(b);
        }
      }
    }
    $("keys").dataset.tenant = tenant;
    $("keys").dataset.count = String(keys.length);
  });
}

$("key-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  await adminAction(async () => {
    const k = await api(`/v1/admin/tenants/${encodeURIComponent(keysTenant)}/keys`, null, "POST", { scope: $("key-scope").value });
    showSecret(`New ${k.scope} key ${k.id} of ${keysTenant}, shown this once: ${k.secret}`, k.secret);
    await loadKeys(keysTenant);
  });
});

async function rotateKey(id) {
  await adminAction(async () => {
    const { key } = await api(`/v1/admin/tenants/${encodeURIComponent(keysTenant)}/keys/${encodeURIComponent(id)}/rotate`, null, "POST", { grace: $("key-grace").value.trim() });
    showSecret(`Key ${id} rotated: it ends after ${$("key-grace").value.trim() || "now"}. The new key ${key.id}, shown this once: ${key.secret}`, key.secret);
    await loadKeys(keysTenant);
  });
}

async function revokeKey(id) {
  if (!confirm(`Revoke key ${id} of ${keysTenant} now? Clients using it are refused at once.`)) return;
  await adminAction(async () => {
    await api(`/v1/admin/tenants/${encodeURIComponent(keysTenant)}/keys/${encodeURIComponent(id)}`, null, "DELETE");
    await loadKeys(keysTenant);
  });
}

// drawArchives lists the physical tables with an archive: where the
// archive is, when it was made, and the table's state (archived: the
// table still exists; deleted: its periods are read from the archive).
function drawArchives(tables) {
  const body = $("archives").tBodies[0];
  clear(body);
  const archived = tables.filter((t) => t.archive_target || /archiv/.test(t.state || ""));
  for (const t of archived) {
    const r = body.insertRow();
    r.dataset.table = t.name;
    r.dataset.state = t.state || "";
    r.dataset.target = t.archive_target || "";
    for (const v of [t.name, t.family, `${t.period_start} to ${t.period_end}`, t.state, t.archive_target, t.archived_at]) r.insertCell().textContent = v || "";
  }
  if (archived.length === 0) body.insertRow().insertCell().textContent = "no table archived";
  $("archives").dataset.count = String(archived.length);
}
