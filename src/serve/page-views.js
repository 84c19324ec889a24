/* page-views.js - the page's widgets: a virtual tree (call tree and
 * bottom-up), the flame graph and icicle (canvas), the timeline's tracks
 * (canvas, only the visible ones drawn), sortable tables, and the source
 * and assembly listing. They draw what page-main.js gives them; clicks
 * and keys go back through callbacks. */
"use strict";

function $(id) { return document.getElementById(id); }
function esc(s) { return String(s).replace(/[&<>"]/g, function (c) { return { "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;" }[c]; }); }
function el(tag, cls, text) { var e = document.createElement(tag); if (cls) e.className = cls; if (text !== undefined) e.textContent = text; return e; }
/* text with the search's matches marked */
function marked(text, q) {
  if (!q) return esc(text);
  var low = text.toLowerCase(), out = "", at = 0, i;
  while ((i = low.indexOf(q, at)) >= 0) {
    out += esc(text.slice(at, i)) + "<mark>" + esc(text.slice(i, i + q.length)) + "</mark>";
    at = i + q.length;
  }
  return out + esc(text.slice(at));
}
function fmtMs(ns) {
  var ms = ns / 1e6;
  if (!ns) return "0 ms";
  return ms >= 10000 ? (ms / 1000).toFixed(1) + " s" : ms >= 100 ? ms.toFixed(0) + " ms" : ms >= 1 ? ms.toFixed(1) + " ms" : ms.toFixed(2) + " ms";
}
function fmtCount(n) { return Math.round(n).toLocaleString("en-US"); }
function pct(a, b) { return b ? (100 * a / b).toFixed(1) + "%" : "\u2013"; }
/* one colour per kind of frame, varied by name so neighbours differ */
var KIND_HUE = { u: [22, 80, 62], s: [40, 55, 70], k: [0, 55, 68], p: [210, 60, 66], j: [50, 85, 58], o: [225, 30, 72], "?": [0, 0, 75] };
function frameColor(kind, name, dim) {
  var h = KIND_HUE[kind] || KIND_HUE["?"], v = 0;
  for (var i = 0; i < name.length && i < 12; i++) v = (v * 31 + name.charCodeAt(i)) & 1023;
  var l = h[2] + (v % 10) - 5;
  return "hsl(" + (h[0] + (v % 14) - 7) + "," + h[1] + "%," + (dim ? Math.min(92, l + 22) : l) + "%)";
}

/* ---- a tree of rows, only the visible ones in the document ---- */

var ROW_H = 20;

/* src: {roots(), kids(id), info(id) -> {name, module, kind, total, self,
 * func}, key(id)}; opts: {onSelect(id), onActivate(id), fmt(w), total()} */
function TreeView(box, src, opts) {
  var self = this;
  this.box = box;
  this.src = src;
  this.opts = opts;
  this.open = new Set();
  this.sel = -1;
  this.rows = [];
  this.depth = [];
  box.innerHTML = "<div class=\"thead\"><span class=\"c\">Total</span><span class=\"c p\">%</span><span class=\"c\">Self</span>" +
    "<span class=\"c p\">%</span><span class=\"n\">Function</span></div><div class=\"tbody\" tabindex=\"0\"><div class=\"spacer\"></div><div class=\"win\"></div></div>";
  this.body = box.querySelector(".tbody");
  this.spacer = box.querySelector(".spacer");
  this.win = box.querySelector(".win");
  this.body.addEventListener("scroll", function () { self.draw(); });
  this.body.addEventListener("keydown", function (ev) { self.key(ev); });
  this.win.addEventListener("click", function (ev) {
    var r = ev.target.closest(".r");
    if (!r) return;
    var i = +r.getAttribute("data-i");
    if (ev.target.classList.contains("tw")) self.toggle(self.rows[i]);
    self.select(self.rows[i]);
    self.body.focus({ preventScroll: true });
  });
  this.win.addEventListener("dblclick", function (ev) {
    var r = ev.target.closest(".r");
    if (r && !ev.target.classList.contains("tw")) self.toggle(self.rows[+r.getAttribute("data-i")]);
  });
}
TreeView.prototype.setSource = function (src) { this.src = src; this.flatten(); };
TreeView.prototype.flatten = function () {
  var rows = [], depth = [], src = this.src, open = this.open;
  function walk(ids, d) {
    for (var i = 0; i < ids.length; i++) {
      rows.push(ids[i]);
      depth.push(d);
      if (open.has(src.key(ids[i]))) walk(src.kids(ids[i]), d + 1);
    }
  }
  walk(src.roots(), 0);
  this.rows = rows;
  this.depth = depth;
  this.spacer.style.height = rows.length * ROW_H + "px";
  this.draw();
};
TreeView.prototype.draw = function () {
  var top = this.body.scrollTop, h = this.body.clientHeight || 400;
  var first = Math.max(0, Math.floor(top / ROW_H) - 5), last = Math.min(this.rows.length, Math.ceil((top + h) / ROW_H) + 5);
  if (!this.rows.length) {
    this.win.innerHTML = "<div class=\"note empty\">" + esc(this.opts.empty ? this.opts.empty() : "nothing here") + "</div>";
    return;
  }
  var html = "", q = this.opts.search ? this.opts.search() : "", tot = this.opts.total(), fmt = this.opts.fmt;
  for (var i = first; i < last; i++) {
    var id = this.rows[i], inf = this.src.info(id), kids = this.src.kids(id).length;
    var isOpen = this.open.has(this.src.key(id));
    html += "<div class=\"r" + (this.src.key(id) === this.sel ? " sel" : "") + "\" data-i=\"" + i + "\" style=\"top:" + i * ROW_H + "px\">" +
      "<span class=\"c\">" + fmt(inf.total) + "</span><span class=\"c p\">" + pct(inf.total, tot) + "</span>" +
      "<span class=\"c\">" + (inf.self ? fmt(inf.self) : "") + "</span><span class=\"c p\">" + (inf.self ? pct(inf.self, tot) : "") + "</span>" +
      "<span class=\"n\" style=\"padding-left:" + (4 + this.depth[i] * 14) + "px\"><span class=\"tw\">" + (kids ? (isOpen ? "\u25be" : "\u25b8") : "") +
      "</span><i class=\"sw\" style=\"background:" + frameColor(inf.kind, inf.name) + "\"></i><span title=\"" + esc(inf.full || inf.name) + "\">" + marked(inf.name, q) + "</span>" +
      (inf.module ? " <span class=\"mod\">" + esc(inf.module) + "</span>" : "") + "</span></div>";
  }
  this.win.innerHTML = html;
};
TreeView.prototype.index = function (key) {
  for (var i = 0; i < this.rows.length; i++) if (this.src.key(this.rows[i]) === key) return i;
  return -1;
};
TreeView.prototype.select = function (id, quiet) {
  this.sel = id < 0 ? -1 : this.src.key(id);
  var i = this.index(this.sel);
  if (i >= 0) {
    var top = i * ROW_H, b = this.body;
    if (top < b.scrollTop) b.scrollTop = top;
    else if (top + ROW_H > b.scrollTop + b.clientHeight) b.scrollTop = top + ROW_H - b.clientHeight;
  }
  this.draw();
  if (!quiet && this.opts.onSelect) this.opts.onSelect(id);
};
TreeView.prototype.toggle = function (id) {
  var k = this.src.key(id);
  if (this.open.has(k)) this.open.delete(k); else if (this.src.kids(id).length) this.open.add(k);
  this.flatten();
};
TreeView.prototype.expandAll = function (id) {
  var src = this.src, open = this.open, n = 0;
  (function walk(x) { if (n++ > 20000) return; var k = src.kids(x); if (k.length) { open.add(src.key(x)); k.forEach(walk); } })(id);
  this.flatten();
};
/* open the heaviest path from the roots while it holds most of the time */
TreeView.prototype.openHeaviest = function () {
  var ids = this.src.roots(), tot = this.opts.total(), d = 0;
  while (ids.length && d++ < 40) {
    var top = ids[0];
    if (this.src.info(top).total < 0.25 * tot) break;
    this.open.add(this.src.key(top));
    ids = this.src.kids(top);
  }
  this.flatten();
};
TreeView.prototype.key = function (ev) {
  var i = this.index(this.sel), id = i >= 0 ? this.rows[i] : -1, page = Math.max(1, Math.floor(this.body.clientHeight / ROW_H) - 1);
  var k = ev.key, kids;
  if (k === "ArrowDown" || k === "j") i = Math.min(this.rows.length - 1, i + 1);
  else if (k === "ArrowUp" || k === "k") i = Math.max(0, i - 1);
  else if (k === "PageDown") i = Math.min(this.rows.length - 1, i + page);
  else if (k === "PageUp") i = Math.max(0, i - page);
  else if (k === "Home") i = 0;
  else if (k === "End") i = this.rows.length - 1;
  else if (k === "ArrowRight" && id >= 0) {
    kids = this.src.kids(id);
    if (kids.length && !this.open.has(this.sel)) { this.toggle(id); ev.preventDefault(); return; }
    if (kids.length) i++;
  } else if (k === "ArrowLeft" && id >= 0) {
    if (this.open.has(this.sel)) { this.toggle(id); ev.preventDefault(); return; }
    for (var d = this.depth[i]; i > 0 && this.depth[i] >= d;) i--;
    if (d === 0) i = this.index(this.sel);
  } else if (k === "*" && id >= 0) { this.expandAll(id); ev.preventDefault(); return; }
  else if (k === "Enter" && id >= 0) { if (this.opts.onActivate) this.opts.onActivate(id); ev.preventDefault(); return; }
  else if (k === "f" && id >= 0 && this.opts.onFocus) { this.opts.onFocus(id); ev.preventDefault(); return; }
  else return;
  ev.preventDefault();
  if (i >= 0 && i < this.rows.length) this.select(this.rows[i]);
};

/* ---- the flame graph (and icicle) on a canvas ---- */

var FLAME_H = 18;

/* opts: {onSelect(callNode), fmt, search(), selFunc(), icicle} */
function Flame(box, opts) {
  var self = this;
  this.box = box;
  this.opts = opts;
  this.canvas = el("canvas");
  this.tip = el("div", "tip");
  box.appendChild(this.canvas);
  box.appendChild(this.tip);
  this.zoom = -1;
  this.hit = [];
  this.canvas.addEventListener("mousemove", function (ev) { self.hover(ev); });
  this.canvas.addEventListener("mouseleave", function () { self.tip.style.display = "none"; self.hoverNode = -1; });
  this.canvas.addEventListener("click", function (ev) { var h = self.at(ev); if (h >= 0 && self.opts.onSelect) self.opts.onSelect(h); });
  this.canvas.addEventListener("dblclick", function (ev) { var h = self.at(ev); self.zoom = h; self.draw(); if (self.opts.onZoom) self.opts.onZoom(); });
}
Flame.prototype.set = function (pass, tree) {
  this.pass = pass;
  this.tree = tree;
  if (this.zoom >= pass.n || (this.zoom >= 0 && !pass.total[this.zoom])) this.zoom = -1;
  this.draw();
};
/* frames are laid out by name within their caller, as flame graphs do */
Flame.prototype.layout = function () {
  var P = this.pass, T = this.tree, kids = P.kids(), m = P.x.m, W = this.width, out = [], maxd = 0;
  var total = this.zoom >= 0 ? P.total[this.zoom] : P.rootTotal;
  if (!total) return { frames: out, depth: 0 };
  var scale = W / total, zd = this.zoom >= 0 ? T.depth[this.zoom] : 0;
  function byName(a, b) { return m.fname[T.func[a]] < m.fname[T.func[b]] ? -1 : m.fname[T.func[a]] > m.fname[T.func[b]] ? 1 : a - b; }
  function walk(ids, x, d) {
    ids = ids.slice().sort(byName);
    for (var i = 0; i < ids.length; i++) {
      var c = ids[i], w = P.total[c] * scale;
      if (w >= 0.35) {
        out.push(c, x, w, d);
        if (d > maxd) maxd = d;
        if (d < 400) walk(kids[c], x, d + 1);
      }
      x += w;
    }
  }
  if (this.zoom >= 0) {
    /* the callers of the zoomed frame across the whole width */
    var up = [];
    for (var a = T.parent[this.zoom]; a >= 0; a = T.parent[a]) up.push(a);
    up.reverse().forEach(function (a, i) { out.push(a, 0, W, i); });
    out.push(this.zoom, 0, W, zd);
    maxd = zd;
    walk(kids[this.zoom], 0, zd + 1);
  } else {
    walk(kids[P.n], 0, 0);
  }
  return { frames: out, depth: maxd };
};
Flame.prototype.draw = function () {
  if (!this.pass) return;
  var dpr = window.devicePixelRatio || 1, c = this.canvas, g = c.getContext("2d");
  this.width = Math.max(100, this.box.clientWidth - 2);
  var L = this.layout(), fr = L.frames, icicle = this.opts.icicle(), rows = L.depth + 1;
  /* a flame graph stands on the bottom of its panel */
  var H = Math.max(rows * FLAME_H + 4, icicle ? 40 : this.box.clientHeight - 2);
  c.width = this.width * dpr;
  c.height = H * dpr;
  c.style.width = this.width + "px";
  c.style.height = H + "px";
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, this.width, H);
  g.font = "12px system-ui, sans-serif";
  g.textBaseline = "middle";
  var T = this.tree, m = this.pass.x.m, q = this.opts.search(), sf = this.opts.selFunc(), sn = this.opts.selNode();
  this.hit = fr;
  this.rowsH = H;
  this.icicle = icicle;
  this.maxDepth = L.depth;
  for (var i = 0; i < fr.length; i += 4) {
    var n = fr[i], x = fr[i + 1], w = fr[i + 2], d = fr[i + 3], f = T.func[n];
    var y = icicle ? d * FLAME_H : H - (d + 1) * FLAME_H - 2, name = m.fname[f];
    var dim = (q && m.flower[f].indexOf(q) < 0) || (this.zoom >= 0 && d < T.depth[this.zoom]);
    g.fillStyle = frameColor(m.fkind[f], name, dim);
    g.fillRect(x, y, Math.max(w - 0.5, 0.5), FLAME_H - 1);
    if (f === sf) { g.strokeStyle = n === sn ? "#000" : "#555"; g.lineWidth = n === sn ? 2 : 1; g.strokeRect(x + 0.5, y + 0.5, Math.max(w - 1.5, 0.5), FLAME_H - 2); }
    if (w > 30) {
      g.fillStyle = dim ? "#777" : "#111";
      var room = Math.floor((w - 6) / 6.5), label = name.length > room ? name.slice(0, Math.max(0, room - 1)) + "\u2026" : name;
      g.fillText(label, x + 3, y + FLAME_H / 2);
    }
  }
  if (!icicle && !this.drawn) { this.box.scrollTop = this.box.scrollHeight; }
  this.drawn = true;
};
Flame.prototype.at = function (ev) {
  var r = this.canvas.getBoundingClientRect(), x = ev.clientX - r.left, y = ev.clientY - r.top, fr = this.hit;
  var d = this.icicle ? Math.floor(y / FLAME_H) : Math.floor((this.rowsH - 2 - y) / FLAME_H);
  for (var i = 0; i < fr.length; i += 4) if (fr[i + 3] === d && x >= fr[i + 1] && x < fr[i + 1] + fr[i + 2]) return fr[i];
  return -1;
};
Flame.prototype.hover = function (ev) {
  var n = this.at(ev), t = this.tip;
  if (n < 0) { t.style.display = "none"; return; }
  var m = this.pass.x.m, f = this.tree.func[n], P = this.pass, fmt = this.opts.fmt;
  t.innerHTML = "<b>" + esc(m.fname[f]) + "</b>" + (m.ffull[f] !== m.fname[f] ? "<br><span class=\"mod\">" + esc(m.ffull[f]) + "</span>" : "") + "<br>" + fmt(P.total[n]) + " total (" + pct(P.total[n], P.rootTotal) + "), " +
    fmt(P.self[n]) + " self<br><span class=\"mod\">" + esc(m.fmodule[f] || "") + " \u00b7 " + KIND_NAMES[m.fkind[f]] + "</span>";
  t.style.display = "block";
  var br = this.box.getBoundingClientRect();
  var x = ev.clientX - br.left + 14, y = ev.clientY - br.top + this.box.scrollTop + 14;
  if (x + t.offsetWidth > br.width - 4) x = Math.max(0, ev.clientX - br.left - t.offsetWidth - 10);
  t.style.left = x + "px";
  t.style.top = y + "px";
};

/* ---- tables ---- */

/* cols: [{name, cls, get(row) -> text/number, sort(row) -> key, html}];
 * the first sort column descending by default. */
function Table(box, cols, opts) {
  var self = this;
  this.box = box;
  this.cols = cols;
  this.opts = opts;
  this.sortCol = opts.sortCol || 0;
  this.desc = true;
  box.innerHTML = "<table><thead><tr></tr></thead><tbody></tbody></table><div class=\"more note\"></div>";
  var hr = box.querySelector("thead tr");
  cols.forEach(function (c, i) {
    var th = el("th", c.cls || "", c.name);
    th.addEventListener("click", function () { if (self.sortCol === i) self.desc = !self.desc; else { self.sortCol = i; self.desc = c.cls !== "n"; } self.render(); });
    hr.appendChild(th);
  });
  box.querySelector("tbody").addEventListener("click", function (ev) {
    var tr = ev.target.closest("tr");
    if (tr && self.opts.onClick) self.opts.onClick(self.shown[+tr.getAttribute("data-i")], ev);
  });
  box.querySelector("tbody").addEventListener("dblclick", function (ev) {
    var tr = ev.target.closest("tr");
    if (tr && self.opts.onDouble) self.opts.onDouble(self.shown[+tr.getAttribute("data-i")], ev);
  });
}
Table.prototype.set = function (rows) { this.rows = rows; this.render(); };
Table.prototype.render = function () {
  var c = this.cols[this.sortCol], desc = this.desc, key = c.sort || c.get, lim = this.opts.limit || 1e9, self = this;
  var rows = this.rows.slice().sort(function (a, b) {
    var x = key(a), y = key(b);
    return (x < y ? -1 : x > y ? 1 : 0) * (desc ? -1 : 1);
  });
  this.shown = rows.slice(0, lim);
  var html = "", q = this.opts.search ? this.opts.search() : "";
  this.shown.forEach(function (r, i) {
    html += "<tr data-i=\"" + i + "\"" + (self.opts.isSel && self.opts.isSel(r) ? " class=\"sel\"" : "") + ">";
    self.cols.forEach(function (col) {
      var v = col.get(r);
      html += "<td" + (col.cls ? " class=\"" + col.cls + "\"" : "") + ">" + (col.html ? col.html(r, q) : esc(v)) + "</td>";
    });
    html += "</tr>";
  });
  this.box.querySelector("tbody").innerHTML = html;
  var hs = this.box.querySelectorAll("th");
  for (var i = 0; i < hs.length; i++) hs[i].setAttribute("data-sort", i === this.sortCol ? (desc ? "\u25be" : "\u25b4") : "");
  this.box.querySelector(".more").textContent = rows.length > lim ? (rows.length - lim) + " more (refine with the search box)" : "";
};
