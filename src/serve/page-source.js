/* page-source.js - the source and assembly of the selected function, in
 * its own panel: self and total per source line and per instruction,
 * counted from the same selection as every other panel. Source text
 * comes from /api/source (files the recording names), the disassembly
 * from /api/asm (the binary, as stax annotate reads it); a kernel or JIT
 * function without code to read shows its sampled addresses. */
"use strict";

var srcCache = new Map();   /* path -> Promise of [lines] or an Error */

function fetchSource(path) {
  if (!srcCache.has(path)) {
    srcCache.set(path, fetch("/api/source?file=" + encodeURIComponent(path), { cache: "no-store" }).then(function (r) {
      return r.text().then(function (t) { if (!r.ok) throw new Error(t.trim() || "HTTP " + r.status); return t.split("\n"); });
    }));
  }
  return srcCache.get(path);
}

/* opts: {fmt(w), total(), version()} */
function SourceView(box, opts) {
  var self = this;
  this.box = box;
  this.opts = opts;
  this.tab = "source";
  this.asmCache = new Map();
  this.func = -1;
  box.innerHTML = "<div class=\"tabs\"><a data-t=\"source\" class=\"on\">Source</a><a data-t=\"asm\">Assembly</a>" +
    "<span class=\"title\"></span></div><div class=\"srcbody\"></div>";
  this.title = box.querySelector(".title");
  this.body = box.querySelector(".srcbody");
  box.querySelector(".tabs").addEventListener("click", function (ev) {
    var t = ev.target.getAttribute("data-t");
    if (!t) return;
    self.tab = t;
    box.querySelectorAll(".tabs a").forEach(function (a) { a.className = a.getAttribute("data-t") === t ? "on" : ""; });
    self.render();
  });
}
SourceView.prototype.show = function (pass, f) {
  this.pass = pass;
  if (f !== this.func) this.file = null;
  this.func = f;
  this.render();
};
SourceView.prototype.note = function (text, cls) {
  this.body.innerHTML = "<div class=\"note " + (cls || "") + "\">" + esc(text) + "</div>";
};
SourceView.prototype.render = function () {
  var f = this.func, P = this.pass;
  if (!P || f < 0) {
    this.title.textContent = "";
    this.note("Select a function (in the call tree, the flame graph or a table) to see its source and assembly here.");
    return;
  }
  var m = P.x.m;
  this.title.innerHTML = "<b>" + esc(m.fname[f]) + "</b> <span class=\"mod\">" + esc(m.fmodule[f] || "") + "</span>";
  if (this.tab === "asm") this.renderAsm(); else this.renderSource();
};

/* ---- source ---- */

