/* page-main.js - the page: one selection (a time range, a set of threads,
 * a focused function, the CPU / off-CPU / wall view, the frame kinds,
 * the search, the selected function) that every panel follows, shown in
 * one bar with a way to clear each part. */
"use strict";

var M = null, X = null, P = null, INV = null;
var state = {
  mode: "cpu", kinds: "all", kernelWaits: false, search: "", focus: -1,
  range: null,      /* [t0, t1] ns after the start, or null: all */
  view: null,       /* the timeline's zoom [v0, v1], or null */
  threads: null,    /* Set of thread indexes, or null: all */
  selFunc: -1, selPath: null, left: "tree", right: "flame"
};
var ui = {};
var version = -1, loading = false;
window.stax = { state: state, ui: ui, model: function () { return M; }, pass: function () { return P; }, timing: {} };

function fmtW(w) { return state.mode === "cpu" ? fmtCount(w) : fmtMs(w); }
function total() { return P ? P.rootTotal : 0; }
/* what an empty tree says */
function emptyText() {
  if (!M.nSamples && !M.nOff) return "This recording has no samples.";
  if (state.mode !== "cpu" && !M.nOff) return "This recording has no off-CPU waits (record with stax record --off-cpu).";
  return "Nothing in this selection: clear a part of it in the bar above.";
}
function fmtTime(ns) { return (ns / 1e9).toFixed(ns < 1e10 ? 3 : 2) + " s"; }
function selNode() { return P && state.selPath ? X.tree.find(state.selPath) : -1; }

/* ---- computing: the transform, the pass, then the panels ---- */

var TRANSFORM = 2, PASS = 1;
function recompute(level) {
  if (!M) return;
  var t0 = performance.now();
  if (level >= TRANSFORM || !X) {
    var oldOpen = X ? Array.from(ui.tree.open).map(function (c) { return X.tree.path(c); }) : [];
    X = new Transform(M, { kinds: state.kinds, focus: state.focus, search: state.search.toLowerCase(), kernelWaits: state.kernelWaits });
    ui.tree.open = new Set();
    oldOpen.forEach(function (p) { var c = X.tree.find(p); if (c >= 0) ui.tree.open.add(c); });
  }
  var th = null;
  if (state.threads) { th = new Uint8Array(M.nThreads); state.threads.forEach(function (t) { th[t] = 1; }); }
  P = new Pass(X, { t0: state.range ? state.range[0] : 0, t1: state.range ? state.range[1] : -1, threads: th, mode: state.mode });
  INV = null;
  /* the selected function stays selected: at its heaviest call node
   * when the transform lost the one selected */
  if (state.selFunc >= 0 && selNode() < 0) state.selPath = firstPath(state.selFunc);
  window.stax.timing.compute = performance.now() - t0;
  drawAll(level);
}

function drawAll(level) {
  drawBar();
  drawLeft();
  ui.flame.set(P, X.tree);
  drawTimeline(level);
  drawDetails();
  ui.source.show(P, state.selFunc);
  $("flamenote").textContent = P.rootTotal ? fmtW(P.rootTotal) + (state.mode === "cpu" ? " samples" : "") :
    !M.nSamples && !M.nOff ? "no samples in this recording" : state.mode !== "cpu" && !M.nOff ? "no off-CPU waits in this recording" : "nothing selected";
  flameHint();
}

function flameHint() {
  $("flamehint").textContent = P.rootTotal ? (ui.flame.zoom >= 0 ? "zoomed: double-click outside the frames to unzoom" : "click: select, double-click: zoom") : "";
}

var densKey = "";
function drawTimeline(level) {
  var key = [X && X.tr.kinds, X && X.tr.focus, X && X.tr.search, state.mode, String(state.view), String(state.selPath), state.selFunc, version, level >= TRANSFORM ? Math.random() : 0].join("|");
  if (key !== densKey) { densKey = key; ui.timeline.refresh(); } else ui.timeline.draw();
}

/* ---- the selection bar ---- */

