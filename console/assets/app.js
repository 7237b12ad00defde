// timetable's web console: see package console's documentation.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { key: "", table: "", series: null, seriesCursor: "", eventsCursor: "", eventsQuery: null, preset: 0, rawCursors: [""], rawNext: "" };

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
    state.tables = body.tables;
    const view = readHash();
    if (view) await restoreView(view, body.tables);
    return;
  } catch (err) {
    if (err.status !== 401 && err.status !== 403) { $("signin-error").textContent = err.message; return; }
  }
  try {
    const { store } = await api("/v1/admin/tables");
    state.store = store || "";
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
  state.rawCursors = [""];
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
  state.rawCursors = [""];
  $("chart-title").textContent = `${state.table} / ${s === "" ? "(no series)" : s}`;
  await showTable();
}

// The chart.

// bucketSteps are the buckets the auto interval picks from, as Grafana
// rounds its interval: each divides a day, and 1d past a day.
const bucketSteps = [["1s", 1], ["5s", 5], ["10s", 10], ["30s", 30], ["1m", 60], ["5m", 300], ["10m", 600], ["30m", 1800],
  ["1h", 3600], ["3h", 10800], ["6h", 21600], ["12h", 43200], ["1d", 86400]];
const maxPoints = 450, rawPage = 5000, groupLimit = 1000;
const colours = ["#1565c0", "#c62828", "#2e7d32", "#ef6c00", "#6a1b9a", "#00838f", "#ad1457", "#558b2f", "#4e342e", "#283593",
  "#f9a825", "#00695c", "#d84315", "#37474f", "#8e24aa", "#0277bd", "#9e9d24", "#5d4037", "#c2185b", "#1b5e20"];
const otherColour = "#9e9e9e";

// autoBucket is the bucket for [from, to]: the range over maxPoints,
// rounded up to the next of bucketSteps, so a chart holds at most about
// maxPoints points of a line.
function autoBucket(from, to) {
  const seconds = (to - from) / 1000 / maxPoints;
  return (bucketSteps.find(([, s]) => s >= seconds) || bucketSteps[bucketSteps.length - 1])[0];
}

$("chart-form").addEventListener("submit", (e) => { e.preventDefault(); state.rawCursors = [""]; plotOrSay(); });
for (const id of ["mode", "fn", "bucket", "top", "rank"]) $(id).addEventListener("change", () => { state.rawCursors = [""]; plotOrSay(); });

// Range presets: the last hour, day, week... ending now; the auto-refresh
// slides such a range to the new now.
for (const b of document.querySelectorAll("#presets button")) {
  b.addEventListener("click", () => {
    state.preset = Number(b.dataset.hours) * 3600e3;
    const now = new Date();
    setRange(new Date(now.getTime() - state.preset), now);
    state.rawCursors = [""];
    plotOrSay();
  });
}
for (const id of ["from", "to"]) $(id).addEventListener("input", () => { state.preset = 0; });

// Zoom out doubles the range about its middle (not past now).
$("zoom-out").addEventListener("click", () => {
  const [from, to] = readRange();
  const half = (to - from) / 2;
  const end = Math.min(to.getTime() + half, Date.now());
  setRange(new Date(end - 4 * half), new Date(end));
  state.preset = 0;
  state.rawCursors = [""];
  plotOrSay();
});

// Raw mode pages: older follows the page's cursor, newer goes back.
$("raw-older").addEventListener("click", () => { state.rawCursors.push(state.rawNext); plotOrSay(); });
$("raw-newer").addEventListener("click", () => { state.rawCursors.pop(); plotOrSay(); });

let refreshTimer = 0;
$("refresh").addEventListener("change", () => setRefresh(Number($("refresh").value)));
function setRefresh(every) {
  clearInterval(refreshTimer);
  if (!every) return;
  refreshTimer = setInterval(() => {
    if (!state.table || $("tenant-view").hidden) return;
    if (state.preset) {
      const now = new Date();
      setRange(new Date(now.getTime() - state.preset), now);
    }
    plotOrSay();
  }, every * 1000);
}

