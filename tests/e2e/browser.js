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
//   node browser.js page URL OUT.png LEAF CALLER
//       stax serve's page: the call tree (its heaviest path open to LEAF)
//       answers Home, arrows and *; the functions table has LEAF first;
//       selecting it shows its callers (CALLER), its source (hottest line
//       the BURN_LOOP, with self and total) and its assembly, in place;
//       hovering CALLER in the flame graph names it, a click selects it in
//       the call tree; the search marks matches. Screenshot with LEAF's
//       assembly shown
//   node browser.js select URL OUT.png FIRST SECOND
//       a recording whose hot function is FIRST, then SECOND: a range
//       dragged on the timeline, a thread picked on it and a focused
//       function each give the same total in the flame graph, the call
//       tree's roots and the threads table, and clear from the bar;
//       the icicle puts the root on top
//   node browser.js offcpu URL OUT.png REASON CALLER
//       an off-CPU recording: the off-CPU view has [off-cpu: REASON] and
//       no kernel function with self time (the toggle shows the kernel's
//       frames), and the REASON waits' time charged to CALLER, their
//       blocking caller; the threads table's off-CPU columns name REASON; the
//       timeline draws the waits
//   node browser.js wakers URL OUT.png FUNC WAKER
//       a recording with wakers: FUNC selected in the off-CPU view, the
//       woken-by panel has WAKER among the waking functions and no
//       thread root
//   node browser.js big URL OUT.png N
//       N threads: a timeline track each, the last reached by scrolling
//       and picked by a click, N rows in the threads table, a range
//       selection done
//   node browser.js draw URL
//       the page's timings as JSON (bench/run.sh section 13)
//   node browser.js svg FILE.svg NAME DETAILS
//       open a flamegraph SVG from disk; hovering NAME's first frame
//       shows DETAILS (e.g. "leaf_b (N samples, P%)") in the details line
//       and in the script's tooltip, which lies inside the drawing; the
//       file has no <title> elements; a click zooms the frame to the full
//       width, labelled NAME, a search for NAME matches 100% of it, and
//       Escape unzooms
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

// ---- stax serve's page (src/serve/page*.js) ----

// A page of stax serve at url, opened, with its errors collected and the
// first draw waited for.
async function openPage(url, size) {
  const browser = await launch();
  const page = await browser.newPage({ viewport: size || { width: 1400, height: 1000 } });
  const errors = [];
  page.on("pageerror", (e) => errors.push("page error: " + e.message));
  page.on("console", (m) => { if (m.type() === "error" && !/status of 404/.test(m.text())) errors.push("console: " + m.text()); });
  page.on("dialog", (d) => { errors.push("dialog: " + d.message()); d.dismiss(); });
  await page.goto(url);
  await page.waitForFunction(() => window.staxReady, null, { timeout: 30000 });
  return { browser, page, errors };
}
// The text of a panel's rows: the call tree's, a table's.
// (a row's name: the function's, without the triangle and the module)
const treeRows = (page, pane) => page.evaluate((p) => Array.from(document.querySelectorAll("#" + p + " .r")).map((r) =>
  ({ total: r.children[0].textContent, self: r.children[2].textContent, sel: r.classList.contains("sel"),
     name: Array.from(r.querySelector(".n").childNodes).filter((c) => !(c.classList && (c.classList.contains("tw") || c.classList.contains("mod")))).map((c) => c.textContent).join("").trim() })),
  pane || "p-tree");
