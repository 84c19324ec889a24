// browser.js - the e2e tests' browser checks, run with node.
//
// Uses playwright-core (npm) to drive Debian's chromium headless; both are
// looked up in $NPM_DIR/node_modules (build/npm by default). Commands:
//   node browser.js schema SCHEMA.json FILE.json
//       validate FILE against a JSON schema (ajv); prints errors, exits 1
//   node browser.js speedscope DIST_DIR FILE.json TEXT
//       serve speedscope's release files and FILE on 127.0.0.1, open
//       speedscope with #profileURL=..., fail on page errors or a failed
//       import, and wait for TEXT in the page's text (frames are drawn on
//       a canvas; the profile's name, e.g. the thread, is in the toolbar)
//   node browser.js page URL OUT.png TEXT [FUNC CALLER]
//       open URL, wait for TEXT in the page or its frames, screenshot;
//       with FUNC: click FUNC's row in the top table and wait for its
//       annotate panel (disassembly with samples), then hover CALLER's
//       frame in the flamegraph (its details line and tooltip must say
//       "CALLER (N samples, P%)"), click it and wait for the panel to show
//       CALLER;
//       the screenshot is taken with FUNC's annotation open
//   node browser.js svg FILE.svg NAME DETAILS
//       open a flamegraph SVG from disk; hovering NAME's first frame
//       shows DETAILS (e.g. "leaf_b (N samples, P%)") in the details line
//       and in the script's tooltip, which lies inside the drawing; the
//       file has no <title> elements; a click zooms the frame to the full
//       width, labelled NAME, a search for NAME matches 100% of it, and
//       Escape unzooms
//   node browser.js offcpu URL OUT.png REASON
//       stax serve of an off-CPU recording: the threads table has the
//       off-CPU columns with REASON, and the "wall time" flamegraph has
//       an "[off-cpu: REASON]" frame
//   node browser.js wakers URL OUT.png FUNC WAKER
//       stax serve of a recording with wakers: in the "off-CPU"
//       flamegraph, clicking FUNC's frame shows the "woken by" panel,
//       with WAKER among its waking functions
//   node browser.js timeline URL OUT.png FIRST SECOND
//       stax serve of a recording whose hot function changes from FIRST
//       to SECOND half-way: the timeline canvas is drawn; dragging over
//       the first half puts FIRST on top of the table, over the second
//       half SECOND; the flamegraph's root frame is visible in its panel
//       without scrolling; clicking a row fills the callers/callees
//       panel; the icicle toggle reloads the graph root at the top
// Every command exits 0 on success, 1 on a failed check, 2 when the
// browser cannot run (the caller turns that into a skip).
"use strict";
const path = require("path");
const fs = require("fs");
const http = require("http");
const npm = process.env.NPM_DIR || path.join(__dirname, "../../build/npm");
function need(name) {
  try { return require(path.join(npm, "node_modules", name)); }
  catch (e) { console.log("cannot load " + name + " from " + npm + ": " + e.message); process.exit(2); }
}
const [cmd, a1, a2, a3, a4, a5] = process.argv.slice(2);

// The end of every check: close the browser, print the errors (status 1)
// or what was seen (status 0).
async function finish(browser, errors, out) {
  await browser.close();
  if (errors.length) { console.log(errors.join("\n")); return 1; }
  console.log(out);
  return 0;
}

async function launch() {
  const { chromium } = need("playwright-core");
  const exe = process.env.CHROMIUM || "/usr/bin/chromium";
  try {
    return await chromium.launch({ executablePath: exe, args: ["--no-sandbox", "--disable-gpu"] });
  } catch (e) {
    console.log("cannot start " + exe + ": " + e.message.split("\n")[0]);
    process.exit(2);
  }
}

function schema() {
  const Ajv = need("ajv");
  const ajv = new Ajv({ allErrors: true, strict: false });
  const validate = ajv.compile(JSON.parse(fs.readFileSync(a1, "utf8")));
  const data = JSON.parse(fs.readFileSync(a2, "utf8"));
  if (validate(data)) { console.log("valid"); return 0; }
  console.log(JSON.stringify(validate.errors.slice(0, 5)));
  return 1;
}

