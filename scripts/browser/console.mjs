// console.mjs drives the web console in Debian's chromium for the
// server's end-to-end test (server/console_test.go), and prints what the
// pages showed as JSON. Arguments come as one JSON object in argv[2]:
// {url, key, admin, table, prefix, series, field, from, to, rawFrom,
// rawTo, shots}; PLAYWRIGHT_DIR names the folder scripts/browser/install.sh
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
try {
  // bypassCSP lets waitForFunction evaluate its predicates: the console
  // forbids eval, as it should.
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
  page.setDefaultTimeout(20000);
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  // The browser logs every answer that is not a 2xx; signing in asks
  // as a tenant first, so a 401 is expected there.
  page.on("console", (m) => { if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) errors.push(m.text()); });
  page.on("response", (r) => { if (r.status() >= 500 || r.status() === 404) errors.push(`${r.status()} ${r.url()}`); });

  const signIn = async (key) => {
    await page.goto(arg.url + "/");
    await page.fill("#key", key);
    await page.click("#signin-button");
  };

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

  // The tenant view: find a series among many by prefix, chart a field.
  await signIn(arg.key);
  await page.waitForSelector("#tenant-view:not([hidden])");
  await page.click(`#tables li[data-table="${arg.table}"]`);
  await page.fill("#series-prefix", arg.prefix);
  await page.waitForFunction((p) => {
    const ls = [...document.querySelectorAll("#series li")];
    return ls.length > 0 && ls.every((l) => l.dataset.series.startsWith(p));
  }, arg.prefix);
  out.seriesShown = await page.$$eval("#series li", (ls) => ls.map((l) => l.dataset.series));
  await page.click(`#series li[data-series="${arg.series}"]`);
  await page.waitForSelector("#events tbody tr");
  out.eventRows = await page.$$eval("#events tbody tr", (rs) => rs.length);
  await page.fill("#field", arg.field);
  await page.fill("#from", arg.from);
  await page.fill("#to", arg.to);
  await page.click("#plot");
  await page.waitForSelector('#chart[data-mode="aggregate"][data-points]');
  out.aggregate = { bucket: await page.getAttribute("#chart", "data-bucket"), points: await points() };
  await page.screenshot({ path: join(arg.shots, "tenant.png"), fullPage: true });
  await page.fill("#from", arg.rawFrom);
  await page.fill("#to", arg.rawTo);
  await page.click("#plot");
  await page.waitForSelector('#chart[data-mode="events"][data-points]');
  out.events = await points();

  // The operator view: the timeline's tiers.
  await signIn(arg.admin);
  await page.waitForSelector("#operator-view:not([hidden])");
  await page.waitForSelector("#timeline td[data-table]");
  await page.waitForSelector("#plan[data-actions]");
  out.tiers = Object.fromEntries(await page.$$eval("#timeline td[data-table]", (ts) => ts.map((t) => [t.dataset.table, t.dataset.tier])));
  out.planActions = Number(await page.getAttribute("#plan", "data-actions"));
  await page.waitForSelector("#planner-chart svg");
  out.plannerPeriod = await page.getAttribute("#planner-summary", "data-period");
  await page.screenshot({ path: join(arg.shots, "operator.png"), fullPage: true });

  // A wrong key is told so, and shows nothing.
  await signIn("tt_wrong");
  await page.waitForFunction(() => document.getElementById("signin-error").textContent !== "");
  out.wrongKey = await page.textContent("#signin-error");
  out.errors = errors;
} finally {
  await browser.close();
}
console.log(JSON.stringify(out));