const tableRows = (page, pane) => page.evaluate((p) => Array.from(document.querySelectorAll("#" + p + " tbody tr")).map((r) => Array.from(r.cells).map((c) => c.textContent)), pane);
const num = (t) => parseFloat(String(t).replace(/,/g, "")) || 0;
async function tab(page, bar, name) { await page.click("#" + bar + " a[data-t=" + name + "]"); await page.waitForTimeout(100); }
// Wait until f(page state) is true (polled in the page).
const until = (page, f, arg, ms) => page.waitForFunction(f, arg, { timeout: ms || 15000 });
// The flame graph's frame of function name: its middle, in page pixels.
async function flameFrame(page, name) {
  return page.evaluate((n) => {
    const ui = window.stax.ui, fl = ui.flame, m = window.stax.model(), T = fl.tree, h = fl.hit, r = fl.canvas.getBoundingClientRect();
    for (let i = 0; i < h.length; i += 4) {
      if (m.fname[T.func[h[i]]] !== n || h[i + 2] < 4) continue;
      const d = h[i + 3], y = fl.icicle ? d * 18 : fl.rowsH - (d + 1) * 18 - 2;
      return { x: r.left + h[i + 1] + h[i + 2] / 2, y: r.top + y + 9, depth: d, top: r.top + y };
    }
    return null;
  }, name);
}
// Pixels drawn (not transparent, not white) in a canvas.
const ink = (page, sel) => page.evaluate((s) => {
  const c = document.querySelector(s), d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data;
  let n = 0;
  for (let i = 0; i < d.length; i += 4) if (d[i + 3] && (d[i] < 240 || d[i + 1] < 240 || d[i + 2] < 240)) n++;
  return n;
}, sel);

