// timetable's web console: see package console's documentation.
"use strict";

const $ = (id) => document.getElementById(id);
const state = { key: "", table: "", series: null, seriesCursor: "", eventsCursor: "", eventsQuery: null };

// api calls the server with the signed-in key and returns the decoded
// JSON body, or throws an Error with the server's reason.
async function api(path, params) {
  const url = new URL(path, location.origin);
  for (const [k, v] of Object.entries(params || {})) {
    if (v !== undefined && v !== null && v !== "") url.searchParams.set(k, v);
  }
  const res = await fetch(url, { headers: { Authorization: "Bearer " + state.key } });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) {
    const err = new Error(body.error || res.status + " " + res.statusText);
    err.status = res.status;
    throw err;
  }
  return body;
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
  $("chart-title").textContent = t.name;
  // The range defaults to the table's last day of events.
  const last = t.last ? new Date(t.last) : new Date();
  setRange(new Date(last.getTime() - 24 * 3600e3), last);
  loadSeries(true);
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
  await loadEvents(true);
  if (!$("field").value) {
    // The first numeric field of the events shown.
    const first = (state.lastEvents || []).find((e) => Object.values(e.fields || {}).some((v) => typeof v === "number"));
    if (first) $("field").value = Object.keys(first.fields).find((k) => typeof first.fields[k] === "number");
  }
}

// The chart.

const buckets = [["1m", 60], ["5m", 300], ["15m", 900], ["30m", 1800], ["1h", 3600], ["3h", 10800], ["6h", 21600], ["12h", 43200], ["1d", 86400]];
const maxPoints = 500, maxEvents = 5000, rawSpan = 6 * 3600e3;

$("chart-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  $("chart-error").textContent = "";
  try {
    await plot();
  } catch (err) {
    $("chart-error").textContent = err.message;
  }
});

async function plot() {
  const [from, to] = readRange();
  const field = $("field").value.trim();
  const series = state.series || undefined;
  let points;
  if (to - from > rawSpan) {
    const seconds = (to - from) / 1000;
    const [bucket] = buckets.find(([, s]) => seconds / s <= maxPoints) || buckets[buckets.length - 1];
    const body = await api(`/v1/tables/${encodeURIComponent(state.table)}/aggregate`,
      { from: from.toISOString(), to: to.toISOString(), series, bucket, fields: field, fn: "avg" });
    points = body.buckets.filter((b) => b.values[field] && b.values[field].avg !== undefined)
      .map((b) => ({ t: b.start, v: Number(b.values[field].avg) }));
    $("chart-mode").textContent = `aggregate: avg of ${field} per ${bucket}`;
    $("chart").dataset.mode = "aggregate";
    $("chart").dataset.bucket = bucket;
  } else {
    points = [];
    let cursor = "";
    do {
      const page = await api(`/v1/tables/${encodeURIComponent(state.table)}/events`,
        { from: from.toISOString(), to: to.toISOString(), series, fields: field, limit: 1000, cursor });
      for (const ev of page.events) {
        if (typeof ev.fields[field] === "number") points.push({ t: ev.time, v: ev.fields[field] });
      }
      cursor = page.next_cursor || "";
    } while (cursor && points.length < maxEvents);
    $("chart-mode").textContent = `events: ${field}, ${points.length} points`;
    $("chart").dataset.mode = "events";
    delete $("chart").dataset.bucket;
  }
  draw(points, from, to);
}

function draw(points, from, to) {
  const svg = $("chart");
  clear(svg);
  svg.dataset.points = String(points.length);
  if (points.length === 0) return;
  const ns = "http://www.w3.org/2000/svg";
  const vs = points.map((p) => p.v);
  const lo = Math.min(...vs), hi = Math.max(...vs);
  const x = (t) => ((new Date(t) - from) / Math.max(to - from, 1)) * 800;
  const y = (v) => 290 - (hi === lo ? 140 : ((v - lo) / (hi - lo)) * 280);
  const line = document.createElementNS(ns, "polyline");
  line.setAttribute("points", points.map((p) => `${x(p.t).toFixed(1)},${y(p.v).toFixed(1)}`).join(" "));
  svg.appendChild(line);
  for (const p of points) {
    const c = document.createElementNS(ns, "circle");
    c.setAttribute("cx", x(p.t).toFixed(1));
    c.setAttribute("cy", y(p.v).toFixed(1));
    c.setAttribute("r", "2");
    c.dataset.t = p.t;
    c.dataset.v = String(p.v);
    const title = document.createElementNS(ns, "title");
    title.textContent = `${p.t}: ${p.v}`;
    c.appendChild(title);
    svg.appendChild(c);
  }
}

// The events table.

$("events-next").addEventListener("click", () => loadEvents(false));

async function loadEvents(fresh) {
  const [from, to] = readRange();
  if (fresh) {
    state.eventsQuery = { from: from.toISOString(), to: to.toISOString(), series: state.series || undefined, limit: 50, order: "desc" };
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
  try {
    const { tables } = await api("/v1/admin/tables");
    drawTimeline(tables);
    drawPhysical(tables);
  } catch (err) {
    $("operator-error").textContent = err.message;
  }
  try {
    const { last_cycle: c } = await api("/v1/admin/lifecycle");
    $("cycle").textContent = c ? `${c.start || ""} ${c.outcome || ""}: ${(c.actions || []).length} actions` : "no cycle has run in this server yet";
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
    const cost = r.monthly_cost[r.recommended_billing === "on_demand" ? "on_demand" : "provisioned_tiers"].total;
    $("planner-summary").textContent = `${r.period} tables, ${r.shards} shards, ${r.recommended_billing.replace("_", " ")}: $${cost.toFixed(2)} a month (${r.costed_at})`;
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
        html += t
          ? `<td class="tier-${esc(t.tier)}" data-table="${esc(t.name)}" data-tier="${esc(t.tier)}" title="${esc(t.name)}: ${esc(t.tier)}, ${esc(t.state)}"></td>`
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