// plotOrSay plots, or replaces the chart with what went wrong, and
// writes the view into the URL's hash.
// The chart's data-busy counts the plots under way, data-plot those done,
// for tests to wait on.
async function plotOrSay() {
  const chart = $("chart");
  chart.dataset.busy = String(Number(chart.dataset.busy || 0) + 1);
  try {
    writeHash();
    await plot();
    $("chart-error").textContent = "";
    await followChart();
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
  $("tooltip").hidden = true;
  clear($("chart"));
  $("chart").dataset.points = "0";
  $("chart").dataset.mode = "error";
  delete $("chart").dataset.last;
  $("chart-mode").textContent = "";
  $("raw-older").hidden = $("raw-newer").hidden = true;
  clear($("legend"));
  $("chart-error").textContent = msg;
}

// The view's state in the URL's hash: table, series, fields, function,
// bucket, mode, filter, top and rank, unit, range (or preset) and
// refresh. The key never goes there: a link opens the sign-in, then
// this view.
const hashKeys = ["table", "series", "fields", "fn", "bucket", "mode", "filter", "top", "rank", "unit", "from", "to", "last", "refresh"];
function writeHash() {
  const p = new URLSearchParams();
  const v = {
    table: state.table, series: state.series ?? undefined, fields: $("field").value.trim(), fn: $("fn").value, bucket: $("bucket").value,
    mode: $("mode").value, filter: $("filter").value.trim(), top: $("top").value, rank: $("rank").value, unit: $("unit").value.trim(),
    refresh: $("refresh").value === "0" ? "" : $("refresh").value,
  };
  if (state.preset) v.last = String(state.preset / 3600e3) + "h";
  else { v.from = $("from").value.trim(); v.to = $("to").value.trim(); }
  // The series "" (events without one) is kept as series=.
  for (const k of hashKeys) if (v[k] !== undefined && (v[k] !== "" || k === "series")) p.set(k, v[k]);
  history.replaceState(null, "", "#" + p.toString());
}

// A link pasted into a signed-in tenant view opens its view.
window.addEventListener("hashchange", () => {
  const v = readHash();
  if (v && !$("tenant-view").hidden && state.tables) restoreView(v, state.tables);
});

// readHash is the view a link names, or null.
function readHash() {
  const p = new URLSearchParams(location.hash.slice(1));
  return p.get("table") ? Object.fromEntries(p) : null;
}

// restoreView opens the view v (readHash's) in the tenant view.
async function restoreView(v, tables) {
  const t = tables.find((x) => x.name === v.table);
  if (!t) { $("chart-error").textContent = `the link's table ${JSON.stringify(v.table)} is not one of this key's tables`; return; }
  const el = [...$("tables").children].find((x) => x.dataset.table === v.table);
  for (const x of $("tables").children) x.classList.toggle("selected", x === el);
  state.table = t.name;
  state.series = v.series ?? null;
  $("chart-title").textContent = `${t.name} / ${state.series == null ? "every series" : state.series === "" ? "(no series)" : state.series}`;
  $("series-prefix").value = "";
  $("field").value = v.fields || "";
  for (const k of ["fn", "bucket", "mode", "filter", "top", "rank", "unit"]) if (v[k] !== undefined) $(k).value = v[k];
  if (v.last) {
    state.preset = parseFloat(v.last) * 3600e3;
    const now = new Date();
    setRange(new Date(now.getTime() - state.preset), now);
  } else {
    state.preset = 0;
    $("from").value = v.from || "";
    $("to").value = v.to || "";
  }
  if (v.refresh) { $("refresh").value = v.refresh; setRefresh(Number(v.refresh)); }
  state.rawCursors = [""];
  loadSeries(true);
  await showTable();
}

let plotGen = 0;

// plot charts the fields typed over the range, of the series picked or
// of every series.
async function plot() {
  const gen = ++plotGen;
  const [from, to] = readRange();
  if (!state.table) throw new Error("pick a table first");
  if (from >= to) throw new Error(`from ${formatTime(from)} is after to ${formatTime(to)}`);
  const fields = $("field").value.split(",").map((f) => f.trim()).filter((f) => f);
  if (fields.length === 0) throw new Error("type a field to chart, or several separated by commas");
  const q = { from: from.toISOString(), to: to.toISOString(), series: state.series ?? undefined, filter: $("filter").value.trim(), fields: fields.join(",") };
  const chart = $("chart");
  chart.dataset.from = q.from;
  chart.dataset.to = q.to;
  let answer;
  try {
    answer = $("mode").value === "raw" ? await plotRaw(q, fields, from, to) : await plotAggregate(q, fields, from, to);
  } catch (err) {
    if (gen !== plotGen) return;
    throw err;
  }
  // A plot asked for since draws instead of this one.
  if (gen !== plotGen) return;
  const { lines, caption, legend } = answer;
  const drawn = lines.filter((l) => l.points.length);
  if (drawn.length === 0) {
    const where = state.series == null ? "" : ` of series ${JSON.stringify(state.series)}`;
    throw new Error(`no numeric values of ${fields.map((f) => JSON.stringify(f)).join(", ")}${where} between ${formatTime(from)} and ${formatTime(to)}` +
      `${q.filter ? " matching the filter" : ""}: check the field's name (the events below show the fields there are) and the range`);
  }
  const missing = fields.filter((f) => !drawn.some((l) => l.field === f));
  $("chart-mode").textContent = caption + (missing.length ? ` (no values of ${missing.join(", ")})` : "");
  draw(drawn, from, to, $("unit").value.trim(), legend);
}

// fieldPoints are the points of field's fn in an aggregate's buckets.
function fieldPoints(buckets, field, fn) {
  const out = [];
  for (const b of buckets) {
    const v = b.values[field] && b.values[field][fn];
    if (v !== undefined && v !== null) out.push({ t: b.start, v: Number(v), end: b.end });
  }
  return out;
}

// mergeOthers merges the buckets of the series not drawn into one line
// of fn, where fn merges (min, max, sum, count; avg from the sums and
// counts asked beside it); null for functions that do not.
function mergeOthers(groups, field, fn) {
  if (!["min", "max", "sum", "count", "avg"].includes(fn)) return null;
  const by = new Map();
  for (const g of groups) {
    for (const b of g.buckets) {
      const vs = b.values[field];
      if (!vs || vs[fn] === undefined || vs[fn] === null) continue;
      const m = by.get(b.start) || { t: b.start, end: b.end, v: null, sum: 0, count: 0 };
      const v = Number(vs[fn]);
      if (fn === "min") m.v = m.v === null ? v : Math.min(m.v, v);
      else if (fn === "max") m.v = m.v === null ? v : Math.max(m.v, v);
      else if (fn === "sum" || fn === "count") m.v = (m.v || 0) + v;
      else { m.sum += Number(vs.sum); m.count += Number(vs.count); m.v = m.sum / m.count; }
      by.set(b.start, m);
    }
  }
  return [...by.values()].sort((a, b) => (a.t < b.t ? -1 : 1)).map(({ t, v, end }) => ({ t, v, end }));
}

// plotAggregate reads the aggregate: of the series picked, one line a
// field; of every series, grouped by series, the top N by value (the
// mean of the first field's buckets) or by events drawn, one line each,
// and the rest merged into one grey line where the function merges.
async function plotAggregate(q, fields, from, to) {
  const fn = $("fn").value;
  const chosen = $("bucket").value;
  const bucket = chosen === "auto" ? autoBucket(from, to) : chosen;
  const chart = $("chart");
  chart.dataset.mode = "aggregate";
  chart.dataset.bucket = bucket;
  const path = `/v1/tables/${encodeURIComponent(state.table)}/aggregate`;
  const what = `${fn} of ${fields.join(", ")} per ${bucket}${chosen === "auto" ? " (auto)" : ""}`;
  if (state.series != null) {
    const body = await api(path, { ...q, bucket, fn });
    const lines = fields.map((f) => ({ field: f, label: f, points: fieldPoints(body.buckets, f, fn) }));
    return { lines, caption: `aggregate: ${what}`, legend: { shown: lines.length } };
  }
  const fns = fn === "avg" ? "avg,sum,count" : fn;
  const body = await api(path, { ...q, bucket, fn: fns, group_by: "series", group_limit: groupLimit });
  const groups = body.groups || [];
  const first = fields[0];
  const rank = $("rank").value, top = Number($("top").value);
  // A series without values of the first field is not ranked.
  const score = (g) => {
    const ps = fieldPoints(g.buckets, first, fn);
    if (!ps.length) return -Infinity;
    if (rank === "count") return g.buckets.reduce((a, b) => a + (b.events || 0), 0);
    return ps.reduce((a, p) => a + p.v, 0) / ps.length;
  };
  const ranked = groups.map((g) => ({ g, s: score(g) })).filter((x) => x.s !== -Infinity)
    .sort((a, b) => b.s - a.s || (a.g.group < b.g.group ? -1 : 1));
  const shown = ranked.slice(0, top), rest = ranked.slice(top).map((x) => x.g);
  const lines = [];
  for (const { g, s } of shown) {
    for (const f of fields) {
      lines.push({ field: f, series: g.group, score: s, label: fields.length > 1 ? `${g.group} · ${f}` : g.group || "(no series)", points: fieldPoints(g.buckets, f, fn) });
    }
  }
  let others = "";
  if (rest.length) {
    const events = rest.reduce((a, g) => a + g.buckets.reduce((x, b) => x + (b.events || 0), 0), 0);
    const merged = fields.map((f) => [f, mergeOthers(rest, f, fn)]);
    for (const [f, ps] of merged) {
      if (ps) lines.push({ field: f, series: null, other: true, label: `${rest.length} other series${fields.length > 1 ? " · " + f : ""}`, points: ps });
    }
    others = `${rest.length} other series, ${events.toLocaleString("en")} events` + (merged[0][1] ? `: the grey line is their ${fn} together` : `: not drawn (${fn} does not merge across series)`);
  }
  const more = body.next_group ? `; only the first ${groupLimit.toLocaleString("en")} series in name order were ranked (the aggregate's page of groups)` : "";
  const by = rank === "count" ? "events" : `mean ${fn} of ${first}`;
  return {
    lines,
    caption: `aggregate of every series: ${what}; the top ${shown.length} of ${ranked.length} series by ${by}${more}`,
    legend: { shown: shown.length, others },
  };
}

// plotRaw reads a page of the events themselves, newest first, 5,000 a
// page, and says which: events a–b of the newest, of how many in the
// range (an aggregate's count). Of every series, the top N series of the
// page by events get a colour each, the rest one grey.
async function plotRaw(q, fields, from, to) {
  const chart = $("chart");
  chart.dataset.mode = "events";
  delete chart.dataset.bucket;
  if (!state.rawCursors || !state.rawCursors.length) state.rawCursors = [""];
  const pageNo = state.rawCursors.length - 1;
  const path = `/v1/tables/${encodeURIComponent(state.table)}`;
  // The count: an aggregate's, whose range ends before a to that starts
  // a bucket, where the events' range holds to: the events at to itself
  // are counted apart then.
  const bucket = autoBucket(from, to);
  const step = bucketSteps.find(([b]) => b === bucket)[1] * 1000;
  const at = { ...q, from: q.to, to: q.to, limit: 10000 };
  const [page, counted, atTo] = await Promise.all([
    api(`${path}/events`, { ...q, order: "desc", limit: rawPage, cursor: state.rawCursors[pageNo] }),
    api(`${path}/aggregate`, { from: q.from, to: q.to, series: q.series, filter: q.filter, bucket, fn: "count" }),
    to.getTime() % step === 0 ? api(`${path}/events`, at) : { events: [] },
  ]);
  const total = counted.buckets.reduce((a, b) => a + (b.events || 0), 0) + atTo.events.length;
  const evs = page.events.slice().reverse();
  state.rawNext = page.next_cursor || "";
  $("raw-older").hidden = !page.next_cursor;
  $("raw-newer").hidden = pageNo === 0;
  const lines = [];
  const key = (s, f) => s + "\u0000" + f;
  const bySeries = new Map();
  for (const ev of evs) bySeries.set(ev.series, (bySeries.get(ev.series) || 0) + 1);
  const top = Number($("top").value);
  const ranked = [...bySeries].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const shown = new Set(state.series != null ? [state.series] : ranked.slice(0, top).map(([s]) => s));
  const index = new Map();
  for (const ev of evs) {
    for (const f of fields) {
      if (typeof ev.fields[f] !== "number") continue;
      const other = !shown.has(ev.series);
      const k = other ? key("\u0001other", f) : key(ev.series, f);
      if (!index.has(k)) {
        const label = state.series != null ? f : other ? `${bySeries.size - shown.size} other series` : (ev.series || "(no series)");
        index.set(k, { field: f, series: other ? null : ev.series, other, label: fields.length > 1 && state.series == null ? `${label} · ${f}` : label, points: [] });
      }
      index.get(k).points.push({ t: ev.time, v: ev.fields[f] });
    }
  }
  lines.push(...[...index.values()].sort((a, b) => (a.other - b.other) || (bySeries.get(b.series) || 0) - (bySeries.get(a.series) || 0)));
  const n = page.events.length, first = pageNo * rawPage;
  const span = n ? `, from ${evs[0].time} to ${evs[n - 1].time}` : "";
  const caption = `raw events ${n ? (first + 1).toLocaleString("en") : 0}–${(first + n).toLocaleString("en")} of the newest ${total.toLocaleString("en")} in the range${span}` +
    (page.next_cursor ? `; older ones on the next page` : "") + `: ${fields.join(", ")}`;
  chart.dataset.rawFirst = String(first + 1);
  chart.dataset.rawCount = String(n);
  chart.dataset.rawTotal = String(total);
  const others = state.series == null && bySeries.size > shown.size ? `${bySeries.size - shown.size} other series of this page in grey` : "";
  return { lines, caption, legend: { shown: shown.size, others } };
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
  // Up to the first tick at or above hi (within rounding), so the axis
  // spans every point.
  for (let v = Math.floor(lo / step) * step; ; v += step) {
    ticks.push(Number(v.toPrecision(12)));
    if (v >= hi - step * 1e-9) break;
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

// draw charts lines, [{field, label, series, other, points: [{t, v}]}],
// over [from, to], with a time axis (UTC) and a value axis labelled with
// the unit; the legend names each line drawn and legend.others says what
// the grey line holds. The chart's data-last is the time of its newest
// point (data-last-end the end of that bucket), for tests and readers.
function draw(lines, from, to, unit, legend) {
  $("chart-box").hidden = false;
  $("tooltip").hidden = true;
  const svg = $("chart");
  clear(svg);
  clear($("legend"));
  const all = lines.flatMap((l) => l.points);
  svg.dataset.points = String(all.length);
  const newest = all.reduce((a, p) => (!a || new Date(p.t) > new Date(a.t) ? p : a), null);
  svg.dataset.last = newest ? new Date(newest.t).toISOString() : "";
  if (newest && newest.end) svg.dataset.lastEnd = new Date(newest.end).toISOString(); else delete svg.dataset.lastEnd;
  let lo = Infinity, hi = -Infinity;
  for (const p of all) { lo = Math.min(lo, p.v); hi = Math.max(hi, p.v); }
  const ticks = valueTicks(lo, hi);
  const vlo = ticks[0], vhi = ticks[ticks.length - 1];
  const x = (t) => padLeft + ((new Date(t) - from) / Math.max(to - from, 1)) * (W - padLeft - padRight);
  const y = (v) => H - padBottom - ((v - vlo) / (vhi - vlo)) * (H - padTop - padBottom);
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
  const fieldNames = [...new Set(lines.map((l) => l.field))];
  const title = `${fn ? fn + " of " : ""}${fieldNames.join(", ")}${unit ? ` (${unit})` : ""}`;
  axes.appendChild(svgEl("text", { class: "y-title", x: 14, y: (padTop + H - padBottom) / 2, "text-anchor": "middle", transform: `rotate(-90 14 ${(padTop + H - padBottom) / 2})` }, title));
  svg.appendChild(axes);
  // Drawn first, the grey line of the others lies under the coloured ones.
  const ordered = [...lines.filter((l) => l.other), ...lines.filter((l) => !l.other)];
  let colourIndex = 0;
  const colourOf = new Map();
  for (const l of lines) if (!l.other) colourOf.set(l, colours[colourIndex++ % colours.length]);
  const r = all.length > 2000 ? "1.5" : "2.5";
  for (const l of ordered) {
    const colour = l.other ? otherColour : colourOf.get(l);
    const attrs = { class: l.other ? "line other" : "line", "data-field": l.field, "data-label": l.label };
    if (l.series != null) attrs["data-series"] = l.series;
    const g = svgEl("g", attrs);
    // Raw events of many series are dots; aggregate buckets are joined.
    if ($("chart").dataset.mode === "aggregate" || state.series != null) {
      g.appendChild(svgEl("polyline", { stroke: colour, points: l.points.map((p) => `${x(p.t).toFixed(1)},${y(p.v).toFixed(1)}`).join(" ") }));
    }
    for (const p of l.points) {
      const c = svgEl("circle", { cx: x(p.t).toFixed(1), cy: y(p.v).toFixed(1), r, fill: colour, "data-t": p.t, "data-v": String(p.v), "data-field": l.label });
      g.appendChild(c);
    }
    svg.appendChild(g);
  }
  for (const l of lines) {
    if (l.other) continue;
    const item = document.createElement("span");
    item.className = "legend-item";
    item.style.borderColor = colourOf.get(l);
    item.textContent = l.label;
    item.dataset.label = l.label;
    item.title = "click to hide or show its line";
    item.dataset.field = l.field;
    if (l.series != null) item.dataset.series = l.series;
    $("legend").appendChild(item);
  }
  if (legend && legend.others) {
    const item = document.createElement("span");
    item.className = "legend-item legend-others";
    item.style.borderColor = otherColour;
    item.textContent = legend.others;
    $("legend").appendChild(item);
  }
  // The selection rectangle of a drag, kept last so it lies on top.
  svg.appendChild(svgEl("rect", { id: "zoom-rect", x: 0, y: padTop, width: 0, height: H - padTop - padBottom, visibility: "hidden" }));
}

// A click on a legend item hides its line, another shows it again.
$("legend").addEventListener("click", (e) => {
  const item = e.target.closest(".legend-item");
  if (!item || !item.dataset.label) return;
  const off = item.classList.toggle("off");
  for (const g of $("chart").querySelectorAll("g.line")) {
    if (g.dataset.label === item.dataset.label) g.setAttribute("visibility", off ? "hidden" : "visible");
  }
});

// Drag to zoom: a drag across the chart sets the range to the times
// under its ends and plots again; a click without a drag does nothing.
{
  let dragFrom = null;
  const toSvgX = (e) => { const box = $("chart").getBoundingClientRect(); return ((e.clientX - box.left) / box.width) * W; };
  const timeAt = (sx) => {
    const from = new Date($("chart").dataset.from), to = new Date($("chart").dataset.to);
    const f = Math.min(Math.max((sx - padLeft) / (W - padLeft - padRight), 0), 1);
    return new Date(from.getTime() + f * (to - from));
  };
  $("chart").addEventListener("mousedown", (e) => {
    if (!$("chart").dataset.from || e.button !== 0) return;
    e.preventDefault();
    dragFrom = toSvgX(e);
  });
  $("chart").addEventListener("mousemove", (e) => {
    const rect = document.getElementById("zoom-rect");
    if (dragFrom === null || !rect) return;
    const sx = toSvgX(e);
    rect.setAttribute("x", Math.min(sx, dragFrom));
    rect.setAttribute("width", Math.abs(sx - dragFrom));
    rect.setAttribute("visibility", "visible");
  });
  window.addEventListener("mouseup", (e) => {
    if (dragFrom === null) return;
    const sx = toSvgX(e), start = dragFrom;
    dragFrom = null;
    const rect = document.getElementById("zoom-rect");
    if (rect) rect.setAttribute("visibility", "hidden");
    if (Math.abs(sx - start) < 5) return;
    const a = timeAt(Math.min(sx, start)), b = timeAt(Math.max(sx, start));
    if (b - a < 1000) return;
    setRange(a, b);
    state.preset = 0;
    state.rawCursors = [""];
    plotOrSay();
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

// eventsView is what the events table shows: the chart's range, series
// and filter.
function eventsView(from, to) {
  return { from: from.toISOString(), to: to.toISOString(), series: state.series ?? undefined, filter: $("filter").value.trim() || undefined };
}

// followChart reloads the events table when the chart's range, series or
// filter is not the one it shows.
async function followChart() {
  const [from, to] = readRange();
  const want = eventsView(from, to), had = state.eventsQuery || {};
  if (Object.keys(want).some((k) => want[k] !== had[k])) await loadEvents(true);
}

async function loadEvents(fresh) {
  const [from, to] = readRange();
  if (fresh) {
    state.eventsQuery = { ...eventsView(from, to), limit: 50, order: "desc" };
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
  $("planner-headline").textContent = "";
  try {
    const { report: r, svg } = await api("/v1/admin/planner",
      { rate: $("plan-rate").value, item_bytes: $("plan-item").value, retention: $("plan-retention").value });
    // The recommended month as AWS bills it, line by line in r.bill.lines.
    // The headline is the recommended plan (what `timetable plan`
    // recommends), the other ways of paying below it for comparison.
    const cost = r.bill.total;
    $("planner-headline").textContent = `Recommended: ${r.period} tables, ${r.shards} shards, ${r.recommended_billing.replace("_", " ")}: $${cost.toFixed(2)} a month as billed, ${r.bill.lines.length} lines (${r.costed_at})`;
    $("planner-headline").dataset.total = cost.toFixed(2);
    const c = r.monthly_cost || {};
    const alt = [["all provisioned", c.provisioned_tiers], ["all on demand", c.on_demand], ["no tiering", c.no_tiering]].filter(([, x]) => x);
    $("planner-summary").textContent = alt.length ? "Instead: " + alt.map(([k, x]) => `${k} $${x.total.toFixed(2)}`).join(", ") + " a month." : "";
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

// drawPhysical lists the physical tables: billing and capacity on
// DynamoDB only (a Pebble table has neither), items where the store
// counts them (DynamoDB's ItemCount, refreshed by AWS about every six
// hours; the column is left out when no table has a count). A table a
// compaction rewrote into its next generation says the store's table
// that holds its events ("stored in", NAME.r1...), and one whose last
// rewrites did not verify carries a warning with why and when the next
// may start; each column is left out when no table needs it.
function drawPhysical(tables) {
  const dynamo = state.store !== "pebble";
  const counted = tables.some((t) => t.item_count !== undefined && t.item_count !== null);
  const moved = (t) => t.physical && t.physical !== t.name;
  const cols = [["table", (t) => t.name], ["family", (t) => t.family], ["tier", (t) => t.tier], ["state", (t) => t.state]];
  if (tables.some(moved)) cols.push(["stored in", (t) => moved(t) ? t.physical : ""]);
  if (tables.some((t) => t.rewrite_failed)) cols.push(["rewrite", (t) => t.rewrite_failed ? rewriteFailed(t.rewrite_failed) : ""]);
  if (dynamo) {
    cols.push(["billing", (t) => t.billing === "PAY_PER_REQUEST" ? "on demand" : t.billing === "PROVISIONED" ? "provisioned" : t.billing],
      ["read", (t) => t.billing === "PAY_PER_REQUEST" ? "" : t.read_capacity], ["write", (t) => t.billing === "PAY_PER_REQUEST" ? "" : t.write_capacity]);
  }
  if (counted) cols.push(["items", (t) => t.item_count ?? "not counted yet"]);
  const head = $("physical").tHead;
  clear(head);
  const hr = head.insertRow();
  for (const [h] of cols) {
    const th = document.createElement("th");
    th.textContent = h;
    hr.appendChild(th);
  }
  const body = $("physical").tBodies[0];
  clear(body);
  for (const t of tables) {
    const r = body.insertRow();
    r.dataset.table = t.name;
    if (moved(t)) r.dataset.physical = t.physical;
    if (t.rewrite_failed) r.dataset.rewriteFailed = t.rewrite_failed;
    for (const [, v] of cols) {
      const x = v(t);
      const c = r.insertCell();
      if (x instanceof Node) c.appendChild(x); else c.textContent = String(x ?? "");
    }
  }
  $("physical").dataset.columns = cols.map(([h]) => h).join(",");
  $("physical").dataset.store = state.store || "";
}

// rewriteFailed is the warning of a table whose rewrites did not verify:
// a badge, then the server's words (how many, when, why, the next retry).
function rewriteFailed(why) {
  const span = document.createElement("span");
  const badge = document.createElement("span");
  badge.className = "badge warn";
  badge.textContent = "rewrite failed";
  span.append(badge, " ", why);
  span.title = why;
  return span;
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
  ["DynamoDB throttles", (s) => sum(s, "timetable_dynamodb_throttles_total"), null, null, "dynamodb"],
  ["reads refused, query budget full", (s) => sum(s, "timetable_query_budget_exhausted_total")],
  ["lifecycle cycles", (s) => byLabel(s, "timetable_lifecycle_cycles_total", ["result"])],
  ["lifecycle actions", (s) => byLabel(s, "timetable_lifecycle_actions_total", ["action", "result"])],
  ["last lifecycle cycle", (s) => { const v = sum(s, "timetable_lifecycle_last_cycle_timestamp_seconds"); return v ? formatTime(new Date(v * 1000)) : "none"; }],
];

function sum(samples, name, keep) {
  return samples.filter((x) => x.name === name && (!keep || keep(x.labels))).reduce((a, x) => a + x.value, 0);
}

// byLabel sums the samples of name by the values of labels: "ok 2,
// failed 1" (a label a sample lacks reads "(none)").
function byLabel(samples, name, labels) {
  const by = new Map();
  for (const x of samples.filter((x) => x.name === name)) {
    const k = labels.map((l) => x.labels[l] || "(none)").join(" ");
    by.set(k, (by.get(k) || 0) + x.value);
  }
  return by.size ? [...by].map(([k, v]) => `${k} ${v}`).join(", ") : "0";
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
    for (const [label, value, rate, rateLabel, store] of metricRows) {
      if (store && state.store && state.store !== store) continue;
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