function chip(label, clear, extra) {
  return "<span class=\"chip\">" + label + (extra || "") + "<a class=\"x\" data-clear=\"" + clear + "\" title=\"clear\">\u00d7</a></span>";
}
function drawBar() {
  var h = "";
  if (state.range) {
    h += chip("Time " + fmtTime(state.range[0]) + " \u2013 " + fmtTime(state.range[1]) + " (" + fmtMs(state.range[1] - state.range[0]) + ")", "range",
      " <a class=\"zoom\" data-zoom=\"1\" title=\"zoom the timeline to it\">zoom</a>");
  }
  if (state.view) h += chip("Zoomed to " + fmtTime(state.view[0]) + " \u2013 " + fmtTime(state.view[1]), "view");
  if (state.threads) {
    var ts = Array.from(state.threads);
    h += chip("Thread" + (ts.length > 1 ? "s " : " ") + esc(ts.slice(0, 2).map(function (t) { return M.threadLabel(t); }).join(", ")) +
      (ts.length > 2 ? " +" + (ts.length - 2) : ""), "threads");
  }
  if (state.focus >= 0) h += chip("Focus on " + esc(M.fname[state.focus]), "focus");
  if (state.kinds !== "all") h += chip("Frames: " + $("kinds").selectedOptions[0].textContent, "kinds");
  if (state.search) h += chip("Search \u201c" + esc(state.search) + "\u201d", "search");
  if (state.selFunc >= 0) h += chip("Selected " + esc(M.fname[state.selFunc]), "sel");
  $("chips").innerHTML = h || "<span class=\"note\">the whole recording: drag on the timeline for a time range, click a thread, select a function</span>";
  Array.prototype.forEach.call(document.querySelectorAll("#modes a"), function (a) { a.className = a.getAttribute("data-m") === state.mode ? "on" : ""; });
  $("kinds").value = state.kinds;
  if ($("search").value !== state.search && document.activeElement !== $("search")) $("search").value = state.search;
}
function clearPart(what) {
  var level = PASS;
  if (what === "range") state.range = null;
  else if (what === "view") state.view = null;
  else if (what === "threads") state.threads = null;
  else if (what === "focus") { state.focus = -1; level = TRANSFORM; }
  else if (what === "kinds") { state.kinds = "all"; level = TRANSFORM; }
  else if (what === "search") { state.search = ""; $("search").value = ""; level = TRANSFORM; }
  else if (what === "sel") { selectFunc(-1, null); return; }
  recompute(level);
}

/* ---- selecting ---- */

/* Select function f (and call node path, when a tree or the graph knows
 * which): every panel shows it. */
function selectFunc(f, path) {
  state.selFunc = f;
  state.selPath = path;
  var c = selNode();
  ui.tree.sel = c >= 0 ? c : -1;
  if (c >= 0) {
    for (var a = X.tree.parent[c]; a >= 0; a = X.tree.parent[a]) ui.tree.open.add(a);
    if (state.left === "tree") { ui.tree.flatten(); ui.tree.select(c, true); }
  }
  drawBar();
  if (state.left !== "tree") drawLeft(); else ui.tree.draw();
  ui.flame.draw();
  drawTimeline(0);
  drawDetails();
  ui.source.show(P, f);
}
function focusFunc(f) {
  state.focus = f;
  state.selFunc = f;
  state.selPath = [f];
  recompute(TRANSFORM);
}

/* ---- the left panel: trees and tables ---- */

