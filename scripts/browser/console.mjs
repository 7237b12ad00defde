// console.mjs drives the web console in Debian's chromium for the
// server's end-to-end test (server/console_test.go), and prints what the
// pages showed as JSON. Arguments come as one JSON object in argv[2]:
// {url, key, admin, tenant, table, table2, prefix, series, field, field2,
// unit, from, to, rawFrom, rawTo, refreshSeries, refreshField,
// refreshFrom, refreshTo, newTime, newValue, topField, topFrom, topTo, topFilter,
// busy, busyFrom, busyTo, shots}, or {operatorOnly, url, admin, shots}
// for the operator view alone; PLAYWRIGHT_DIR names the folder scripts/browser/install.sh
// printed.
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const arg = JSON.parse(process.argv[2]);
const { chromium } = await import(pathToFileURL(join(process.env.PLAYWRIGHT_DIR, "node_modules/playwright-core/index.mjs")).href);
const browser = await chromium.launch({
  executablePath: "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
});
const out = {};
const errors = [];
try {
  // bypassCSP lets waitForFunction evaluate its predicates: the console
  // forbids eval, as it should.
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
  page.setDefaultTimeout(20000);
  page.on("pageerror", (e) => errors.push(String(e)));
  // The browser logs every answer that is not a 2xx; signing in asks
  // as a tenant first, so a 401 is expected there.
  page.on("console", (m) => { if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) errors.push(m.text()); });
  page.on("response", (r) => { if (r.status() >= 500 || r.status() === 404) errors.push(`${r.status()} ${r.url()}`); });

  // operatorFigures is what the operator view shows of the store: the
  // physical tables' columns and cells, each row's table, the table
  // holding its events and its rewrite warning, the metrics' rows.
  const operatorFigures = async () => ({
    store: await page.getAttribute("#physical", "data-store"),
    columns: (await page.getAttribute("#physical", "data-columns")).split(","),
    cells: await page.$$eval("#physical tbody td", (cs) => cs.map((c) => c.textContent)),
    rows: await page.$$eval("#physical tbody tr", (rs) => rs.map((r) => ({
      table: r.dataset.table, physical: r.dataset.physical || "", rewriteFailed: r.dataset.rewriteFailed || "",
      badge: r.querySelector(".badge.warn")?.textContent || "",
    }))),
    metrics: Object.fromEntries(await page.$$eval("#metrics tbody tr", (rs) => rs.map((r) => [r.dataset.metric, r.cells[1].textContent]))),
  });
  const signIn = async (key, hash) => {
    if (hash) await page.goto("about:blank");
    await page.goto(arg.url + "/" + (hash || ""));
    await page.fill("#key", key);
    await page.click("#signin-button");
  };

  if (arg.operatorOnly) {
    // The operator view alone, on the store the server runs on.
    await signIn(arg.admin);
    await page.waitForSelector("#operator-view:not([hidden])");
    await page.waitForSelector("#physical[data-columns]");
    await page.waitForFunction(() => Number(document.getElementById("metrics").dataset.read || 0) >= 1);
    out.operator = await operatorFigures();
    await page.screenshot({ path: join(arg.shots, arg.shot), fullPage: true });
    out.errors = errors;
    console.log(JSON.stringify(out));
    process.exit(0);
  }
  if (arg.scale) {
    // Many series and tables: the series come a page at a time, the
    // timeline shows every table.
    await signIn(arg.key);
    await page.waitForSelector("#tenant-view:not([hidden])");
    await page.click(`#tables li[data-table="${arg.table}"]`);
    await page.fill("#series-prefix", arg.prefix);
    await page.waitForFunction((p) => {
      const ls = [...document.querySelectorAll("#series li")];
      return ls.length > 0 && ls.every((l) => l.dataset.series.startsWith(p));
    }, arg.prefix);
    out.firstPage = await page.$$eval("#series li", (ls) => ls.length);
    await page.click("#series-more");
    await page.waitForFunction((n) => document.querySelectorAll("#series li").length > n, out.firstPage);
    out.twoPages = await page.$$eval("#series li", (ls) => ls.map((l) => l.dataset.series));
    await signIn(arg.admin);
    await page.waitForSelector("#timeline td[data-table]");
    out.cells = await page.$$eval("#timeline td[data-table]", (ts) => ts.length);
    out.rows = await page.$$eval("#physical tbody tr", (rs) => rs.length);
    await page.screenshot({ path: join(arg.shots, "operator-500-tables.png") });
    out.errors = errors;
    console.log(JSON.stringify(out));
    process.exit(0);
  }
  const points = async () => page.$$eval("#chart circle", (cs) => cs.map((c) => ({ t: c.dataset.t, v: Number(c.dataset.v) })));

  // idle waits until no plot is under way; replot clicks Plot and waits
  // for its chart.
  const idle = () => page.waitForFunction(() => (document.getElementById("chart").dataset.busy || "0") === "0");
  const replot = async () => {
    await idle();
    const n = Number((await page.getAttribute("#chart", "data-plot")) || 0);
    await page.click("#plot");
    await page.waitForFunction((n) => Number(document.getElementById("chart").dataset.plot || 0) > n, n);
    await idle();
  };
  const chartState = async () => ({
    mode: await page.getAttribute("#chart", "data-mode"),
    bucket: await page.getAttribute("#chart", "data-bucket"),
    last: await page.getAttribute("#chart", "data-last"),
    lastEnd: await page.getAttribute("#chart", "data-last-end"),
    from: await page.inputValue("#from"),
    to: await page.inputValue("#to"),
    legend: await page.$$eval("#legend .legend-item:not(.legend-others)", (ls) => ls.map((l) => l.textContent)),
    others: await page.$$eval("#legend .legend-others", (ls) => ls.map((l) => l.textContent).join("")),
    lines: await page.$$eval("#chart g.line", (gs) => gs.map((g) => ({ label: g.dataset.label, other: g.classList.contains("other"), points: g.querySelectorAll("circle").length }))),
    caption: await page.textContent("#chart-mode"),
    error: await page.textContent("#chart-error"),
    hash: await page.evaluate(() => location.hash),
    yTop: await page.$$eval("#chart .y-tick", (ts) => Math.max(...ts.map((t) => Number(t.dataset.v)))),
    vTop: await page.$$eval("#chart circle", (cs) => Math.max(...cs.map((c) => Number(c.dataset.v)))),
  });
  const axes = async () => ({
    xTicks: await page.$$eval("#chart .x-tick", (ts) => ts.map((t) => ({ t: t.dataset.t, label: t.querySelector("text").textContent }))),
    yTicks: await page.$$eval("#chart .y-tick", (ts) => ts.map((t) => ({ v: Number(t.dataset.v), label: t.querySelector("text").textContent }))),
    xTitle: await page.textContent("#chart .x-title"),
    yTitle: await page.textContent("#chart .y-title"),
  });

  // The tenant view: picking a table lists its series and charts its
  // newest day; find a series among many by prefix, chart a field.
  await signIn(arg.key);
  await page.waitForSelector("#tenant-view:not([hidden])");
  await page.click(`#tables li[data-table="${arg.table}"]`);
  await page.waitForSelector("#series li");
  await page.waitForFunction(() => Number(document.getElementById("chart").dataset.plot || 0) > 0);
  await idle();
  out.tablePick = {
    series: await page.$$eval("#series li", (ls) => ls.length),
    field: await page.inputValue("#field"),
    to: await page.inputValue("#to"),
    points: Number(await page.getAttribute("#chart", "data-points")),
    error: await page.textContent("#chart-error"),
    chart: await chartState(),
  };
  // Every series, top 10 by value, the rest in grey; then by events.
  await page.fill("#field", arg.topField);
  await page.fill("#from", arg.topFrom);
  await page.fill("#to", arg.topTo);
  await replot();
  out.top = await chartState();
  // A click on a legend item hides its line.
  await page.click(`#legend .legend-item[data-label="${out.top.legend[0]}"]`);
  out.hidden = await page.$$eval("#chart g.line[visibility=hidden]", (gs) => gs.map((g) => g.dataset.label));
  await page.click(`#legend .legend-item[data-label="${out.top.legend[0]}"]`);
  out.hiddenAfter = await page.$$eval("#chart g.line[visibility=hidden]", (gs) => gs.map((g) => g.dataset.label));
  await page.screenshot({ path: join(arg.shots, "tenant-every-series.png"), fullPage: true });
  await page.selectOption("#rank", "count");
  await idle();
  await replot();
  out.topByCount = await chartState();
  await page.selectOption("#rank", "value");
  await idle();
  // A filter: the series whose temp is at least 295.
  await page.fill("#filter", arg.topFilter);
  await replot();
  out.filtered = await chartState();
  out.filteredEvents = await page.$$eval("#events tbody tr", (rs) => rs.map((r) => r.cells[1].textContent));
  await page.fill("#filter", "");
  await replot();
  // Drag to zoom: across the middle half of the plot area.
  {
    const box = await (await page.$("#chart")).boundingBox();
    const sx = (v) => box.x + (v / 900) * box.width, y = box.y + box.height / 2;
    const n = Number((await page.getAttribute("#chart", "data-plot")) || 0);
    await page.mouse.move(sx(70 + 0.25 * 810), y);
    await page.mouse.down();
    await page.mouse.move(sx(70 + 0.5 * 810), y, { steps: 5 });
    await page.mouse.move(sx(70 + 0.75 * 810), y, { steps: 5 });
    await page.mouse.up();
    await page.waitForFunction((n) => Number(document.getElementById("chart").dataset.plot || 0) > n, n);
    await idle();
    out.zoomed = await chartState();
    await page.screenshot({ path: join(arg.shots, "tenant-zoomed.png"), fullPage: true });
  }
  // The view's link: a fresh page opened on it, signed in, shows it.
  {
    const hash = out.zoomed.hash;
    await signIn(arg.key, hash);
    await page.waitForSelector("#tenant-view:not([hidden])");
    await page.waitForFunction(() => Number(document.getElementById("chart").dataset.plot || 0) > 0);
    await idle();
    out.restored = { ...(await chartState()), field: await page.inputValue("#field") };
    // Another link pasted into the signed-in page: the top 5.
    const n = Number((await page.getAttribute("#chart", "data-plot")) || 0);
    await page.evaluate((h) => { location.hash = h; }, out.restored.hash.replace("top=10", "top=5"));
    await page.waitForFunction((n) => Number(document.getElementById("chart").dataset.plot || 0) > n, n);
    await idle();
    out.pasted = await chartState();
  }
  // The newest event of a busy table's range is on the chart, aggregated
  // and raw; raw pages say which events they show.
  await page.click(`#tables li[data-table="${arg.busy}"]`);
  await page.waitForFunction(() => Number(document.getElementById("chart").dataset.plot || 0) > 0);
  await idle();
  await page.fill("#field", "v");
  await page.fill("#from", arg.busyFrom);
  await page.fill("#to", arg.busyTo);
  await replot();
  out.busy = await chartState();
  await page.selectOption("#mode", "raw");
  await idle();
  await replot();
  out.busyRaw = { ...(await chartState()), first: await page.getAttribute("#chart", "data-raw-first"), count: await page.getAttribute("#chart", "data-raw-count"), total: await page.getAttribute("#chart", "data-raw-total") };
  await page.screenshot({ path: join(arg.shots, "tenant-raw.png"), fullPage: true });
  {
    const n = Number((await page.getAttribute("#chart", "data-plot")) || 0);
    await page.click("#raw-older");
    await page.waitForFunction((n) => Number(document.getElementById("chart").dataset.plot || 0) > n, n);
    await idle();
  }
  out.busyOlder = { ...(await chartState()), first: await page.getAttribute("#chart", "data-raw-first"), count: await page.getAttribute("#chart", "data-raw-count"), older: await page.isVisible("#raw-older"), newer: await page.isVisible("#raw-newer") };
  await page.selectOption("#mode", "aggregate");
  await idle();
  await page.click(`#tables li[data-table="${arg.table}"]`);
  await page.waitForFunction(() => Number(document.getElementById("chart").dataset.plot || 0) > 0);
  await idle();
  await page.fill("#series-prefix", arg.prefix);
  await page.waitForFunction((p) => {
    const ls = [...document.querySelectorAll("#series li")];
    return ls.length > 0 && ls.every((l) => l.dataset.series.startsWith(p));
  }, arg.prefix);
  out.seriesShown = await page.$$eval("#series li", (ls) => ls.map((l) => l.dataset.series));
  await page.click(`#series li[data-series="${arg.series}"]`);
  await page.waitForSelector("#events tbody tr");
  await idle();
  out.eventRows = await page.$$eval("#events tbody tr", (rs) => rs.length);
  await page.fill("#field", arg.field);
  await page.fill("#unit", arg.unit);
  await page.fill("#from", arg.from);
  await page.fill("#to", arg.to);
  await replot();
  out.aggregate = { mode: await page.getAttribute("#chart", "data-mode"), bucket: await page.getAttribute("#chart", "data-bucket"), points: await points(), ...(await axes()) };
  // The tooltip of the point under the pointer.
  const first = await page.$("#chart circle");
  const box = await first.boundingBox();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
  await page.waitForSelector("#tooltip:not([hidden])");
  out.tooltip = await page.textContent("#tooltip");
  await page.screenshot({ path: join(arg.shots, "tenant.png"), fullPage: true });
  await page.mouse.move(0, 0);
  // Two fields, the function and bucket chosen.
  await page.fill("#field", arg.field + "," + arg.field2);
  await page.selectOption("#fn", "max");
  await idle();
  await page.selectOption("#bucket", "6h");
  await idle();
  await replot();
  out.two = {
    mode: await page.getAttribute("#chart", "data-mode"), bucket: await page.getAttribute("#chart", "data-bucket"),
    lines: await page.$$eval("#chart g.line", (gs) => Object.fromEntries(gs.map((g) => [g.dataset.field,
      [...g.querySelectorAll("circle")].map((c) => ({ t: c.dataset.t, v: Number(c.dataset.v) }))]))),
    legend: await page.$$eval("#legend .legend-item", (ls) => ls.map((l) => l.textContent)),
    yTitle: await page.textContent("#chart .y-title"),
  };
  await page.screenshot({ path: join(arg.shots, "tenant-two-fields.png"), fullPage: true });
  // Raw events over a short range.
  await page.fill("#field", arg.field);
  await page.selectOption("#bucket", "auto");
  await idle();
  await page.selectOption("#mode", "raw");
  await idle();
  await page.fill("#from", arg.rawFrom);
  await page.fill("#to", arg.rawTo);
  await replot();
  out.events = await points();
  out.eventsMode = await page.getAttribute("#chart", "data-mode");
  out.eventsCaption = await page.textContent("#chart-mode");
  out.eventsAxes = await axes();
  await page.selectOption("#mode", "aggregate");
  await idle();
  // Errors replace the chart: a field with no values, an inverted range.
  await page.fill("#field", "nope");
  await replot();
  out.unknownField = { error: await page.textContent("#chart-error"), circles: await page.$$eval("#chart circle", (cs) => cs.length),
    caption: await page.textContent("#chart-mode"), chartHidden: await page.$eval("#chart-box", (b) => b.hidden) };
  await page.screenshot({ path: join(arg.shots, "tenant-error.png"), fullPage: true });
  await page.fill("#field", arg.field);
  await page.fill("#from", arg.rawTo);
  await page.fill("#to", arg.rawFrom);
  await replot();
  out.inverted = { error: await page.textContent("#chart-error"), circles: await page.$$eval("#chart circle", (cs) => cs.length) };
  // A preset: the last 24 hours, ending now.
  await idle();
  const n = Number((await page.getAttribute("#chart", "data-plot")) || 0);
  await page.click('#presets button[data-hours="24"]');
  await page.waitForFunction((n) => Number(document.getElementById("chart").dataset.plot || 0) > n, n);
  out.preset = { from: await page.inputValue("#from"), to: await page.inputValue("#to"), now: await page.evaluate(() => new Date().toISOString()) };
  // Another table: the prefix box starts empty.
  await page.click(`#tables li[data-table="${arg.table2}"]`);
  await page.waitForFunction(() => [...document.querySelectorAll("#series li")].some((l) => l.dataset.series === "other-1"));
  out.otherTable = { prefix: await page.inputValue("#series-prefix"), series: await page.$$eval("#series li", (ls) => ls.map((l) => l.dataset.series)) };
  // The auto-refresh: with it on, an event written meanwhile (here by a
  // client beside the page) shows in the chart without a reload.
  await page.click(`#series li[data-series="${arg.refreshSeries}"]`);
  await idle();
  await page.fill("#field", arg.refreshField);
  await page.fill("#from", arg.refreshFrom);
  await page.fill("#to", arg.refreshTo);
  await replot();
  const beforeRefresh = await points();
  const plotsBefore = Number(await page.getAttribute("#chart", "data-plot"));
  await page.selectOption("#refresh", "10");
  const written = await fetch(arg.url + "/v1/tables/" + arg.table2 + "/events", {
    method: "POST", headers: { Authorization: "Bearer " + arg.key, "Content-Type": "application/x-ndjson" },
    body: JSON.stringify({ time: arg.newTime, series: arg.refreshSeries, fields: { [arg.refreshField]: arg.newValue } }) + "\n",
  });
  if (!written.ok) throw new Error(`writing the new event: ${written.status} ${await written.text()}`);
  await page.waitForFunction((v) => [...document.querySelectorAll("#chart circle")].some((c) => Number(c.dataset.v) === v), arg.newValue, { timeout: 30000 });
  await idle();
  out.refresh = { before: beforeRefresh, after: await points(), plotsBefore, plotsAfter: Number(await page.getAttribute("#chart", "data-plot")) };
  await page.selectOption("#refresh", "0");
  await page.screenshot({ path: join(arg.shots, "tenant-refreshed.png"), fullPage: true });

  // The operator view: the timeline's tiers, the server's metrics,
  // tenants and keys, archives.
  page.on("dialog", (d) => d.accept());
  await signIn(arg.admin);
  await page.waitForSelector("#operator-view:not([hidden])");
  await page.waitForSelector("#timeline td[data-table]");
  await page.waitForSelector("#plan[data-actions]");
  out.tiers = Object.fromEntries(await page.$$eval("#timeline td[data-table]", (ts) => ts.map((t) => [t.dataset.table, t.dataset.tier])));
  out.archivedCells = await page.$$eval("#timeline td.tier-archived", (ts) => ts.map((t) => t.dataset.table));
  out.planActions = Number(await page.getAttribute("#plan", "data-actions"));
  await page.waitForSelector("#planner-chart svg");
  out.plannerPeriod = await page.getAttribute("#planner-summary", "data-period");
  await page.waitForSelector("#metrics[data-read]");
  await page.waitForFunction(() => Number(document.getElementById("metrics").dataset.read) >= 2, null, { timeout: 15000 });
  out.metrics = Object.fromEntries(await page.$$eval("#metrics tbody tr", (rs) => rs.map((r) => [r.dataset.metric, r.cells[1].textContent])));
  out.operator = await operatorFigures();
  out.plannerHeadline = { text: await page.textContent("#planner-headline"), total: await page.getAttribute("#planner-headline", "data-total") };
  await page.waitForSelector('#tenants tr[data-tenant]');
  out.tenants = await page.$$eval("#tenants tbody tr", (rs) => rs.map((r) => r.dataset.tenant));
  await page.click(`#tenants tr[data-tenant="${arg.tenant}"] button.show-keys`);
  await page.waitForSelector("#keys[data-count]");
  const keyCount = async () => Number(await page.getAttribute("#keys", "data-count"));
  const before = await keyCount();
  const ids = async () => page.$$eval("#keys tbody tr", (rs) => rs.map((r) => r.dataset.key));
  const beforeIds = await ids();
  await page.selectOption("#key-scope", "read");
  await page.click("#key-add");
  await page.waitForFunction((n) => Number(document.getElementById("keys").dataset.count) > n, before);
  const added = await page.getAttribute("#secret", "data-secret");
  const afterAdd = await ids();
  const addedID = afterAdd.find((id) => !beforeIds.includes(id));
  await page.fill("#key-grace", "1h");
  await page.click(`#keys tr[data-key="${addedID}"] button.rotate`);
  await page.waitForFunction((n) => Number(document.getElementById("keys").dataset.count) > n, afterAdd.length);
  const rotated = await page.getAttribute("#secret", "data-secret");
  const afterRotate = await ids();
  const newest = afterRotate.find((id) => !afterAdd.includes(id));
  await page.click(`#keys tr[data-key="${newest}"] button.revoke`);
  await page.waitForSelector(`#keys tr[data-key="${newest}"][data-state="revoked"]`);
  out.keys = {
    added, rotated, before, addedID, newest,
    states: Object.fromEntries(await page.$$eval("#keys tbody tr", (rs) => rs.map((r) => [r.dataset.key, r.dataset.state]))),
  };
  out.archives = Number(await page.getAttribute("#archives", "data-count"));
  out.archiveRows = await page.$$eval("#archives tbody tr[data-table]", (rs) => rs.map((r) => ({ table: r.dataset.table, state: r.dataset.state, target: r.dataset.target, cells: [...r.cells].map((c) => c.textContent) })));
  out.operatorError = await page.textContent("#operator-error");
  await page.screenshot({ path: join(arg.shots, "operator.png"), fullPage: true });

  // A wrong key is told so, and shows nothing.
  await signIn("tt_wrong");
  await page.waitForFunction(() => document.getElementById("signin-error").textContent !== "");
  out.wrongKey = await page.textContent("#signin-error");
  out.errors = errors;
} catch (err) {
  console.error("console.mjs:", err.message, "\npage errors:", errors);
  throw err;
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