function serveDir(dir, extra) {
  return new Promise((resolve) => {
    const srv = http.createServer((req, res) => {
      const u = decodeURIComponent(req.url.split("?")[0].split("#")[0]);
      const f = u === "/profile.json" ? extra : path.join(dir, path.normalize(u === "/" ? "/index.html" : u));
      fs.readFile(f, (err, data) => {
        if (err) { res.writeHead(404); res.end(); return; }
        const types = { ".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".json": "application/json", ".wasm": "application/wasm" };
        res.writeHead(200, { "Content-Type": types[path.extname(f)] || "application/octet-stream" });
        res.end(data);
      });
    });
    srv.listen(0, "127.0.0.1", () => resolve(srv));
  });
}

async function speedscope() {
  const srv = await serveDir(a1, a2);
  const browser = await launch();
  const page = await browser.newPage({ viewport: { width: 1200, height: 700 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push("page error: " + e.message));
  page.on("console", (m) => { if (m.type() === "error") errors.push("console: " + m.text()); });
  page.on("dialog", (d) => { errors.push("dialog: " + d.message()); d.dismiss(); });
  const url = "http://127.0.0.1:" + srv.address().port + "/index.html#profileURL=" +
    encodeURIComponent("http://127.0.0.1:" + srv.address().port + "/profile.json");
  let rc = 0;
  try {
    await page.goto(url);
    await page.waitForFunction((t) => document.body.innerText.includes(t), a3, { timeout: 20000 });
    await page.waitForTimeout(500);
    if (process.env.SHOT) await page.screenshot({ path: process.env.SHOT });
    const text = await page.evaluate(() => document.body.innerText);
    if (/Something went wrong|Unrecognized format|Failed to/i.test(text)) errors.push("speedscope says: " + text.slice(0, 200));
  } catch (e) {
    errors.push("'" + a3 + "' never appeared: " + e.message.split("\n")[0]);
    if (process.env.SHOT) await page.screenshot({ path: process.env.SHOT });
  }
  if (errors.length) { console.log(errors.join("\n")); rc = 1; } else console.log("loaded");
  await browser.close();
  srv.close();
  return rc;
}

async function pageCheck() {
  const browser = await launch();
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push("page error: " + e.message));
  page.on("console", (m) => { if (m.type() === "error") errors.push("console: " + m.text()); });
  let rc = 0;
  try {
    await page.goto(a1);
    const deadline = Date.now() + 20000;
    let found = false;
    while (!found && Date.now() < deadline) {
      for (const fr of page.frames()) {
        const t = await fr.evaluate(() => document.documentElement.textContent || "").catch(() => "");
        if (t.includes(a3)) found = true;
      }
      if (!found) await page.waitForTimeout(200);
    }
    await page.waitForTimeout(700);
    let ann = "";
    if (a4 && found) ann = await annotateCheck(page, errors);
    await page.screenshot({ path: a2, fullPage: true });
    if (a4 && found && !errors.length) ann += ", " + await flameClickCheck(page, errors);
    if (!found) errors.push("'" + a3 + "' not visible in the page or its frames");
    // the hot function must be drawn as a flamegraph frame label too
    const fl = page.frames().find((f) => f.url().includes("flame.svg"));
    const labels = fl ? await fl.evaluate(() => Array.from(document.querySelectorAll("g.f text")).map((t) => t.textContent)) : [];
    if (!labels.some((l) => l.includes(a3))) errors.push("no flamegraph frame labelled '" + a3 + "' (" + labels.length + " labels)");
    const rows = await page.evaluate(() => document.querySelectorAll("#top tbody tr").length);
    if (rows < 1) errors.push("the top table is empty");
    console.log("labels " + labels.filter((l) => l).length + ", top rows " + rows + (ann ? "; " + ann : ""));
  } catch (e) {
    errors.push(e.message.split("\n")[0]);
  }
  if (errors.length) { console.log(errors.join("\n")); rc = 1; }
  await browser.close();
  return rc;
}

// The annotate panel after a click on a4's row in the top table: the
// function's name, instructions, and the hottest one's share.
async function annotateCheck(page, errors) {
  const row = page.locator("#top tbody tr", { has: page.locator("td.n", { hasText: new RegExp("^" + a4 + "$") }) });
  if (await row.count() < 1) { errors.push("no top table row for " + a4); return ""; }
  await row.first().click();
  try {
    await page.waitForSelector("#anntable tbody tr", { timeout: 15000 });
  } catch (e) {
    errors.push("no annotate table after clicking " + a4 + ": " + (await page.textContent("#annbody")));
    return "";
  }
  const r = await page.evaluate(() => {
    const rows = Array.from(document.querySelectorAll("#anntable tbody tr:not(.src)"));
    let best = 0;
    for (const tr of rows) best = Math.max(best, parseFloat(tr.cells[0].textContent) || 0);
    return { name: document.getElementById("annname").textContent, head: document.getElementById("annbody").firstChild.textContent,
             insns: rows.length, src: document.querySelectorAll("#anntable tr.src").length, best };
  });
  if (r.name !== a4 || !r.head.startsWith(a4)) errors.push("annotate panel shows '" + r.name + "' / '" + r.head.slice(0, 60) + "', not " + a4);
  if (r.insns < 2 || r.best <= 0) errors.push("annotate of " + a4 + ": " + r.insns + " instructions, hottest " + r.best + "%");
  return "annotate " + a4 + ": " + r.insns + " instructions, " + r.src + " source lines, hottest " + r.best + "%";
}

// The first frame named name in a stax flamegraph (frame fl), found by
// the names table the SVG's script reads.
async function frameNamed(fl, name) {
  const n = await fl.evaluate((x) => (typeof data === "object" && data.names ? data.names.indexOf(x) : -2), name);
  return n < 0 ? null : fl.locator('g.f[n="' + n + '"]').first();
}

// What hovering g shows: the details line, the tooltip and whether the
// tooltip is visible inside the drawing.
async function hoverText(fl, g) {
  await g.hover();
  return fl.evaluate(() => {
    const tip = document.getElementById("tip"), b = tip.getBoundingClientRect();
    const svg = document.documentElement.getBoundingClientRect();
    return { details: document.getElementById("details").textContent, tip: tip.textContent,
             shown: getComputedStyle(tip).display !== "none" && b.width > 20,
             inside: b.left >= svg.left && b.right <= svg.right && b.top >= svg.top && b.bottom <= svg.bottom };
  });
}

// Hovering a5's frame in the flamegraph describes it; clicking it
// annotates a5.
async function flameClickCheck(page, errors) {
  const fl = page.frames().find((f) => f.url().includes("flame.svg"));
  if (!fl) { errors.push("no flamegraph frame"); return ""; }
  const g = await frameNamed(fl, a5);
  if (!g) { errors.push("no flamegraph frame for " + a5); return ""; }
  const h = await hoverText(fl, g);
  if (!new RegExp("^" + a5 + " \\(\\d+ samples, \\d+\\.\\d\\d%\\)$").test(h.details) || h.tip !== h.details || !h.shown || !h.inside)
    errors.push("hovering " + a5 + " in the flamegraph: details '" + h.details + "', tooltip '" + h.tip + "' (" +
      (h.shown ? "shown" : "hidden") + ", " + (h.inside ? "inside" : "outside") + ")");
  await g.click();
  try {
    await page.waitForFunction((n) => document.getElementById("annname").textContent === n &&
      document.querySelector("#annbody b") && document.querySelector("#annbody b").textContent === n, a5, { timeout: 15000 });
  } catch (e) {
    errors.push("clicking " + a5 + " in the flamegraph did not annotate it: '" + (await page.textContent("#annbody")).slice(0, 120) + "'");
    return "";
  }
  return "flamegraph hover says '" + h.details + "', click annotates " + a5;
}

async function svgCheck() {
  const browser = await launch();
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push("page error: " + e.message));
  page.on("console", (m) => { if (m.type() === "error") errors.push("console: " + m.text()); });
  page.on("dialog", (d) => { errors.push("dialog: " + d.message()); d.dismiss(); });
  let out = "";
  try {
    await page.goto("file://" + path.resolve(a1));
    const g = await frameNamed(page.mainFrame(), a2);
    if (!g) throw new Error("no frame named " + a2 + " in the names table");
    const titles = await page.evaluate(() => document.getElementsByTagName("title").length);
    if (titles) errors.push(titles + " <title> elements");
    const h = await hoverText(page.mainFrame(), g);
    if (h.details !== a3 || h.tip !== a3 || !h.shown || !h.inside)
      errors.push("hovering " + a2 + ": details '" + h.details + "', tooltip '" + h.tip + "' (" + (h.shown ? "shown" : "hidden") +
        ", " + (h.inside ? "inside" : "outside") + "), expected '" + a3 + "'");
    const geo = () => g.evaluate((e) => ({ w: +e.querySelector("rect").getAttribute("width"),
      label: e.querySelector("text") ? e.querySelector("text").textContent : "" }));
    const before = await geo();
    await g.click();
    const zoomed = await geo();
    if (Math.abs(zoomed.w - 1180) > 0.5 || zoomed.label !== a2) errors.push("zoomed " + a2 + ": width " + zoomed.w + ", label '" + zoomed.label + "'");
    await page.evaluate((n) => search("^" + n + "$"), a2);
    const matched = await page.textContent("#matched");
    if (matched !== "Matched: 100.0%") errors.push("search for " + a2 + " when zoomed into it: '" + matched + "'");
    await page.keyboard.press("Escape");
    const after = await geo();
    if (Math.abs(after.w - before.w) > 0.01) errors.push("unzoomed " + a2 + ": width " + after.w + ", was " + before.w);
    out = "hover: '" + h.details + "' in the details line and tooltip; zoom to " + zoomed.w + " px; " + matched;
  } catch (e) {
    errors.push(e.message.split("\n")[0]);
  }
  return finish(browser, errors, out);
}

async function timelineCheck() {
  const browser = await launch();
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push("page error: " + e.message));
  page.on("console", (m) => { if (m.type() === "error") errors.push("console: " + m.text()); });
  let out = "";
  const firstRow = () => page.evaluate(() => {
    const r = document.querySelector("#top tbody tr");
    return r ? r.cells[4].textContent + " " + r.cells[2].textContent : "";
  });
  async function drag(f0, f1, want) {
    const box = await page.locator("#tl").boundingBox();
    const x = (f) => box.x + 160 + f * (box.width - 160);
    await page.mouse.move(x(f0), box.y + 6);
    await page.mouse.down();
    await page.mouse.move(x((f0 + f1) / 2), box.y + 6, { steps: 4 });
    await page.mouse.move(x(f1), box.y + 6, { steps: 4 });
    await page.mouse.up();
    await page.waitForFunction((w) => {
      const r = document.querySelector("#top tbody tr");
      return document.getElementById("tlsel").textContent.includes("selected") && r && r.cells[4].textContent === w;
    }, want, { timeout: 15000 });
    return firstRow();
  }
  try {
    await page.goto(a1);
    await page.waitForSelector("#top tbody tr", { timeout: 20000 });
    await page.waitForFunction(() => typeof tline !== "undefined" && tline && tline.threads.length > 0, null, { timeout: 15000 });
    const ink = await page.evaluate(() => {
      const c = document.getElementById("tl"), d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 3; i < d.length; i += 4) if (d[i]) n++;
      return n;
    });
    if (ink < 100) errors.push("the timeline canvas is empty (" + ink + " pixels drawn)");
    const whole = await firstRow();
    const first = await drag(0.02, 0.4, a3);
    const second = await drag(0.6, 0.98, a4);
    // the root frame of the flamegraph is visible in its panel
    await page.waitForFunction(() => { const f = document.getElementById("flame"); return f.contentDocument && f.contentDocument.querySelector("g.f"); }, null, { timeout: 15000 });
    await page.waitForTimeout(500);
    const root = await page.evaluate(() => {
      const f = document.getElementById("flame"), w = f.contentWindow, doc = f.contentDocument;
      let best = null, by = -1;
      doc.querySelectorAll("g.f rect").forEach((r) => { const y = +r.getAttribute("y"); if (y > by) { by = y; best = r; } });
      if (!best) return "no frames";
      const b = best.getBoundingClientRect(), fb = f.getBoundingClientRect();
      const inFrame = b.top >= 0 && b.bottom <= w.innerHeight;
      const onPage = fb.top + b.bottom <= window.innerHeight + window.scrollY;
      return inFrame && onPage ? "" : "root frame at " + b.top + "-" + b.bottom + " of " + w.innerHeight + " (frame at " + fb.top + ")";
    });
    if (root) errors.push(root);
    await page.locator("#top tbody tr").first().click();
    await page.waitForFunction(() => document.getElementById("peekbody").textContent.includes("callers"), null, { timeout: 15000 });
    await page.locator("#shape a", { hasText: "icicle" }).click();
    await page.waitForFunction(() => { const f = document.getElementById("flame"); return f.src.includes("view=icicle") && f.contentDocument && f.contentDocument.querySelector("g.f"); }, null, { timeout: 15000 });
    await page.screenshot({ path: a2 });
    out = "whole run: " + whole + "; first half: " + first + "; second half: " + second + "; root in view, callers panel, icicle";
  } catch (e) {
    errors.push(e.message.split("\n")[0]);
  }
  return finish(browser, errors, out);
}