function callTreeSource() {
  var T = X.tree, kids = P.kids();
  return {
    roots: function () { return kids[P.n]; },
    kids: function (c) { return kids[c] || []; },
    key: function (c) { return c; },
    info: function (c) { var f = T.func[c]; return { name: M.fname[f], full: M.ffull[f], module: M.fmodule[f], kind: M.fkind[f], total: P.total[c], self: P.self[c], func: f }; }
  };
}
function invertedSource() {
  if (!INV) INV = new Inverted(P);
  var I = INV;
  return {
    roots: function () { return I.roots; },
    kids: function (id) { return I.kids(id); },
    key: function (id) { var n = I.nodes[id]; if (n.key === undefined) n.key = (n.parent >= 0 ? I.nodes[n.parent].key + "," : "") + n.func; return n.key; },
    info: function (id) { var n = I.nodes[id], f = n.func; return { name: M.fname[f], full: M.ffull[f], module: M.fmodule[f], kind: M.fkind[f], total: n.w, self: n.parent < 0 ? n.w : 0, func: f }; }
  };
}
function drawLeft() {
  Array.prototype.forEach.call(document.querySelectorAll("#ltabs a"), function (a) { a.className = a.getAttribute("data-t") === state.left ? "on" : ""; });
  ["tree", "bu", "funcs", "threads"].forEach(function (t) { $("p-" + t).style.display = t === state.left ? "" : "none"; });
  if (state.left === "tree") {
    var first = !ui.tree.src;
    ui.tree.setSource(callTreeSource());
    if (first || !ui.tree.open.size) ui.tree.openHeaviest();
    var c = selNode();
    if (c >= 0) {
      for (var a = X.tree.parent[c]; a >= 0; a = X.tree.parent[a]) ui.tree.open.add(a);
      ui.tree.flatten();
    }
    ui.tree.select(c, true);
  } else if (state.left === "bu") {
    ui.bu.setSource(invertedSource());
    if (!ui.bu.open.size && INV.roots.length) ui.bu.open.add(ui.bu.src.key(INV.roots[0]));
    ui.bu.sel = -1;
    ui.bu.flatten();
  } else if (state.left === "funcs") {
    drawFuncs();
  } else {
    drawThreads();
  }
}
function drawFuncs() {
  var ft = P.funcTotals(), rows = [];
  if (ui.funcsMode !== state.mode) makeFuncsTable();
  for (var f = 0; f < ft.total.length; f++) if (ft.total[f] || P.blockW[f]) rows.push(f);
  ui.funcs.set(rows);
}
/* The functions table; in the off-CPU and wall views with "waited in":
 * the off-CPU time each function was the blocking caller of (as stax
 * top --off-cpu counts self time), first in the off-CPU view. */
function makeFuncsTable() {
  var fcols = [
    { name: "Self", get: function (f) { var w = P.funcTotals().self[f]; return w ? fmtW(w) : ""; }, sort: function (f) { return P.funcTotals().self[f]; } },
    { name: "%", cls: "p", get: function (f) { var w = P.funcTotals().self[f]; return w ? pct(w, total()) : ""; }, sort: function (f) { return P.funcTotals().self[f]; } },
    { name: "Total", get: function (f) { return fmtW(P.funcTotals().total[f]); }, sort: function (f) { return P.funcTotals().total[f]; } },
    { name: "%", cls: "p", get: function (f) { return pct(P.funcTotals().total[f], total()); }, sort: function (f) { return P.funcTotals().total[f]; } },
    { name: "Function", cls: "n", get: function (f) { return M.fname[f]; },
      html: function (f, q) { return "<i class=\"sw\" style=\"background:" + frameColor(M.fkind[f], M.fname[f]) + "\"></i>" + marked(M.fname[f], q); } },
    { name: "Module", cls: "n mod", get: function (f) { return M.fmodule[f] || ""; } }
  ];
  if (state.mode !== "cpu") {
    fcols.unshift({ name: "Waited in", get: function (f) { return P.blockW[f] ? fmtW(P.blockW[f]) : ""; }, sort: function (f) { return P.blockW[f]; } },
      { name: "%", cls: "p", get: function (f) { return P.blockW[f] ? pct(P.blockW[f], total()) : ""; }, sort: function (f) { return P.blockW[f]; } });
  }
  ui.funcsMode = state.mode;
  ui.funcs = new Table($("p-funcs"), fcols, {
    limit: 400, search: function () { return state.search.toLowerCase(); }, sortCol: state.mode === "wall" ? 2 : 0,
    isSel: function (f) { return f === state.selFunc; },
    onClick: function (f) { selectFunc(f, null); drawFuncs(); },
    onDouble: function (f) { focusFunc(f); }
  });
  var th = $("p-funcs").querySelector("th");
  if (state.mode !== "cpu") th.title = "off-CPU time this function was the blocking caller of: the innermost function of the program's own code on the waiting stack (as stax top --off-cpu counts self)";
}
function drawThreads() {
  var rows = [];
  for (var t = 0; t < M.nThreads; t++) if (!M.toutside[t]) rows.push(t);
  ui.threads.set(rows);
}
function threadOffTotal(t) {
  var s = 0, nr = M.reasons.length;
  for (var r = 0; r < nr; r++) s += P.threadOff[t * nr + r];
  return s;
}
function makeTables() {
  makeFuncsTable();
  var tcols = [
    { name: "Thread", cls: "n", get: function (t) { return M.threadLabel(t); },
      html: function (t) { return "<input type=\"checkbox\" tabindex=\"-1\"" + (state.threads && state.threads.has(t) ? " checked" : "") + "> " + esc(M.threadLabel(t)); } },
    { name: "Process", cls: "n", get: function (t) { return (M.tpname[t] || "?") + "/" + M.tpid[t]; } },
    { name: "Samples", get: function (t) { return fmtCount(P.threadSamples[t]); }, sort: function (t) { return P.threadSamples[t]; } },
    { name: "CPU ms", get: function (t) { return (P.threadCpu[t] / 1e6).toFixed(1); }, sort: function (t) { return P.threadCpu[t]; } }
  ];
  if (M.offCpu) {
    tcols.push({ name: "Off-CPU ms", get: function (t) { return (threadOffTotal(t) / 1e6).toFixed(1); }, sort: threadOffTotal });
    tcols.push({ name: "On-CPU %", cls: "p", get: function (t) { var o = threadOffTotal(t), c = P.threadCpu[t]; return c + o ? (100 * c / (c + o)).toFixed(1) : "\u2013"; },
      sort: function (t) { var o = threadOffTotal(t), c = P.threadCpu[t]; return c + o ? c / (c + o) : 0; } });
    tcols.push({ name: "Off the CPU by reason (ms)", cls: "n", get: function (t) {
      var nr = M.reasons.length, a = [];
      for (var r = 0; r < nr; r++) if (P.threadOff[t * nr + r] >= 5e4) a.push([M.reasons[r], P.threadOff[t * nr + r]]);
      return a.sort(function (x, y) { return y[1] - x[1]; }).map(function (x) { return x[0] + " " + (x[1] / 1e6).toFixed(1); }).join(", ");
    }, sort: threadOffTotal });
  }
  ui.threads = new Table($("p-threads"), tcols, {
    sortCol: 2, isSel: function (t) { return state.threads && state.threads.has(t); },
    onClick: function (t, ev) { pickThreads([t], ev.ctrlKey || ev.metaKey || ev.shiftKey || ev.target.tagName === "INPUT"); }
  });
}
function pickThreads(ts, add) {
  var s = add && state.threads ? new Set(state.threads) : new Set();
  if (add && state.threads && ts.every(function (t) { return s.has(t); })) ts.forEach(function (t) { s.delete(t); });
  else ts.forEach(function (t) { s.add(t); });
  state.threads = s.size ? s : null;
  recompute(PASS);
}