// page URL OUT.png LEAF CALLER: the call tree, its keys, the functions
// table, the source and assembly of LEAF in place, the flame graph's
// hover and click on CALLER, the search.
async function pageCheck() {
  const { browser, page, errors } = await openPage(a1);
  const out = [];
  try {
    let rows = await treeRows(page);
    if (rows.length < 3) errors.push("the call tree has " + rows.length + " rows");
    if (!rows.some((r) => r.name.includes(a3))) errors.push("the call tree's heaviest path does not reach " + a3 + ": " + rows.map((r) => r.name).join(" | "));
    if (await ink(page, "#flame canvas") < 2000) errors.push("the flame graph is not drawn");
    if (await ink(page, "#tl canvas.tracks") < 200) errors.push("the timeline is not drawn");
    // keys: Home selects the root, Right opens or descends, Down, Left
    // goes back to the parent, * opens everything under the selection
    await page.click("#p-tree .r");
    await page.keyboard.press("Home");
    const root = (await treeRows(page)).find((r) => r.sel);
    await page.keyboard.press("ArrowRight");
    await page.keyboard.press("ArrowRight");
    await page.keyboard.press("ArrowDown");
    const down = (await treeRows(page)).find((r) => r.sel);
    await page.keyboard.press("ArrowLeft");
    await page.keyboard.press("ArrowLeft");
    const back = (await treeRows(page)).find((r) => r.sel);
    const before = (await treeRows(page)).length;
    await page.keyboard.press("Home");
    await page.keyboard.press("*");
    await page.waitForTimeout(200);
    const opened = await page.evaluate(() => window.stax.ui.tree.rows.length);
    if (!root || !down || !back || down.name === root.name || back.name === down.name) errors.push("keys: Home '" + (root && root.name) + "', Right Right Down '" + (down && down.name) + "', Left Left '" + (back && back.name) + "'");
    if (opened <= before) errors.push("* opened nothing: " + before + " rows, then " + opened);
    out.push("keys: Home " + root.name.trim() + ", Right Right Down " + down.name.trim() + ", Left Left " + back.name.trim() + ", * " + before + " -> " + opened + " rows");
    // the functions table: LEAF first by self; a click selects it everywhere
    await tab(page, "ltabs", "funcs");
    const funcs = await tableRows(page, "p-funcs");
    if (!funcs.length || !funcs[0][4].includes(a3)) errors.push("functions table: first row '" + (funcs[0] || []).join(" ") + "', not " + a3);
    await page.click("#p-funcs tbody tr");
    await until(page, (n) => document.querySelector("#details .dhead b") && document.querySelector("#details .dhead b").textContent === n &&
      document.querySelector("#source table.src tr.hit"), a3);
    const det = await page.textContent("#details");
    if (!det.includes("Callers") || !det.includes(a4 === "b" ? "b" : a4)) errors.push("details of " + a3 + ": " + det.slice(0, 200));
    // source: the hottest line is the loop, with self and total
    const src = await page.evaluate(() => {
      const rows = Array.from(document.querySelectorAll("#source table.src tbody tr.hit"));
      let best = null, bt = -1;
      rows.forEach((r) => { const t = parseFloat(r.cells[0].textContent.replace(/,/g, "")); if (t > bt) { bt = t; best = r; } });
      return { n: rows.length, total: bt, self: best ? best.cells[1].textContent : "", code: best ? best.cells[3].textContent : "", text: document.getElementById("source").textContent };
    });
    if (!/BURN_LOOP/.test(src.code) || !(num(src.self) > 0)) errors.push("source of " + a3 + ": hottest line '" + src.code + "' (self '" + src.self + "')");
    if (/undefined|NaN/.test(src.text)) errors.push("the source panel says undefined or NaN");
    out.push("source: " + src.n + " lines with samples, hottest '" + src.code.trim() + "' total " + src.total + " self " + src.self);
    // assembly: instructions with self and total, in place
    const flameTop = await page.evaluate(() => document.getElementById("flame").getBoundingClientRect().top);
    await page.click("#source .tabs a[data-t=asm]");
    await until(page, () => document.querySelectorAll("#source table.asm tbody tr.hit").length > 0, null, 20000);
    const asm = await page.evaluate(() => {
      const rows = Array.from(document.querySelectorAll("#source table.asm tbody tr:not(.line)"));
      const hit = rows.filter((r) => r.classList.contains("hit"));
      return { n: rows.length, hit: hit.length, self: hit.reduce((a, r) => a + (parseFloat(r.cells[1].textContent.replace(/,/g, "")) || 0), 0),
        lines: document.querySelectorAll("#source table.asm tr.line").length, text: document.getElementById("source").textContent };
    });
    if (asm.n < 3 || !asm.hit || !(asm.self > 0) || !asm.lines) errors.push("assembly of " + a3 + ": " + JSON.stringify({ n: asm.n, hit: asm.hit, self: asm.self, lines: asm.lines }));
    if (/undefined|NaN/.test(asm.text)) errors.push("the assembly panel says undefined or NaN");
    const flameTop2 = await page.evaluate(() => document.getElementById("flame").getBoundingClientRect().top);
    if (flameTop !== flameTop2 || await page.evaluate(() => window.scrollY) !== 0) errors.push("the page moved: the flame graph from " + flameTop + " to " + flameTop2);
    out.push("assembly: " + asm.n + " instructions, " + asm.hit + " with samples, " + asm.lines + " source lines, in place");
    await page.screenshot({ path: a2 });
    // the flame graph: hovering CALLER says its name and weight, a click selects it
    const fr = await flameFrame(page, a4);
    if (!fr) throw new Error("no flame graph frame for " + a4);
    await page.mouse.move(fr.x, fr.y);
    const tip = await page.textContent("#flame .tip");
    if (!tip.startsWith(a4) || !/total \(\d+\.\d%\)/.test(tip)) errors.push("hovering " + a4 + ": tooltip '" + tip + "'");
    await page.mouse.click(fr.x, fr.y);
    await until(page, (n) => document.querySelector("#details .dhead b") && document.querySelector("#details .dhead b").textContent === n, a4);
    await tab(page, "ltabs", "tree");
    const sel = (await treeRows(page)).find((r) => r.sel);
    if (!sel || sel.name.trim() !== a4) errors.push("clicking " + a4 + " in the flame graph: the call tree selects '" + (sel && sel.name) + "'");
    out.push("flame: hover '" + tip.replace(/\s+/g, " ").slice(0, 60) + "', click selects " + a4 + " in the tree");
    // the search: matches marked in the tree, the functions table filtered to them
    await page.fill("#search", a3.slice(0, 4));
    await until(page, () => document.querySelector("#chips").textContent.includes("Search"));
    await tab(page, "ltabs", "tree");
    const marks = await page.evaluate(() => document.querySelectorAll("#p-tree mark").length);
    await tab(page, "ltabs", "funcs");
    const names = (await tableRows(page, "p-funcs")).map((r) => r[4]);
    const dimmed = await page.evaluate(() => { const c = document.querySelector("#flame canvas"); return c.width > 0; });
    if (!marks || !names.length || !dimmed) errors.push("search '" + a3.slice(0, 4) + "': " + marks + " marks in the tree, functions " + names.join(","));
    out.push("search: " + marks + " marks in the tree");
  } catch (e) {
    errors.push(e.message.split("\n")[0]);
  }
  return finish(browser, errors, out.join("; "));
}