async function offcpuCheck() {
  const browser = await launch();
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push("page error: " + e.message));
  page.on("console", (m) => { if (m.type() === "error") errors.push("console: " + m.text()); });
  let out = "";
  try {
    await page.goto(a1);
    await page.waitForSelector("#threads tbody tr", { timeout: 20000 });
    const th = await page.evaluate(() => ({
      head: Array.from(document.querySelectorAll("#threads thead th")).map((h) => h.textContent),
      reasons: Array.from(document.querySelectorAll("#threads tbody tr")).map((r) => r.cells[r.cells.length - 1].textContent) }));
    if (!th.head.includes("OFF-CPU ms") || !th.reasons.some((r) => r.includes(a3)))
      errors.push("threads table: head " + th.head.join("|") + ", reasons " + th.reasons.join("|"));
    await page.locator("#modes a", { hasText: "wall time" }).click();
    await page.waitForFunction(() => {
      const f = document.getElementById("flame");
      return f.src.includes("mode=wall") && f.contentDocument && f.contentDocument.querySelector("g.f");
    }, null, { timeout: 15000 });
    await page.waitForTimeout(300);
    const fl = page.frames().find((f) => f.url().includes("mode=wall"));
    const titles = fl ? await fl.evaluate(() => Array.from(document.querySelectorAll("g.f[t=o]")).map((g) => data.names[+g.getAttribute("n")])) : [];
    if (!titles.some((t) => t.startsWith("[off-cpu: " + a3 + "]"))) errors.push("wall flamegraph has no [off-cpu: " + a3 + "] frame (" + titles.length + " off-CPU frames)");
    await page.screenshot({ path: a2, fullPage: true });
    out = "threads: " + th.head.length + " columns, " + th.reasons[0] + "; wall flame: " + titles.length + " off-CPU frames";
  } catch (e) {
    errors.push(e.message.split("\n")[0]);
  }
  return finish(browser, errors, out);
}