/* ---- the details: callers, callees, who woke the waits ---- */

function miniTable(title, rows, keyName) {
  var h = "<table class=\"mini\"><thead><tr><th>" + (state.mode === "cpu" ? "Samples" : "Time") + "</th><th class=\"p\">%</th><th class=\"n\">" + title + "</th></tr></thead><tbody>";
  rows.slice(0, 30).forEach(function (r) {
    var f = r.func !== undefined ? r.func : r.key;
    var name = keyName ? keyName(r) : f === -1 ? "[self]" : M.fname[f];
    h += "<tr" + (typeof f === "number" && f >= 0 ? " data-f=\"" + f + "\"" : "") + "><td>" + fmtW(r.w) + "</td><td class=\"p\">" + pct(r.w, total()) + "</td><td class=\"n\">" +
      (typeof f === "number" && f >= 0 ? "<i class=\"sw\" style=\"background:" + frameColor(M.fkind[f], M.fname[f]) + "\"></i>" : "") + esc(name) + "</td></tr>";
  });
  return h + "</tbody></table>";
}
function drawDetails() {
  var f = state.selFunc, h = "", box = $("details");
  if (f >= 0) {
    var b = P.butterfly(f);
    h += "<div class=\"dhead\"><b>" + esc(M.fname[f]) + "</b> <span class=\"mod\">" + esc(M.fmodule[f] || "") + " \u00b7 " + KIND_NAMES[M.fkind[f]] + "</span><br>" +
      fmtW(b.total) + " total (" + pct(b.total, total()) + "), " + fmtW(b.self) + " self (" + pct(b.self, total()) + ") " +
      (state.focus === f ? "" : "<a data-act=\"focus\">focus on it</a> ") + "<a data-act=\"tree\">show in the call tree</a></div>";
    if (!b.total) h += "<div class=\"note\">Not in what is selected.</div>";
    else h += "<div class=\"cols2\"><div><h4>Callers</h4>" + miniTable("Caller", b.callers.map(function (r) { return { func: r.func, w: r.w }; }), function (r) { return r.func < 0 ? "[root]" : M.fname[r.func]; }) +
      "</div><div><h4>Callees</h4>" + miniTable("Callee", b.callees) + "</div></div>";
  } else {
    h += "<div class=\"note\">" + (P.rootTotal ? fmtW(P.rootTotal) + (state.mode === "cpu" ? " samples" : "") + " selected. " : "") +
      "Select a function to see its callers, callees" + (M.offCpu ? " and who woke its waits" : "") + ".</div>";
  }
  if (state.mode !== "cpu" && M.nOff) {
    var w = P.wakers(f);
    h += "<h4>Woken by" + (f >= 0 ? " (waits through " + esc(M.fname[f]) + ")" : "") + "</h4><div class=\"note\">" + w.waits + " waits ended by a wake-up, " + fmtMs(w.ns) +
      " off the CPU" + (M.hasWakers ? "" : "; wakers were not recorded (stax record --off-cpu as root)") + "</div>";
    if (w.waits) {
      h += "<div class=\"cols2\"><div>" + miniTable("Waker", w.wakers, function (r) { return r.key; }) + "</div><div>" +
        miniTable("Waking function", w.funcs.map(function (r) { return { func: r.key, w: r.w }; })) + "</div></div>";
    }
  }
  box.innerHTML = h;
}