// The panels' totals, read from what they show: the flame graph's note,
// the call tree's roots, the threads table's samples (of the threads
// selected), the functions table's first row.
async function panels(page) {
  await tab(page, "ltabs", "threads");
  const table = await page.evaluate(() => Array.from(document.querySelectorAll("#p-threads tbody tr"))
    .filter((r) => !window.stax.state.threads || r.classList.contains("sel"))
    .reduce((a, r) => a + (parseFloat(r.cells[2].textContent.replace(/,/g, "")) || 0), 0));
  await tab(page, "ltabs", "tree");
  const p = await page.evaluate(() => {
    const n = (t) => parseFloat(String(t).replace(/,/g, "")) || 0;
    const s = window.stax, ui = s.ui;
    const roots = ui.tree.rows.filter((id, i) => ui.tree.depth[i] === 0).reduce((a, id) => a + ui.tree.src.info(id).total, 0);
    return { note: n(document.getElementById("flamenote").textContent), roots: roots, chips: document.getElementById("chips").textContent,
      total: s.pass().rootTotal };
  });
  p.threads = table;
  return p;
}

// select URL OUT.png FIRST SECOND: a recording whose hot function is
// FIRST in its first half, SECOND in its second: a range dragged on the
// timeline changes every panel (call tree, functions and threads tables,
// flame graph, details), a thread picked on the timeline and a focused
// function too, each cleared from the bar; the icicle puts the root on top.
async function selectCheck() {
  const { browser, page, errors } = await openPage(a1);
  const out = [];
  const firstFunc = async () => { await tab(page, "ltabs", "funcs"); const r = await tableRows(page, "p-funcs"); await tab(page, "ltabs", "tree"); return r.length ? r[0][4] : ""; };
  async function drag(f0, f1) {
    const box = await page.locator("#tl canvas.tracks").boundingBox();
    const x = (f) => box.x + 200 + f * (box.width - 200);
    await page.mouse.move(x(f0), box.y + 10);
    await page.mouse.down();
    await page.mouse.move(x((f0 + f1) / 2), box.y + 10, { steps: 4 });
    await page.mouse.move(x(f1), box.y + 10, { steps: 4 });
    await page.mouse.up();
    await until(page, () => document.getElementById("chips").textContent.includes("Time"));
    await page.waitForTimeout(200);
  }
  try {
    const whole = await panels(page);
    if (whole.note !== whole.total || whole.roots !== whole.total || whole.threads !== whole.total)
      errors.push("whole recording: flame " + whole.note + ", tree " + whole.roots + ", threads " + whole.threads + ", pass " + whole.total);
    await drag(0.02, 0.4);
    const a = await panels(page), fa = await firstFunc();
    await drag(0.6, 0.98);
    const b = await panels(page), fb = await firstFunc();
    for (const [name, p] of [["first part", a], ["second part", b]])
      if (!(p.total < whole.total) || p.note !== p.total || p.roots !== p.total || p.threads !== p.total)
        errors.push(name + ": flame " + p.note + ", tree " + p.roots + ", threads " + p.threads + " of " + p.total + " (whole " + whole.total + ")");
    if (fa !== a3 || fb !== a4) errors.push("the hottest function of the first part is '" + fa + "', of the second '" + fb + "'");
    out.push("whole " + whole.total + " samples; first 40% " + a.total + " (" + fa + " first); last 40% " + b.total + " (" + fb + " first), in the tree, flame graph, functions and threads alike");
    // clear the range from the bar
    await page.click("#chips .chip:has-text('Time') .x");
    await until(page, (t) => window.stax.pass().rootTotal === t, whole.total);
    // a thread: the timeline's first track
    const box = await page.locator("#tl canvas.tracks").boundingBox();
    const rows = await page.evaluate(() => window.stax.ui.timeline.rows.map((r) => ({ y: r.y, h: r.h, t: r.t })));
    const tr = rows.find((r) => r.t !== undefined);
    await page.mouse.click(box.x + 100, box.y + tr.y + tr.h / 2);
    await until(page, () => document.getElementById("chips").textContent.includes("Thread"));
    const t = await panels(page);
    await tab(page, "ltabs", "threads");
    const trows = await tableRows(page, "p-threads");
    const selRows = await page.evaluate(() => document.querySelectorAll("#p-threads tbody tr.sel").length);
    if (t.note !== t.total || t.roots !== t.total || selRows !== 1) errors.push("a thread: flame " + t.note + ", tree " + t.roots + " of " + t.total + ", " + selRows + " selected rows of " + trows.length);
    out.push("thread picked on the timeline: " + t.total + " samples in every panel");
    await page.click("#chips .chip:has-text('Thread') .x");
    // focus on SECOND (the details' link): the tree's only root
    await tab(page, "ltabs", "funcs");
    await page.locator("#p-funcs tbody tr", { has: page.locator("td.n", { hasText: new RegExp("^" + a4 + "$") }) }).first().click();
    await until(page, (n) => document.querySelector("#details .dhead b") && document.querySelector("#details .dhead b").textContent === n, a4);
    await page.click("#details a[data-act=focus]");
    await until(page, () => document.getElementById("chips").textContent.includes("Focus on"));
    await tab(page, "ltabs", "tree");
    const fr = await treeRows(page);
    const fp = await panels(page);
    if (!fr.length || fr[0].name.trim() !== a4 || fp.roots !== fp.total || !(fp.total < whole.total)) errors.push("focus on " + a4 + ": first row '" + (fr[0] && fr[0].name) + "', " + fp.total + " samples");
    out.push("focus on " + a4 + ": " + fp.total + " samples, the tree rooted at it");
    await page.click("#chips .chip:has-text('Focus') .x");
    await until(page, (t) => window.stax.pass().rootTotal === t, whole.total);
    // icicle: the root on the top row
    await page.click("#rtabs a[data-t=icicle]");
    await page.waitForTimeout(200);
    const icicle = await page.evaluate(() => { const fl = window.stax.ui.flame; return fl.icicle && fl.hit[3] === 0; });
    if (!icicle) errors.push("the icicle toggle did not put the root on top");
    await page.screenshot({ path: a2 });
    out.push("cleared from the bar; icicle");
  } catch (e) {
    errors.push(e.message.split("\n")[0]);
  }
  return finish(browser, errors, out.join("; "));
}

