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
//   node browser.js page URL OUT.png TEXT
//       open URL, wait for TEXT in the page or its frames, screenshot
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
const [cmd, a1, a2, a3] = process.argv.slice(2);

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
    await page.screenshot({ path: a2, fullPage: true });
    if (!found) errors.push("'" + a3 + "' not visible in the page or its frames");
    // the hot function must be drawn as a flamegraph frame label too
    const fl = page.frames().find((f) => f.url().includes("flame.svg"));
    const labels = fl ? await fl.evaluate(() => Array.from(document.querySelectorAll("g.f text")).map((t) => t.textContent)) : [];
    if (!labels.some((l) => l.includes(a3))) errors.push("no flamegraph frame labelled '" + a3 + "' (" + labels.length + " labels)");
    const rows = await page.evaluate(() => document.querySelectorAll("#top tbody tr").length);
    if (rows < 1) errors.push("the top table is empty");
    console.log("labels " + labels.filter((l) => l).length + ", top rows " + rows);
  } catch (e) {
    errors.push(e.message.split("\n")[0]);
  }
  if (errors.length) { console.log(errors.join("\n")); rc = 1; }
  await browser.close();
  return rc;
}

(async () => {
  let rc;
  if (cmd === "schema") rc = schema();
  else if (cmd === "speedscope") rc = await speedscope();
  else if (cmd === "page") rc = await pageCheck();
  else { console.log("usage: browser.js schema|speedscope|page ..."); rc = 2; }
  process.exit(rc);
})();