/* ---- the page's frame ---- */

function setup() {
  ui.tree = new TreeView($("p-tree"), null, {
    fmt: fmtW, total: total, search: function () { return state.search.toLowerCase(); }, empty: emptyText,
    onSelect: function (c) { selectFunc(X.tree.func[c], X.tree.path(c)); },
    onActivate: function (c) { ui.tree.toggle(c); },
    onFocus: function (c) { focusFunc(X.tree.func[c]); }
  });
  ui.tree.src = null;
  ui.bu = new TreeView($("p-bu"), { roots: function () { return []; }, kids: function () { return []; }, key: function (x) { return x; }, info: function () { return {}; } }, {
    fmt: fmtW, total: total, search: function () { return state.search.toLowerCase(); }, empty: emptyText,
    onSelect: function (id) { var n = INV.nodes[id]; selectFunc(n.func, null); },
    onActivate: function (id) { ui.bu.toggle(id); },
    onFocus: function (id) { focusFunc(INV.nodes[id].func); }
  });
  ui.flame = new Flame($("flame"), {
    fmt: fmtW, search: function () { return state.search.toLowerCase(); },
    selFunc: function () { return state.selFunc; }, selNode: selNode,
    icicle: function () { return state.right === "icicle"; },
    onSelect: function (c) { selectFunc(X.tree.func[c], X.tree.path(c)); },
    onZoom: flameHint
  });
  ui.timeline = new Timeline($("tl"), {
    state: function () { return state; }, fmtTime: fmtTime,
    density: function (cols) {
      var v = state.view || [0, Math.max(M.duration, 1)];
      return new Density(X, P, v[0], v[1], cols, selNode(), state.selFunc);
    },
    onRange: function (r) { state.range = r[1] - r[0] > 0 ? r : null; recompute(PASS); },
    onThreads: pickThreads
  });
  ui.source = new SourceView($("source"), { fmt: fmtW, total: total, version: function () { return version; } });
  $("modes").addEventListener("click", function (ev) {
    var m = ev.target.getAttribute("data-m");
    if (m && m !== state.mode) { state.mode = m; recompute(PASS); }
  });
  $("kinds").addEventListener("change", function () { state.kinds = $("kinds").value; recompute(TRANSFORM); });
  $("kwaits").addEventListener("change", function () { state.kernelWaits = $("kwaits").checked; recompute(TRANSFORM); });
  var timer = null;
  $("search").addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(function () { state.search = $("search").value.trim(); recompute(TRANSFORM); }, 250);
  });
  $("chips").addEventListener("click", function (ev) {
    var c = ev.target.getAttribute("data-clear");
    if (c) { clearPart(c); return; }
    if (ev.target.getAttribute("data-zoom") && state.range) { state.view = state.range; state.range = null; recompute(PASS); }
  });
  $("ltabs").addEventListener("click", function (ev) { var t = ev.target.getAttribute("data-t"); if (t) { state.left = t; drawLeft(); } });
  $("rtabs").addEventListener("click", function (ev) {
    var t = ev.target.getAttribute("data-t");
    if (!t) return;
    state.right = t;
    Array.prototype.forEach.call(document.querySelectorAll("#rtabs a"), function (a) { a.className = a.getAttribute("data-t") === t ? "on" : ""; });
    ui.flame.drawn = false;
    ui.flame.draw();
  });
  $("details").addEventListener("click", function (ev) {
    var a = ev.target.getAttribute("data-act");
    if (a === "focus") { focusFunc(state.selFunc); return; }
    if (a === "tree") { state.left = "tree"; drawLeft(); selectFunc(state.selFunc, state.selPath || firstPath(state.selFunc)); return; }
    var tr = ev.target.closest("tr[data-f]");
    if (tr) selectFunc(+tr.getAttribute("data-f"), null);
  });
  document.addEventListener("keydown", function (ev) {
    if (ev.key === "/" && document.activeElement.tagName !== "INPUT") { $("search").focus(); ev.preventDefault(); }
    else if (ev.key === "Escape" && document.activeElement === $("search")) { $("search").value = ""; state.search = ""; recompute(TRANSFORM); }
  });
  var rt = null;
  window.addEventListener("resize", function () { clearTimeout(rt); rt = setTimeout(function () { if (P) { ui.timeline.layout(); drawAll(TRANSFORM); } }, 150); });
}
/* the heaviest call node of function f, as a path */
function firstPath(f) {
  var best = -1;
  for (var i = 0; i < P.n; i++) if (X.tree.func[i] === f && !X.tree.rec[i] && (best < 0 || P.total[i] > P.total[best])) best = i;
  return best >= 0 ? X.tree.path(best) : null;
}