SourceView.prototype.renderSource = function () {
  var self = this, P = this.pass, m = P.x.m, f = this.func, lines = P.lines(f), files = Object.keys(lines);
  if (!files.length) {
    var why = m.fkind[f] === "k" ? "a kernel function: no source lines here (see Assembly)" :
      m.fkind[f] === "o" ? "the time spent off the CPU (no code)" :
      "no source lines are known for its frames (built without -g, or JIT code without a line map)";
    this.note(m.fname[f] + ": " + why + ".");
    return;
  }
  var wt = function (fl) { var s = 0, L = lines[fl]; for (var k in L) s += L[k][1]; return s; };
  files.sort(function (a, b) { return wt(b) - wt(a); });
  var file = this.file && lines[this.file] ? this.file : files[0];
  this.file = file;
  var rows = lines[file], head = "<div class=\"srchead\">";
  if (files.length > 1) {
    head += "<select class=\"files\">" + files.map(function (fl) { return "<option" + (fl === file ? " selected" : "") + ">" + esc(fl) + "</option>"; }).join("") + "</select>";
  } else {
    head += "<span class=\"path\">" + esc(file) + "</span>";
  }
  var known = Object.keys(rows).filter(function (l) { return +l > 0; });
  var unknown = rows[0] ? rows[0][1] : 0;
  head += " <span class=\"note\">" + known.length + " line" + (known.length === 1 ? "" : "s") + " with samples" +
    (unknown ? ", " + this.opts.fmt(unknown) + " at no known line" : "") + "</span></div>";
  this.body.innerHTML = head + "<div class=\"note\">loading " + esc(file) + "\u2026</div>";
  var sel = this.body.querySelector("select.files");
  if (sel) sel.addEventListener("change", function () { self.file = sel.value; self.renderSource(); });
  var want = f;
  fetchSource(file).then(function (text) {
    if (self.func !== want || self.file !== file || self.tab !== "source") return;
    if (!known.length) {
      /* no line numbers (a Python perf map, a JIT without a line map):
       * where the function is defined, at least */
      var def = m.fline[f] || 0;
      if (!def && m.fkind[f] === "p") {
        var nm = m.fname[f].replace(/.*\./, "").replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
        var re = new RegExp("^\\s*(async\\s+)?(def|class)\\s+" + nm + "\\b");
        for (var l = 0; l < text.length && !def; l++) if (re.test(text[l])) def = l + 1;
      }
      if (def) {
        rows = Object.assign({}, rows);
        rows[def] = rows[0] || [0, 0];
        head = head.replace("</div>", " <span class=\"note\">(no line numbers in this recording: line " + def + " is where it is defined)</span></div>");
      }
    }
    self.fillSource(head, text, rows);
  }).catch(function (e) {
    if (self.func !== want || self.file !== file || self.tab !== "source") return;
    /* no text: the lines with their counts still */
    self.fillSource(head + "<div class=\"note err\">" + esc(e.message) + "</div>", null, rows);
  });
};
SourceView.prototype.fillSource = function (head, text, rows) {
  var tot = this.opts.total(), fmt = this.opts.fmt, html = "", max = 0, best = -1, k, lo, hi;
  for (k in rows) if (+k > 0 && rows[k][1] > max) { max = rows[k][1]; best = +k; }
  var nums = Object.keys(rows).map(Number).filter(function (x) { return x > 0; });
  if (text) { lo = 1; hi = text.length; if (hi > 1 && text[hi - 1] === "") hi--; }
  else { lo = Math.min.apply(null, nums); hi = Math.max.apply(null, nums); }
  if (hi - lo > 20000) { lo = Math.max(1, best - 5000); hi = Math.min(hi, best + 5000); }
  html += "<table class=\"src\"><thead><tr><th>Total</th><th>Self</th><th>Line</th><th class=\"n\">Source</th></tr></thead><tbody>";
  for (var l = lo; l <= hi; l++) {
    var r = rows[l], heat = r ? Math.min(1, r[1] / (max || 1)) : 0;
    html += "<tr id=\"srcl" + l + "\"" + (r ? " class=\"hit\" style=\"background:rgba(232,120,60," + (0.08 + 0.45 * heat).toFixed(2) + ")\"" : "") + ">" +
      "<td>" + (r ? fmt(r[1]) + " <span class=\"p\">" + pct(r[1], tot) + "</span>" : "") + "</td><td>" + (r && r[0] ? fmt(r[0]) : "") + "</td>" +
      "<td class=\"ln\">" + l + "</td><td class=\"code\">" + (text ? esc(text[l - 1] || "") : "") + "</td></tr>";
  }
  this.body.innerHTML = head + html + "</tbody></table>";
  var row = this.body.querySelector("#srcl" + best);
  if (row) this.body.scrollTop = Math.max(0, row.offsetTop - this.body.clientHeight / 3);
};

/* ---- assembly ---- */

