/* page-timeline.js - the timeline: one track per thread under a header
 * per process, each a CPU graph (the share of the column the thread ran,
 * from its samples: grey for samples the filters drop, coloured for
 * those they keep, dark for those under the selected call node) over a
 * strip of its off-CPU waits coloured by reason. Any number of threads:
 * the tracks scroll, and only the visible ones are drawn. Dragging
 * selects a time range; a click selects a thread (Ctrl or Shift: adds
 * it), a click on a process header its threads. */
"use strict";

var TL_LABEL = 200, TL_PROC_H = 22, TL_THREAD_H = 26, TL_STRIP = 5;
var REASON_COLOR = { other: "#9a9a9a", lock: "#d0453a", read: "#3b7dd8", write: "#2aa198", sleep: "#8e7cc3",
  poll: "#5b9bd5", fault: "#e69138", preempted: "#c9c9c9", wait: "#6aa84f" };

/* text cut to fit w pixels */
function fitText(g, s, w) {
  if (g.measureText(s).width <= w) return s;
  while (s.length > 1 && g.measureText(s + "\u2026").width > w) s = s.slice(0, -1);
  return s + "\u2026";
}

/* opts: {onRange(range or null), onThreads(ids, add), density(cols) ->
 * Density, state() -> {range, view, threads}, fmtTime(ns)} */
function Timeline(box, opts) {
  var self = this;
  this.box = box;
  this.opts = opts;
  this.collapsed = new Set();
  box.innerHTML = "<canvas class=\"axis\"></canvas><div class=\"tlscroll\"><canvas class=\"tracks\"></canvas><div class=\"tlspacer\"></div></div>" +
    "<div class=\"tip\"></div>";
  this.legend = document.getElementById("legend");
  this.axis = box.querySelector("canvas.axis");
  this.scroll = box.querySelector(".tlscroll");
  this.canvas = box.querySelector("canvas.tracks");
  this.spacer = box.querySelector(".tlspacer");
  this.tip = box.querySelector(".tip");
  this.scroll.addEventListener("scroll", function () { self.draw(); });
  this.canvas.addEventListener("mousedown", function (ev) { self.down(ev); });
  this.axis.addEventListener("mousedown", function (ev) { self.down(ev); });
  window.addEventListener("mousemove", function (ev) { self.move(ev); });
  window.addEventListener("mouseup", function (ev) { self.up(ev); });
  this.canvas.addEventListener("mousemove", function (ev) { if (self.drag === null) self.hover(ev); });
  this.canvas.addEventListener("mouseleave", function () { self.tip.style.display = "none"; });
  this.drag = null;
}