// offcpu URL OUT.png REASON CALLER: an off-CPU recording: the off-CPU
// view's tree ends in [off-cpu: REASON] below the program's own frames
// (the kernel's folded, shown again with the toggle), the functions
// table charges the REASON waits to CALLER (waited in), the threads table
// has the off-CPU columns, the timeline draws the waits.
async function offcpuCheck() {
  const { browser, page, errors } = await openPage(a1);
  const out = [];
  try {
    await page.click("#modes a[data-m=off]");
    await until(page, () => window.stax.state.mode === "off");
    await tab(page, "ltabs", "funcs");
    const funcs = await tableRows(page, "p-funcs");
    const head = await page.evaluate(() => Array.from(document.querySelectorAll("#p-funcs th")).map((h) => h.textContent));
    const col = (n) => head.indexOf(n);
    const kself = funcs.filter((r) => num(r[col("Self")]) > 0 && /\[kernel/.test(r[col("Module")]));
    const frame = funcs.find((r) => r[col("Function")] === "[off-cpu: " + a3 + "]");
    if (!frame || kself.length) errors.push("off-CPU functions: [off-cpu: " + a3 + "] " + (frame ? frame.join(" ") : "missing") + "; kernel functions with self time: " + kself.map((r) => r[col("Function")]).join(","));
    // "waited in" (the first column): the REASON waits are charged to
    // their blocking caller CALLER, as stax top --off-cpu does, and
    // hardly any time to kernel functions (only stacks without a user
    // frame: an exec; preemptions, which a busy machine makes many of,
    // go to whatever ran)
    const caller = funcs.find((r) => r[col("Function")] === a4);
    const kwait = funcs.filter((r) => num(r[col("Waited in")]) > 0 && /\[kernel/.test(r[col("Module")]));
    const kms = kwait.reduce((a, r) => a + num(r[0]), 0);
    if (col("Waited in") !== 0 || !caller || !frame || !(num(caller[0]) >= 0.9 * num(frame[col("Self")])) || kms > 0.1 * num(frame[col("Self")]))
      errors.push("off-CPU functions: " + a4 + " waited in '" + (caller ? caller[0] : "missing") + "', [off-cpu: " + a3 + "] '" + (frame ? frame[col("Self")] : "") +
        "'; kernel functions waited in: " + kwait.map((r) => r[col("Function")]).join(","));
    await page.check("#kwaits");
    await until(page, () => window.stax.state.kernelWaits);
    const kf = (await tableRows(page, "p-funcs")).filter((r) => /\[kernel/.test(r[col("Module")]));
    if (!kf.length) errors.push("kernel frames of waits: no kernel function in the table");
    out.push("off-CPU: " + a4 + " waited in " + (caller ? caller[0] : "?") + " of [off-cpu: " + a3 + "]'s " + frame[col("Self")] + ", no kernel self time; " + kf.length + " kernel functions with the toggle");
    await page.uncheck("#kwaits");
    await tab(page, "ltabs", "threads");
    const thead = await page.evaluate(() => Array.from(document.querySelectorAll("#p-threads th")).map((h) => h.textContent));
    const reasons = (await tableRows(page, "p-threads")).map((r) => r[r.length - 1]);
    if (!thead.includes("Off-CPU ms") || !reasons.some((r) => r.includes(a3))) errors.push("threads table: " + thead.join("|") + "; " + reasons.join("|"));
    const strip = await page.evaluate(() => window.stax.ui.timeline.dens.offReason.some((r) => r !== 255));
    if (!strip) errors.push("the timeline has no off-CPU waits");
    await page.click("#modes a[data-m=wall]");
    await until(page, () => window.stax.state.mode === "wall");
    await page.screenshot({ path: a2 });
    out.push("threads: " + reasons[0] + "; waits on the timeline");
  } catch (e) {
    errors.push(e.message.split("\n")[0]);
  }
  return finish(browser, errors, out.join("; "));
}

// wakers URL OUT.png FUNC WAKER: off-CPU view, FUNC selected: the woken
// by panel has WAKER among the waking functions.
async function wakersCheck() {
  const { browser, page, errors } = await openPage(a1);
  let out = "";
  try {
    await page.click("#modes a[data-m=off]");
    await until(page, () => window.stax.state.mode === "off");
    await tab(page, "ltabs", "funcs");
    const row = page.locator("#p-funcs tbody tr", { has: page.locator("td.n", { hasText: new RegExp("^" + a3 + "$") }) });
    if (await row.count() < 1) throw new Error("no functions table row for " + a3);
    await row.first().click();
    await until(page, (n) => document.getElementById("details").textContent.includes("waits through " + n), a3);
    const names = await page.evaluate(() => Array.from(document.querySelectorAll("#details table.mini td.n")).map((t) => t.textContent));
    if (!names.includes(a4)) errors.push("woken by " + a3 + ": " + names.join(", "));
    if (names.some((n) => /^(start_thread|clone3)$/.test(n))) errors.push("a thread root among the waking functions: " + names.join(", "));
    await page.screenshot({ path: a2 });
    out = "woken by (" + a3 + "): " + names.slice(0, 4).join(", ");
  } catch (e) {
    errors.push(e.message.split("\n")[0]);
  }
  return finish(browser, errors, out);
}

// big URL OUT.png N: a recording of N threads: the timeline has a track
// for each (it scrolls to the last, which a click picks), the threads
// table lists them all, and a range selection still recomputes.
async function bigCheck() {
  const { browser, page, errors } = await openPage(a1);
  let out = "";
  try {
    const tm = await page.evaluate(() => window.stax.timing);
    // open the folded group of threads without samples, if any
    const folded = await page.evaluate(() => { const tl = window.stax.ui.timeline; return tl.rows.filter((r) => r.t === undefined && tl.collapsed.has(r.proc.pid)).map((r) => r.y - tl.scroll.scrollTop); });
    for (const y of folded) {
      await page.evaluate((yy) => { document.querySelector("#tl .tlscroll").scrollTop = yy; }, y);
      const bx = await page.locator("#tl canvas.tracks").boundingBox();
      const top = await page.evaluate(() => document.querySelector("#tl .tlscroll").scrollTop);
      await page.mouse.click(bx.x + 8, bx.y + y - top + 11);
    }
    const n = await page.evaluate(() => window.stax.ui.timeline.rows.filter((r) => r.t !== undefined).length);
    if (n < +a3) errors.push("the timeline has " + n + " thread tracks, not " + a3);
    await page.evaluate(() => { const s = document.querySelector("#tl .tlscroll"); s.scrollTop = s.scrollHeight; });
    await page.waitForTimeout(200);
    const last = await page.evaluate(() => { const tl = window.stax.ui.timeline, r = tl.rows[tl.rows.length - 1]; return { y: r.y - tl.scroll.scrollTop, h: r.h, t: r.t, label: window.stax.model().threadLabel(r.t) }; });
    const box = await page.locator("#tl canvas.tracks").boundingBox();
    if (last.y < 0 || last.y + last.h > box.height + 1) errors.push("the last track is at " + last.y + " in a " + box.height + " px view");
    await page.mouse.click(box.x + 100, box.y + last.y + last.h / 2);
    await until(page, () => document.getElementById("chips").textContent.includes("Thread"));
    const chip = await page.textContent("#chips");
    if (!chip.includes(last.label)) errors.push("clicking the last track picked '" + chip + "', not " + last.label);
    await tab(page, "ltabs", "threads");
    const rows = (await tableRows(page, "p-threads")).length;
    if (rows < +a3) errors.push("the threads table has " + rows + " rows");
    const t0 = Date.now();
    const b = await page.locator("#tl canvas.tracks").boundingBox();
    await page.mouse.move(b.x + 200 + 0.3 * (b.width - 200), b.y + 5);
    await page.mouse.down();
    await page.mouse.move(b.x + 200 + 0.6 * (b.width - 200), b.y + 5, { steps: 5 });
    await page.mouse.up();
    await until(page, () => document.getElementById("chips").textContent.includes("Time"), null, 30000);
    await page.screenshot({ path: a2 });
    out = n + " tracks, the last (" + last.label + ") reached and picked, " + rows + " table rows; first draw " + Math.round(tm.firstDraw) +
      " ms, a range selection " + (Date.now() - t0) + " ms";
  } catch (e) {
    errors.push(e.message.split("\n")[0]);
  }
  return finish(browser, errors, out);
}

// The first frame named name in a stax flamegraph SVG (frame fl), found
// by the names table the SVG's script reads.
// draw URL: how long the page takes to show its recording (bench/run.sh
// section 13): its own timings (fetch, parse, model, compute, first
// draw, in ms) and the time to select the middle third of the timeline
// and redraw every panel; prints them as JSON.
async function drawTiming() {
  const t0 = Date.now();
  const { browser, page, errors } = await openPage(a1);
  let out = "";
  try {
    const load = Date.now() - t0;
    const tm = await page.evaluate(() => window.stax.timing);
    const range = await page.evaluate(() => {
      const m = window.stax.model(), t = performance.now();
      window.stax.state.range = [m.duration / 3, 2 * m.duration / 3];
      window.recompute(1);
      return performance.now() - t;
    });
    const info = await page.evaluate(() => ({ samples: window.stax.model().nSamples, threads: window.stax.model().nThreads }));
    out = JSON.stringify(Object.assign({ load: load, range: Math.round(range) }, info, tm));
  } catch (e) {
    errors.push(e.message.split("\n")[0]);
  }
  return finish(browser, errors, out);
}

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

(async () => {
  let rc;
  if (cmd === "schema") rc = schema();
  else if (cmd === "speedscope") rc = await speedscope();
  else if (cmd === "page") rc = await pageCheck();
  else if (cmd === "offcpu") rc = await offcpuCheck();
  else if (cmd === "wakers") rc = await wakersCheck();
  else if (cmd === "select") rc = await selectCheck();
  else if (cmd === "big") rc = await bigCheck();
  else if (cmd === "draw") rc = await drawTiming();
  else if (cmd === "svg") rc = await svgCheck();
  else { console.log("usage: browser.js schema|speedscope|page|select|offcpu|wakers|big|svg ..."); rc = 2; }
  process.exit(rc);
})();