/* The page node of f's frame with the most weight: which code to read. */
SourceView.prototype.bestNode = function () {
  var P = this.pass, m = P.x.m, f = this.func, w = new Map(), best = -1, bw = -1;
  for (var s = 0; s < m.nNodes; s++) {
    var lw = P.leafW[s + 1];
    if (!lw) continue;
    for (var x = s; x >= 0; x = m.nparent[x]) if (m.nfunc[x] === f) { w.set(x, (w.get(x) || 0) + lw); break; }
  }
  w.forEach(function (v, x) { if (v > bw) { bw = v; best = x; } });
  if (best < 0) for (s = 0; s < m.nNodes && best < 0; s++) if (m.nfunc[s] === f) best = s;
  return best;
};
SourceView.prototype.renderAsm = function () {
  var self = this, f = this.func, m = this.pass.x.m, node = this.bestNode(), v = this.opts.version();
  if (node < 0) { this.note(m.fname[f] + " has no frame of its own (an off-CPU reason or a placeholder)."); return; }
  var key = v + ":" + f;
  if (!this.asmCache.has(key)) {
    this.asmCache.set(key, fetch("/api/asm?node=" + node + "&v=" + v, { cache: "no-store" }).then(function (r) {
      if (r.status === 409) throw new Error("the recording changed; it is being reloaded");
      return r.json();
    }));
  }
  this.note("disassembling " + m.fname[f] + "\u2026");
  this.asmCache.get(key).then(function (a) {
    if (self.func !== f || self.tab !== "asm") return;
    if (a.error) self.fillAddrs(a); else self.fillAsm(a);
  }).catch(function (e) { if (self.func === f) self.note(e.message, "err"); });
};
SourceView.prototype.fillAsm = function (a) {
  var self = this, P = this.pass, tot = this.opts.total(), fmt = this.opts.fmt, nodeRow = new Map();
  a.nodes.forEach(function (p) { nodeRow.set(p[0], p[1]); });
  var c = P.rows(nodeRow, a.instructions.length), max = 0, best = -1, i;
  for (i = 0; i < a.instructions.length; i++) if (c.total[i] > max) { max = c.total[i]; best = i; }
  var files = {};
  a.instructions.forEach(function (x) { if (x.file && x.line) files[x.file] = 1; });
  var names = Object.keys(files).slice(0, 4);
  Promise.all(names.map(function (fl) { return fetchSource(fl).catch(function () { return null; }); })).then(function (texts) {
    if (self.tab !== "asm") return;
    var text = {};
    names.forEach(function (fl, k) { text[fl] = texts[k]; });
    var html = "<div class=\"srchead\"><span class=\"path\">" + esc(a.path) + "</span> <span class=\"note\">at " + esc(a.start) + ", " + a.size +
      " bytes; self and total per instruction (a call counts the time of what it called)</span></div>" +
      "<table class=\"src asm\"><thead><tr><th>Total</th><th>Self</th><th class=\"n\">Address</th><th class=\"n\">Instruction</th></tr></thead><tbody>";
    var last = "";
    a.instructions.forEach(function (x, k) {
      var lk = x.file && x.line ? x.file + ":" + x.line : "";
      if (lk && lk !== last) {
        var t = text[x.file], src = t && t[x.line - 1] !== undefined ? t[x.line - 1].trim() : "";
        html += "<tr class=\"line\"><td colspan=\"4\">" + esc(x.file.replace(/.*\//, "") + ":" + x.line) + (src ? "  " + esc(src) : "") + "</td></tr>";
      }
      last = lk;
      var heat = max ? c.total[k] / max : 0;
      html += "<tr id=\"asm" + k + "\"" + (c.total[k] ? " class=\"hit\" style=\"background:rgba(232,120,60," + (0.08 + 0.45 * heat).toFixed(2) + ")\"" : "") + ">" +
        "<td>" + (c.total[k] ? fmt(c.total[k]) + " <span class=\"p\">" + pct(c.total[k], tot) + "</span>" : "") + "</td><td>" + (c.self[k] ? fmt(c.self[k]) : "") + "</td>" +
        "<td class=\"n\">" + esc(x.addr.replace(/^0x/, "")) + "</td><td class=\"code\">" + esc(x.asm) + "</td></tr>";
    });
    self.body.innerHTML = html + "</tbody></table>";
    var row = self.body.querySelector("#asm" + best);
    if (row) self.body.scrollTop = Math.max(0, row.offsetTop - self.body.clientHeight / 3);
  });
};
/* no code to show: the function's sampled addresses, with their counts */
SourceView.prototype.fillAddrs = function (a) {
  var P = this.pass, tot = this.opts.total(), fmt = this.opts.fmt, byAddr = new Map(), list = [], nodeRow = new Map();
  var offs = {};
  a.addrs.forEach(function (p) {
    if (!byAddr.has(p[1])) { byAddr.set(p[1], list.length); list.push(p[1]); }
    if (p[2]) offs[p[1]] = p[2];
    nodeRow.set(p[0], byAddr.get(p[1]));
  });
  var c = P.rows(nodeRow, list.length), order = list.map(function (x, i) { return i; }).filter(function (i) { return c.total[i]; });
  order.sort(function (x, y) { return c.total[y] - c.total[x]; });
  var html = "<div class=\"note\">" + esc(a.error) + "</div><table class=\"src asm\"><thead><tr><th>Total</th><th>Self</th><th class=\"n\">Address</th><th class=\"n\">Where</th></tr></thead><tbody>";
  order.slice(0, 500).forEach(function (i) {
    html += "<tr class=\"hit\"><td>" + fmt(c.total[i]) + " <span class=\"p\">" + pct(c.total[i], tot) + "</span></td><td>" + (c.self[i] ? fmt(c.self[i]) : "") +
      "</td><td class=\"n\">" + esc(list[i]) + "</td><td class=\"n code\">" + (offs[list[i]] ? esc(a.function + offs[list[i]]) : "") + "</td></tr>";
  });
  this.body.innerHTML = html + "</tbody></table>";
};