/* The rows: a header per process (busiest first), its threads under it. */
Timeline.prototype.setModel = function (m) {
  this.m = m;
  var lg = "<i style=\"background:#e8914a\"></i>user <i style=\"background:#d05a5a\"></i>kernel " +
    (m.hasKind.p || m.hasKind.j ? "<i style=\"background:#5b8fd0\"></i>" + (m.hasKind.p ? "Python" : "JS") + " " : "") +
    "<i style=\"background:#d8d8d8\"></i>filtered out <i style=\"background:#3a1a00\"></i>selected function";
  if (m.nOff) {
    var seen = {};
    for (var i = 0; i < m.nOff; i++) seen[m.oreason[i]] = 1;
    lg += " &nbsp;off-CPU:";
    Object.keys(seen).forEach(function (r) { lg += " <i class=\"strip\" style=\"background:" + (REASON_COLOR[m.reasons[r]] || "#999") + "\"></i>" + m.reasons[r]; });
  }
  this.legend.innerHTML = lg;
  var procs = new Map(), idle = { pid: -1, name: "without samples or waits", threads: [], w: -1, idle: true }, t;
  for (t = 0; t < m.nThreads; t++) {
    if (m.toutside[t]) continue;
    if (!m.threadSamples[t] && !m.threadOff[t]) { idle.threads.push(t); continue; }
    var p = procs.get(m.tpid[t]);
    if (!p) { p = { pid: m.tpid[t], name: m.tpname[t], threads: [], w: 0 }; procs.set(m.tpid[t], p); }
    p.threads.push(t);
    p.w += m.threadSamples[t] * m.interval + m.threadOff[t] * 0.001;
  }
  var list = Array.from(procs.values()).sort(function (a, b) { return b.w - a.w || a.pid - b.pid; });
  list.forEach(function (p) {
    p.threads.sort(function (a, b) { return m.threadSamples[b] - m.threadSamples[a] || m.threadOff[b] - m.threadOff[a] || m.ttid[a] - m.ttid[b]; });
  });
  /* the threads the recording names but saw nothing of: last, folded */
  if (idle.threads.length) {
    idle.threads.sort(function (a, b) { return m.tpid[a] - m.tpid[b] || m.ttid[a] - m.ttid[b]; });
    list.push(idle);
    if (!this.m0) this.collapsed.add(-1);
  }
  this.m0 = true;
  this.procs = list;
  this.nTracks = list.reduce(function (a, p) { return a + p.threads.length; }, 0);
  this.layout();
};
Timeline.prototype.layout = function () {
  var rows = [], y = 0, self = this;
  this.procs.forEach(function (p) {
    /* a process of one thread is one track */
    if (p.threads.length === 1 && !p.idle) { rows.push({ y: y, h: TL_THREAD_H, t: p.threads[0], proc: p, single: true }); y += TL_THREAD_H; return; }
    rows.push({ y: y, h: TL_PROC_H, proc: p });
    y += TL_PROC_H;
    if (self.collapsed.has(p.pid)) return;
    p.threads.forEach(function (t) { rows.push({ y: y, h: TL_THREAD_H, t: t, proc: p }); y += TL_THREAD_H; });
  });
  this.rows = rows;
  this.height = y;
  /* as tall as the tracks need, up to a quarter of the window */
  this.box.style.height = Math.max(80, Math.min(y + 24, Math.round(window.innerHeight * 0.27))) + "px";
  var vh = this.scroll.clientHeight || 200;
  this.spacer.style.height = Math.max(0, y - vh) + "px";
};
Timeline.prototype.cols = function () { return Math.max(50, Math.min(2400, (this.box.clientWidth || 800) - TL_LABEL - 14)); };
/* the density, recomputed when the width or what it depends on changed */
Timeline.prototype.refresh = function () {
  this.dens = this.opts.density(this.cols());
  this.draw();
};
Timeline.prototype.timeAt = function (clientX) {
  var r = this.canvas.getBoundingClientRect(), d = this.dens, f = (clientX - r.left - TL_LABEL) / (r.width - TL_LABEL);
  f = Math.max(0, Math.min(1, f));
  return d.v0 + f * (d.v1 - d.v0);
};
Timeline.prototype.xOf = function (t, w) {
  var d = this.dens;
  return TL_LABEL + (t - d.v0) / (d.v1 - d.v0) * (w - TL_LABEL);
};
Timeline.prototype.rowAt = function (clientY) {
  var r = this.canvas.getBoundingClientRect(), y = clientY - r.top + this.scroll.scrollTop, rows = this.rows;
  var lo = 0, hi = rows.length - 1;
  while (lo < hi) { var mid = (lo + hi + 1) >> 1; if (rows[mid].y <= y) lo = mid; else hi = mid - 1; }
  return rows.length && y >= rows[lo].y && y < rows[lo].y + rows[lo].h ? rows[lo] : null;
};
Timeline.prototype.drawAxis = function (w, dpr) {
  var a = this.axis, g = a.getContext("2d"), d = this.dens, H = 22, st = this.opts.state();
  a.width = w * dpr; a.height = H * dpr; a.style.width = w + "px"; a.style.height = H + "px";
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.fillStyle = "#f4f4f7"; g.fillRect(0, 0, w, H);
  g.fillStyle = "#555"; g.font = "11px system-ui, sans-serif"; g.textBaseline = "middle";
  var np = this.procs.filter(function (p) { return !p.idle; }).length;
  g.fillText(this.nTracks + " thread" + (this.nTracks === 1 ? "" : "s") + " in " + np + " process" + (np === 1 ? "" : "es"), 6, H / 2);
  var span = (d.v1 - d.v0) / 1e9, step = Math.pow(10, Math.floor(Math.log10(span / 6)));
  if (span / step > 12) step *= 5; else if (span / step > 6) step *= 2;
  for (var t = Math.ceil(d.v0 / 1e9 / step) * step; t <= d.v1 / 1e9 + 1e-12; t += step) {
    var x = this.xOf(t * 1e9, w);
    g.fillStyle = "#bbb"; g.fillRect(x, H - 6, 1, 6);
    g.fillStyle = "#444"; g.fillText(t.toFixed(Math.min(9, Math.max(0, -Math.floor(Math.log10(step) + 1e-9)))) + " s", x + 3, H / 2 - 1);
  }
  var sel = this.preview || st.range;
  if (sel) {
    var x0 = this.xOf(sel[0], w), x1 = this.xOf(sel[1], w);
    g.fillStyle = "rgba(40,90,200,0.25)"; g.fillRect(x0, 0, Math.max(2, x1 - x0), H);
  }
};
Timeline.prototype.draw = function () {
  if (!this.dens || !this.m) return;
  var dpr = window.devicePixelRatio || 1, w = this.scroll.clientWidth, vh = this.scroll.clientHeight, c = this.canvas, g = c.getContext("2d");
  var top = this.scroll.scrollTop, d = this.dens, m = this.m, st = this.opts.state(), cols = d.cols, i;
  this.drawAxis(w, dpr);
  c.width = w * dpr; c.height = vh * dpr; c.style.width = w + "px"; c.style.height = vh + "px";
  g.setTransform(dpr, 0, 0, dpr, 0, 0);
  g.clearRect(0, 0, w, vh);
  g.font = "11px system-ui, sans-serif";
  g.textBaseline = "middle";
  var gw = w - TL_LABEL, cw = gw / cols, cap = d.capacity;
  for (i = 0; i < this.rows.length; i++) {
    var r = this.rows[i], y = r.y - top;
    if (y + r.h < 0) continue;
    if (y > vh) break;
    if (r.t === undefined) { this.drawProc(g, r, y, w, cw, cap); continue; }
    var t = r.t, sel = st.threads && st.threads.has(t);
    g.fillStyle = sel ? "#dde8fb" : (i & 1) ? "#fff" : "#fafafa";
    g.fillRect(0, y, w, r.h);
    g.fillStyle = "#222";
    if (r.single) g.font = "bold 11px system-ui, sans-serif";
    g.fillText(fitText(g, (m.tname[t] || "?") + " " + m.ttid[t] + (r.single && m.tpid[t] !== m.ttid[t] ? " (pid " + m.tpid[t] + ")" : ""), TL_LABEL - (r.single ? 6 : 18)), r.single ? 4 : 14, y + r.h / 2 - 1);
    g.font = "11px system-ui, sans-serif";
    var base = t * cols, gh = r.h - TL_STRIP - 3;
    for (var k = 0; k < cols; k++) {
      var a = d.all[base + k];
      if (a) {
        var x = TL_LABEL + k * cw, ha = Math.min(1, a / cap) * gh, hk = Math.min(1, d.kept[base + k] / cap) * gh, hh = Math.min(1, d.hl[base + k] / cap) * gh;
        g.fillStyle = "#d8d8d8"; g.fillRect(x, y + 1 + gh - ha, Math.max(cw, 1), ha);
        if (hk) {
          /* the kept samples by what ran: kernel at the bottom, then
           * Python or JavaScript, then native user code */
          var kk = hk * d.kern[base + k] / d.kept[base + k], ks = hk * d.script[base + k] / d.kept[base + k];
          g.fillStyle = "#e8914a"; g.fillRect(x, y + 1 + gh - hk, Math.max(cw, 1), hk - kk - ks);
          if (ks) { g.fillStyle = "#5b8fd0"; g.fillRect(x, y + 1 + gh - kk - ks, Math.max(cw, 1), ks); }
          if (kk) { g.fillStyle = "#d05a5a"; g.fillRect(x, y + 1 + gh - kk, Math.max(cw, 1), kk); }
        }
        if (hh) { g.fillStyle = "rgba(50,20,0,0.75)"; g.fillRect(x, y + 1 + gh - hh, Math.max(cw, 1), hh); }
      }
      var rs = d.offReason[base + k];
      if (rs !== 255) {
        g.globalAlpha = 0.25 + 0.75 * d.offShare[base + k];
        g.fillStyle = REASON_COLOR[m.reasons[rs]] || "#999";
        g.fillRect(TL_LABEL + k * cw, y + r.h - TL_STRIP - 1, Math.max(cw, 1), TL_STRIP);
        g.globalAlpha = 1;
      }
    }
    g.fillStyle = "#eee"; g.fillRect(0, y + r.h - 1, w, 1);
  }
  var sr = this.preview || st.range;
  if (sr) {
    var x0 = this.xOf(sr[0], w), x1 = this.xOf(sr[1], w);
    g.fillStyle = "rgba(40,90,200,0.15)"; g.fillRect(x0, 0, Math.max(2, x1 - x0), vh);
    g.fillStyle = "rgba(40,90,200,0.6)"; g.fillRect(x0, 0, 1, vh); g.fillRect(x1, 0, 1, vh);
  }
  g.fillStyle = "#ccc"; g.fillRect(TL_LABEL - 1, 0, 1, vh);
};
Timeline.prototype.drawProc = function (g, r, y, w, cw, cap) {
  var p = r.proc, d = this.dens, cols = d.cols, m = this.m, open = !this.collapsed.has(p.pid);
  g.fillStyle = "#e9e9f1"; g.fillRect(0, y, w, r.h);
  var count = p.threads.length + (p.threads.length === 1 ? " thread" : " threads");
  g.font = "11px system-ui, sans-serif"; g.fillStyle = "#666";
  var cw2 = g.measureText(count).width;
  g.fillText(count, TL_LABEL - 6 - cw2, y + r.h / 2);
  g.fillStyle = "#111"; g.font = "bold 11px system-ui, sans-serif";
  g.fillText(fitText(g, (open ? "\u25be " : "\u25b8 ") + (p.name || "?") + (p.idle ? "" : " " + p.pid), TL_LABEL - 14 - cw2), 2, y + r.h / 2);
  g.font = "11px system-ui, sans-serif";
  /* the process's CPU: its threads' samples summed, scaled to its busiest column */
  var sum = new Float32Array(cols), max = 0, k;
  p.threads.forEach(function (t) { for (k = 0; k < cols; k++) sum[k] += d.kept[t * cols + k]; });
  for (k = 0; k < cols; k++) if (sum[k] > max) max = sum[k];
  var scale = Math.max(max, cap), gh = r.h - 4;
  g.fillStyle = "#a9a2c9";
  for (k = 0; k < cols; k++) if (sum[k]) { var h = sum[k] / scale * gh; g.fillRect(TL_LABEL + k * cw, y + 2 + gh - h, Math.max(cw, 1), h); }
  void m;
};
Timeline.prototype.down = function (ev) {
  if (!this.dens || ev.button !== 0) return;
  var r = this.canvas.getBoundingClientRect();
  this.drag = { x: ev.clientX, t: this.timeAt(ev.clientX), label: ev.clientX - r.left < TL_LABEL && ev.target === this.canvas };
  ev.preventDefault();
};
Timeline.prototype.move = function (ev) {
  if (this.drag === null || this.drag.label || Math.abs(ev.clientX - this.drag.x) < 4) return;
  var t = this.timeAt(ev.clientX);
  this.preview = [Math.min(this.drag.t, t), Math.max(this.drag.t, t)];
  this.draw();
};
Timeline.prototype.up = function (ev) {
  if (this.drag === null) return;
  var dr = this.drag;
  this.drag = null;
  if (this.preview) {
    var p = this.preview;
    this.preview = null;
    this.opts.onRange(p);
    return;
  }
  if (ev.target !== this.canvas) return;
  var row = this.rowAt(ev.clientY), add = ev.ctrlKey || ev.metaKey || ev.shiftKey;
  if (!row) return;
  if (row.t === undefined) {
    var r = this.canvas.getBoundingClientRect();
    if (ev.clientX - r.left < 16 || dr.label && ev.clientX - r.left < TL_LABEL && !add) {
      /* the triangle or the name: open or close the process */
      if (this.collapsed.has(row.proc.pid)) this.collapsed.delete(row.proc.pid); else this.collapsed.add(row.proc.pid);
      this.layout();
      this.draw();
      return;
    }
    this.opts.onThreads(row.proc.threads, add);
    return;
  }
  this.opts.onThreads([row.t], add);
};
Timeline.prototype.hover = function (ev) {
  var row = this.rowAt(ev.clientY), tip = this.tip, m = this.m;
  var r = this.canvas.getBoundingClientRect(), x = ev.clientX - r.left;
  if (!row || x < TL_LABEL) {
    if (row && row.t !== undefined) {
      tip.innerHTML = esc(m.tname[row.t] + " (tid " + m.ttid[row.t] + ", pid " + m.tpid[row.t] + ")") + "<br><span class=\"mod\">click: only this thread; Ctrl-click: add it</span>";
    } else if (row) {
      tip.innerHTML = esc(row.proc.name + " (pid " + row.proc.pid + "), " + row.proc.threads.length + " threads") + "<br><span class=\"mod\">click the name: fold; elsewhere: its threads</span>";
    } else { tip.style.display = "none"; return; }
  } else {
    var d = this.dens, k = Math.min(d.cols - 1, Math.floor((x - TL_LABEL) / (r.width - TL_LABEL) * d.cols));
    var t = this.timeAt(ev.clientX), txt = this.opts.fmtTime(t);
    if (row.t !== undefined) {
      var s = row.t * d.cols + k;
      txt += "<br>" + esc(m.threadLabel(row.t)) + ": " + Math.round(100 * Math.min(1, d.all[s] / d.capacity)) + "% on the CPU";
      if (d.offReason[s] !== 255) txt += ", off the CPU " + Math.round(100 * d.offShare[s]) + "% (mostly " + m.reasons[d.offReason[s]] + ")";
    } else {
      txt += "<br>" + esc(row.proc.name) + " " + row.proc.pid;
    }
    tip.innerHTML = txt;
  }
  tip.style.display = "block";
  var bx = this.box.getBoundingClientRect(), tx = ev.clientX - bx.left + 12;
  if (tx + tip.offsetWidth > bx.width) tx = ev.clientX - bx.left - tip.offsetWidth - 12;
  tip.style.left = tx + "px";
  tip.style.top = (ev.clientY - bx.top + 14) + "px";
};