/* ---- loading, and reloading a recording that grows ---- */

function load() {
  if (loading) return;
  loading = true;
  var t0 = performance.now(), tm = window.stax.timing;
  fetch("/api/profile", { cache: "no-store" }).then(function (r) {
    if (!r.ok) return r.text().then(function (t) { throw new Error(t.trim() || "HTTP " + r.status); });
    return r.text();
  }).then(function (text) {
    tm.fetch = performance.now() - t0;
    var t1 = performance.now(), j = JSON.parse(text);
    tm.parse = performance.now() - t1;
    t1 = performance.now();
    var old = M;
    M = new Model(j);
    tm.model = performance.now() - t1;
    version = M.version;
    carryOver(old);
    $("file").textContent = M.file + " \u2014 " + fmtCount(M.nSamples) + " samples (" + M.event + ")" + (M.nOff ? ", " + fmtCount(M.nOff) + " off-CPU waits" : "") +
      ", " + fmtTime(M.duration);
    $("modes").style.display = M.offCpu ? "" : "none";
    $("kwlabel").style.display = M.offCpu ? "" : "none";
    ["python", "js"].forEach(function (k) { $("kinds").querySelector("option[value=" + k + "]").disabled = !M.hasKind[k === "python" ? "p" : "j"]; });
    if (!old || old.offCpu !== M.offCpu) makeTables();
    ui.timeline.setModel(M);
    X = null;
    recompute(TRANSFORM);
    tm.firstDraw = performance.now() - t0;
    window.staxReady = true;
  }).catch(function (e) {
    $("status").textContent = "cannot load the recording: " + e.message;
  }).then(function () { loading = false; });
}
/* keep the selection across a reload: threads by tid, functions by name */
function carryOver(old) {
  if (!old) return;
  function fn(f) { if (f < 0) return -1; var i = M.fname.indexOf(old.fname[f]); return i; }
  if (state.threads) {
    var s = new Set();
    state.threads.forEach(function (t) { for (var u = 0; u < M.nThreads; u++) if (M.ttid[u] === old.ttid[t] && M.tpid[u] === old.tpid[t]) s.add(u); });
    state.threads = s.size ? s : null;
  }
  state.focus = fn(state.focus);
  state.selFunc = fn(state.selFunc);
  state.selPath = state.selPath ? state.selPath.map(fn) : null;
  if (state.selPath && state.selPath.indexOf(-1) >= 0) state.selPath = null;
}
function poll() {
  fetch("/api/info", { cache: "no-store" }).then(function (r) { return r.json(); }).then(function (i) {
    $("status").textContent = i.live ? "\u25cf recording (updates live)" : "";
    $("status").className = i.live ? "live" : "";
    $("warnings").textContent = (i.warnings || []).map(function (w) { return "warning: " + w; }).join("\n");
    if (i.version !== version) load();
  }).catch(function (e) { $("status").textContent = "server: " + e.message; });
}
setup();
poll();
setInterval(poll, 2000);