async function wakersCheck() {
  const browser = await launch();
  const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push("page error: " + e.message));
  // a function with no samples of its own (FUNC only waits) gets a 404
  // from /api/annotate, which the page answers with its addresses
  page.on("console", (m) => { if (m.type() === "error" && !m.text().includes("status of 404")) errors.push("console: " + m.text()); });
  let out = "";
  try {
    await page.goto(a1);
    await page.waitForSelector("#threads tbody tr", { timeout: 20000 });
    await page.locator("#modes a", { hasText: "off-CPU" }).click();
    await page.waitForFunction(() => {
      const f = document.getElementById("flame");
      return f.src.includes("mode=offcpu") && f.contentDocument && f.contentDocument.querySelector("g.f");
    }, null, { timeout: 15000 });
    await page.waitForTimeout(300);
    const fl = page.frames().find((f) => f.url().includes("mode=offcpu"));
    const g = fl ? await frameNamed(fl, a3) : null;
    if (!g) throw new Error("no frame named " + a3 + " in the off-CPU flamegraph");
    await g.click();
    try {
      await page.waitForFunction((n) => Array.from(document.querySelectorAll("#woken td")).some((td) => td.textContent === n),
        a4, { timeout: 15000 });
    } catch (e) {
      errors.push("clicking " + a3 + " did not show " + a4 + " in the woken-by panel: '" + (await page.textContent("#woken")).slice(0, 300) + "'");
    }
    await page.screenshot({ path: a2, fullPage: true });
    const t = await page.evaluate(() => document.querySelector("#woken .note").textContent);
    out = "woken by panel for " + a3 + ": " + t;
  } catch (e) {
    errors.push(e.message.split("\n")[0]);
  }
  return finish(browser, errors, out);
}

(async () => {
  let rc;
  if (cmd === "schema") rc = schema();
  else if (cmd === "speedscope") rc = await speedscope();
  else if (cmd === "page") rc = await pageCheck();
  else if (cmd === "offcpu") rc = await offcpuCheck();
  else if (cmd === "wakers") rc = await wakersCheck();
  else if (cmd === "timeline") rc = await timelineCheck();
  else if (cmd === "svg") rc = await svgCheck();
  else { console.log("usage: browser.js schema|speedscope|page|svg|offcpu ..."); rc = 2; }
  process.exit(rc);
})();
