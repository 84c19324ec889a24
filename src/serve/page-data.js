/* page-data.js - the recording as the page holds it, and everything the
 * panels show, computed from it with one selection applied to all.
 *
 * The server sends the whole recording once (/api/profile: parallel
 * arrays, see src/serve/data.c). A transform (frame kinds, focused
 * function, search, kernel frames of waits) maps every stack node to a
 * call node; a pass over the samples and off-CPU intervals the selection
 * keeps (time range, threads, CPU / off-CPU / wall) weighs the call
 * nodes. The call tree, bottom-up tree, flame graph, function and thread
 * tables, callers and callees, the timeline's highlight, who woke the
 * waits and the source and assembly counts all read that one result.
 */
"use strict";

var K_OTHER = "?";
var KIND_NAMES = { u: "own code", s: "system library", k: "kernel", p: "Python", j: "JavaScript", o: "off-CPU", "?": "unknown" };

/* ---- the model: typed arrays from the JSON ---- */

function Model(j) {
  var i, n;
  this.raw = j;
  this.version = j.version;
  this.file = j.file;
  this.event = j.event;
  this.clock = j.clock;
  this.startNs = j.start_ns;
  this.duration = j.duration_ns;
  this.offCpu = j.off_cpu;
  this.hasWakers = j.wakers;
  this.live = j.live;
  this.reasons = j.reasons;
  var S = j.strings;
  function strs(a) { var o = new Array(a.length); for (var k = 0; k < a.length; k++) o[k] = a[k] >= 0 ? S[a[k]] : null; return o; }
  /* functions, then one per off-CPU reason and two placeholders */
  this.fname = strs(j.funcs.name);
  this.fmodule = strs(j.funcs.module);
  this.ffile = strs(j.funcs.file);
  this.fline = j.funcs.line.slice();
  this.fkind = j.funcs.kind.split("");
  this.nRealFuncs = this.fname.length;
  this.reasonFunc = [];
  for (i = 0; i < this.reasons.length; i++) this.reasonFunc.push(this.addFunc("[off-cpu: " + this.reasons[i] + "]", "", "o"));
  this.noStackFunc = this.addFunc("[no stack]", "", "?");
  /* where a sample with no frame the frame filter keeps goes */
  this.otherFunc = { native: this.addFunc("[no native frame]", "", "?"), python: this.addFunc("[no Python frame]", "", "?"),
    js: this.addFunc("[no JavaScript frame]", "", "?"), all: this.addFunc("[other code]", "", "?") };
  this.hasKind = {};
  for (i = 0; i < this.nRealFuncs; i++) this.hasKind[this.fkind[i]] = true;
  /* Python and JavaScript names carry their file: shown apart */
  this.ffull = this.fname.slice();
  for (i = 0; i < this.nRealFuncs; i++) {
    var mm, base = this.ffile[i] ? this.ffile[i].replace(/.*\//, "") : null;
    if (this.fkind[i] === "p" && (mm = /^py::(.*?):(.*)$/.exec(this.fname[i]))) {
      this.fname[i] = mm[1];
      this.fmodule[i] = base || mm[2];
    } else if (this.fkind[i] === "j" && (mm = /^[A-Za-z]+:[*~^]?(\S*)( |$)/.exec(this.fname[i]))) {
      this.fname[i] = mm[1] || "(anonymous)";
      this.fmodule[i] = base ? base + (this.fline[i] ? ":" + this.fline[i] : "") : this.fmodule[i];
    }
  }
  /* the stack tree */
  n = j.nodes.parent.length;
  this.nNodes = n;
  this.nparent = Int32Array.from(j.nodes.parent);
  this.nfunc = Int32Array.from(j.nodes.func);
  this.nfile = Int32Array.from(j.nodes.file);
  this.nline = Int32Array.from(j.nodes.line);
  this.ninline = new Uint8Array(n);
  for (i = 0; i < n; i++) this.ninline[i] = j.nodes.inline.charCodeAt(i) === 49;
  this.strings = S;
  /* what a sample on each stack was running, for the timeline's
   * colours: 1 the kernel (its leaf), 2 Python or JavaScript (a frame
   * of it on the stack), 0 native user code */
  this.ncat = new Uint8Array(n);
  for (i = 0; i < n; i++) {
    var k0 = this.fkind[this.nfunc[i]], up = this.nparent[i] >= 0 ? this.ncat[this.nparent[i]] : 0;
    this.ncat[i] = k0 === "p" || k0 === "j" || up === 2 ? 2 : k0 === "k" ? 1 : 0;
  }
  /* threads */
  var T = j.threads;
  this.nThreads = T.tid.length;
  this.tpid = T.pid; this.ttid = T.tid;
  this.tname = strs(T.name); this.tpname = strs(T.pname);
  this.toutside = T.outside.split("").map(function (c) { return c === "1"; });
  /* samples: times made absolute (ns after start) */
  var s = j.samples;
  n = s.time.length;
  this.nSamples = n;
  this.stime = new Float64Array(n);
  var t = 0;
  for (i = 0; i < n; i++) { t += s.time[i]; this.stime[i] = t; }
  this.sthread = Int32Array.from(s.thread);
  this.sstack = Int32Array.from(s.stack);
  if (typeof s.ns === "number") { this.sns = null; this.sampleNs = s.ns; }
  else { this.sns = Float64Array.from(s.ns); this.sampleNs = n ? this.sns.reduce(function (a, b) { return a + b; }, 0) / n : 0; }
  /* off-CPU intervals */
  var o = j.offcpu;
  n = o.time.length;
  this.nOff = n;
  this.otime = new Float64Array(n);
  t = 0;
  for (i = 0; i < n; i++) { t += o.time[i]; this.otime[i] = t; }
  this.odur = Float64Array.from(o.duration);
  this.othread = Int32Array.from(o.thread);
  this.ostack = Int32Array.from(o.stack);
  this.oreason = new Uint8Array(n);
  this.oopen = new Uint8Array(n);
  for (i = 0; i < n; i++) { this.oreason[i] = o.reason[i] & 15; this.oopen[i] = o.reason[i] >= 16; }
  this.owaker = Int32Array.from(o.waker);
  this.owstack = Int32Array.from(o.waker_stack);
  /* the longest interval: how far back a time range must look */
  this.maxDur = 0;
  for (i = 0; i < n; i++) if (this.odur[i] > this.maxDur) this.maxDur = this.odur[i];
  if (!this.duration) this.duration = Math.max(this.nSamples ? this.stime[this.nSamples - 1] : 0, n ? this.otime[n - 1] + this.odur[n - 1] : 0);
  /* per thread totals, for ordering the tracks */
  this.threadSamples = new Float64Array(this.nThreads);
  this.threadOff = new Float64Array(this.nThreads);
  for (i = 0; i < this.nSamples; i++) this.threadSamples[this.sthread[i]]++;
  for (i = 0; i < this.nOff; i++) this.threadOff[this.othread[i]] += this.odur[i];
  /* the search looks at the whole name (a Python function's file too) */
  this.flower = this.ffull.map(function (x) { return x.toLowerCase(); });
  this.interval = this.sampleNs || (j.freq ? 1e9 / j.freq : 1e6);
}

Model.prototype.addFunc = function (name, module, kind) {
  this.fname.push(name); this.fmodule.push(module); this.ffile.push(null); this.fline.push(0); this.fkind.push(kind);
  if (this.ffull) this.ffull.push(name);
  if (this.flower) this.flower.push(name.toLowerCase());
  return this.fname.length - 1;
};

/* The function of blockingFrame(s), memoized: where an off-CPU wait on
 * stack node s is charged in the "waited in" column. */
Model.prototype.blockFunc = function (s) {
  if (!this.blockMemo) this.blockMemo = new Int32Array(this.nNodes).fill(-1);
  if (this.blockMemo[s] < 0) this.blockMemo[s] = this.nfunc[this.blockingFrame(s)];
  return this.blockMemo[s];
};

Model.prototype.threadLabel = function (t) {
  return (this.tname[t] || "?") + "/" + this.ttid[t];
};

/* Is function f one the frame filter keeps? kinds: all, native (no
 * Python or JavaScript frames), python, js. */
Model.prototype.kindKept = function (f, kinds) {
  var k = this.fkind[f];
  if (kinds === "all") return true;
  if (kinds === "native") return k !== "p" && k !== "j";
  if (kinds === "python") return k === "p";
  if (kinds === "js") return k === "j";
  return true;
};

function isSchedulerName(n) {
  return /^(schedule|__schedule|io_schedule|preempt_schedule|_cond_resched|__cond_resched|finish_task_switch)/.test(n);
}

/* The frame that answers "which code waited" or "which code woke it" on
 * stack node s, as the text views find it (view_blocking_frame()): the
 * innermost frame of the program's own code, else a named user frame,
 * else a kernel frame that is not the scheduler's or the wake-up's. */
Model.prototype.blockingFrame = function (s) {
  var x, f, k, best = -1, user = -1, kern = -1, first = s;
  for (x = s; x >= 0; x = this.nparent[x]) {
    f = this.nfunc[x];
    k = this.fkind[f];
    if (k === "u" || k === "p" || k === "j") { best = x; break; }
    if (user < 0 && k === "s" && !/\+0x/.test(this.fname[f]) && f !== 0) user = x;
    if (kern < 0 && k === "k" && !/wake/.test(this.fname[f]) && !isSchedulerName(this.fname[f])) kern = x;
  }
  return best >= 0 ? best : user >= 0 ? user : kern >= 0 ? kern : first;
};

/* ---- the transform: stack nodes to call nodes ---- */

/* A call tree that grows as stacks are mapped into it: node c has a
 * parent (-1 for a root, always a smaller index) and a function. */
function CallTree(nf) {
  this.nf = nf;
  this.parent = [];
  this.func = [];
  this.depth = [];
  this.rec = [];          /* 1: the function is also an ancestor's */
  this.index = new Map(); /* (parent + 1) * nf + func -> node */
}
CallTree.prototype.child = function (p, f) {
  var key = (p + 1) * this.nf + f, c = this.index.get(key);
  if (c !== undefined) return c;
  c = this.parent.length;
  this.parent.push(p);
  this.func.push(f);
  this.depth.push(p >= 0 ? this.depth[p] + 1 : 0);
  var r = 0;
  for (var a = p; a >= 0; a = this.parent[a]) if (this.func[a] === f) { r = 1; break; }
  this.rec.push(r);
  this.index.set(key, c);
  return c;
};
CallTree.prototype.size = function () { return this.parent.length; };
/* the call nodes from the root to c */
CallTree.prototype.path = function (c) {
  var p = [];
  for (; c >= 0; c = this.parent[c]) p.push(this.func[c]);
  return p.reverse();
};
CallTree.prototype.find = function (path) {
  var c = -1;
  for (var i = 0; i < path.length; i++) {
    var x = this.index.get((c + 1) * this.nf + path[i]);
    if (x === undefined) return -1;
    c = x;
  }
  return c;
};

/* tr: {kinds, focus (function or -1), search (lower case text), kernelWaits} */
function Transform(m, tr) {
  var n = m.nNodes, i, p, f, k, c, co, keep, through;
  this.m = m;
  this.tr = tr;
  this.tree = new CallTree(m.fname.length);
  var T = this.tree;
  this.cpu = new Int32Array(n);   /* call node of a sample whose leaf is node i; -2 dropped */
  this.off = new Int32Array(n);   /* of an off-CPU interval (kernel folded) */
  this.match = new Uint8Array(n); /* the search matches a frame at or above */
  var focusIn = new Uint8Array(n), user = new Uint8Array(n);
  var fmatch = null;
  if (tr.search) {
    fmatch = new Uint8Array(m.fname.length);
    for (f = 0; f < m.fname.length; f++) fmatch[f] = m.flower[f].indexOf(tr.search) >= 0;
  }
  for (i = 0; i < n; i++) {
    p = m.nparent[i];
    f = m.nfunc[i];
    k = m.fkind[f];
    this.match[i] = !fmatch || fmatch[f] || (p >= 0 && this.match[p]);
    user[i] = k !== "k" || (p >= 0 && user[p]);
    through = tr.focus < 0 || f === tr.focus || (p >= 0 && focusIn[p]);
    focusIn[i] = through;
    keep = m.kindKept(f, tr.kinds);
    if (!through) { this.cpu[i] = this.off[i] = -2; continue; }
    if (tr.focus >= 0 && f === tr.focus && !(p >= 0 && focusIn[p])) {
      /* the outermost frame of the focused function: a root */
      this.cpu[i] = this.off[i] = T.child(-1, f);
      continue;
    }
    c = p >= 0 ? this.cpu[p] : -1;
    co = p >= 0 ? this.off[p] : -1;
    this.cpu[i] = keep ? T.child(c, f) : c;
    /* a wait: the kernel's frames below a user frame, and the
     * scheduler's anywhere, folded into the wait */
    if (!tr.kernelWaits && k === "k" && ((p >= 0 && user[p]) || isSchedulerName(m.fname[f]))) this.off[i] = co;
    else this.off[i] = keep ? T.child(co, f) : co;
  }
}

/* The call node of a sample on stack s (-2: dropped by the focus or the
 * search). */
Transform.prototype.sampleNode = function (s) {
  if (s < 0) return this.tr.focus >= 0 || this.tr.search ? -2 : this.tree.child(-1, this.m.noStackFunc);
  if (!this.match[s]) return -2;
  var c = this.cpu[s];
  return c === -1 ? this.tree.child(-1, this.m.otherFunc[this.tr.kinds] || this.m.otherFunc.all) : c;
};
Transform.prototype.offNode = function (s, reason) {
  if (s < 0) {
    if (this.tr.focus >= 0 || this.tr.search) return -2;
    return this.tree.child(-1, this.m.reasonFunc[reason]);
  }
  if (!this.match[s]) return -2;
  var c = this.off[s];
  if (c === -2) return -2;
  return this.tree.child(c, this.m.reasonFunc[reason]);
};

/* ---- the pass: what the selection keeps, weighed ---- */

/* sel: {t0, t1 (ns after start; t1 < 0: all), threads (Uint8Array or
 * null: all), mode ("cpu", "off", "wall")}. Weights: samples in the CPU
 * view, nanoseconds in the off-CPU and wall views. */
function lowerBound(a, n, v) {
  var lo = 0, hi = n;
  while (lo < hi) { var mid = (lo + hi) >> 1; if (a[mid] < v) lo = mid + 1; else hi = mid; }
  return lo;
}

function Pass(x, sel) {
  var m = x.m, T = x.tree, i, w, c, lo, hi;
  this.x = x;
  this.sel = sel;
  var self = [], leafW = new Float64Array(m.nNodes + 1), leafOff = new Float64Array(m.nNodes + 1);
  this.threadW = new Float64Array(m.nThreads);   /* the threads selected: their weight in the view */
  this.threadCpu = new Float64Array(m.nThreads);
  this.threadOff = new Float64Array(m.nThreads * m.reasons.length);
  this.samples = 0;
  this.offs = [];  /* the intervals kept (indexes) */
  /* off-CPU time by blocking caller (m.blockFunc): the innermost
   * function of the program's own code on the waiting stack */
  this.blockW = new Float64Array(m.fname.length);
  var th = sel.threads, all = sel.t1 < 0, t0 = sel.t0, t1 = sel.t1;
  function add(c, w) { while (self.length <= c) self.push(0); self[c] += w; }
  /* the samples count for the threads in every view, and in the tree
   * but in the off-CPU one */
  this.threadSamples = new Float64Array(m.nThreads);
  lo = all ? 0 : lowerBound(m.stime, m.nSamples, t0);
  hi = all ? m.nSamples : lowerBound(m.stime, m.nSamples, t1 + 1);
  /* (the threads table shows every thread: the thread filter comes after) */
  for (i = lo; i < hi; i++) {
    var t = m.sthread[i];
    c = x.sampleNode(m.sstack[i]);
    if (c === -2) continue;
    this.threadSamples[t]++;
    this.threadCpu[t] += m.sns ? m.sns[i] : m.sampleNs;
    if (sel.mode === "off" || (th && !th[t])) continue;
    w = sel.mode === "cpu" ? 1 : m.sns ? m.sns[i] : m.sampleNs;
    add(c, w);
    leafW[m.sstack[i] + 1] += w;
    this.threadW[t] += w;
    this.samples++;
  }
  if (m.nOff) {
    /* intervals that start in the range (as the text views keep them) */
    lo = all ? 0 : lowerBound(m.otime, m.nOff, t0);
    hi = all ? m.nOff : lowerBound(m.otime, m.nOff, t1 + 1);
    var nr = m.reasons.length;
    for (i = lo; i < hi; i++) {
      var ot = m.othread[i];
      c = x.offNode(m.ostack[i], m.oreason[i]);
      if (c === -2) continue;
      w = m.odur[i];
      this.threadOff[ot * nr + m.oreason[i]] += w;
      if (sel.mode === "cpu" || (th && !th[ot])) continue;
      add(c, w);
      leafW[m.ostack[i] + 1] += w;
      leafOff[m.ostack[i] + 1] += w;
      if (m.ostack[i] >= 0) this.blockW[m.blockFunc(m.ostack[i])] += w;
      this.threadW[ot] += w;
      this.offs.push(i);
    }
  }
  var n = T.size();
  this.n = n;
  this.self = new Float64Array(n);
  for (i = 0; i < self.length; i++) this.self[i] = self[i];
  this.total = Float64Array.from(this.self);
  for (i = n - 1; i >= 0; i--) if (T.parent[i] >= 0) this.total[T.parent[i]] += this.total[i];
  this.rootTotal = 0;
  for (i = 0; i < n; i++) if (T.parent[i] < 0) this.rootTotal += this.total[i];
  this.leafW = leafW;   /* by stack node + 1 (0: no stack) */
  this.leafOff = leafOff; /* the part of it off the CPU: no self time (the wait's frame has it) */
  this.kidsCache = null;
  this.funcs = null;
}

/* Children of every call node with weight, heaviest first; index n: the roots. */
Pass.prototype.kids = function () {
  if (this.kidsCache) return this.kidsCache;
  var T = this.x.tree, n = this.n, k = new Array(n + 1), i, tot = this.total;
  for (i = 0; i <= n; i++) k[i] = [];
  for (i = 0; i < n; i++) if (tot[i] > 0) k[T.parent[i] >= 0 ? T.parent[i] : n].push(i);
  for (i = 0; i <= n; i++) if (k[i].length > 1) k[i].sort(function (a, b) { return tot[b] - tot[a] || a - b; });
  this.kidsCache = k;
  return k;
};

/* Self and total per function (a function counted once per stack). */
Pass.prototype.funcTotals = function () {
  if (this.funcs) return this.funcs;
  var T = this.x.tree, nf = this.x.m.fname.length, self = new Float64Array(nf), total = new Float64Array(nf), i;
  for (i = 0; i < this.n; i++) {
    if (!this.total[i]) continue;
    self[T.func[i]] += this.self[i];
    if (!T.rec[i]) total[T.func[i]] += this.total[i];
  }
  this.funcs = { self: self, total: total };
  return this.funcs;
};

/* Callers and callees of function f: [{func, w}] heaviest first, the
 * callees with f's own self time as func -1. */
Pass.prototype.butterfly = function (f) {
  var T = this.x.tree, callers = new Map(), callees = new Map(), i, total = 0, self = 0;
  function add(mp, k, w) { mp.set(k, (mp.get(k) || 0) + w); }
  for (i = 0; i < this.n; i++) {
    if (T.func[i] !== f || !this.total[i]) continue;
    if (!T.rec[i]) { total += this.total[i]; add(callers, T.parent[i] >= 0 ? T.func[T.parent[i]] : -1, this.total[i]); }
    self += this.self[i];
  }
  var kids = this.kids();
  for (i = 0; i < this.n; i++) {
    if (T.func[i] !== f || !this.total[i]) continue;
    kids[i].forEach(function (c) { if (T.func[c] !== f) add(callees, T.func[c], this.total[c]); }, this);
  }
  function list(mp) { var a = []; mp.forEach(function (w, k) { a.push({ func: k, w: w }); }); return a.sort(function (a, b) { return b.w - a.w; }); }
  var ce = list(callees);
  if (self) ce.unshift({ func: -1, w: self });
  return { total: total, self: self, callers: list(callers), callees: ce };
};

/* The waits the pass kept whose stack goes through function f (or all
 * when f < 0), by waker and by waking function, weighted by time. */
Pass.prototype.wakers = function (f) {
  var m = this.x.m, byW = new Map(), byF = new Map(), waits = 0, ns = 0, i, k, s, through;
  for (k = 0; k < this.offs.length; k++) {
    i = this.offs[k];
    if (m.oopen[i] || m.reasons[m.oreason[i]] === "preempted") continue;
    if (f >= 0) {
      through = m.reasonFunc[m.oreason[i]] === f;
      for (s = m.ostack[i]; s >= 0 && !through; s = m.nparent[s]) through = m.nfunc[s] === f;
      if (!through) continue;
    }
    waits++;
    ns += m.odur[i];
    var wk = m.owaker[i], label;
    if (wk >= 0) label = (m.toutside[wk] ? "[not recorded] " : "") + m.threadLabel(wk);
    else label = wk === -2 ? "[irq]" : wk === -3 ? "[softirq]" : m.hasWakers ? "[no wake-up seen]" : "[not recorded]";
    byW.set(label, (byW.get(label) || 0) + m.odur[i]);
    if (m.owstack[i] >= 0) {
      var fn = m.nfunc[m.blockingFrame(m.owstack[i])];
      byF.set(fn, (byF.get(fn) || 0) + m.odur[i]);
    }
  }
  function list(mp) { var a = []; mp.forEach(function (w, key) { a.push({ key: key, w: w }); }); return a.sort(function (a, b) { return b.w - a.w; }); }
  return { waits: waits, ns: ns, wakers: list(byW), funcs: list(byF) };
};

/* Per source line of function f: {file: {line: [self, total]}}, from the
 * stack nodes the pass weighed (a line counted once per stack). */
/* The innermost frame of stack s the frame filter keeps: where a
 * sample's self time goes. */
Pass.prototype.selfNode = function (s) {
  var m = this.x.m, kinds = this.x.tr.kinds;
  for (var x = s; x >= 0; x = m.nparent[x]) if (m.kindKept(m.nfunc[x], kinds)) return x;
  return -1;
};
Pass.prototype.lines = function (f) {
  var m = this.x.m, out = {}, lw = this.leafW, s, x, seen = new Map(), key, w, own;
  for (s = 0; s < m.nNodes; s++) {
    w = lw[s + 1];
    if (!w) continue;
    seen.clear();
    own = w - this.leafOff[s + 1] ? this.selfNode(s) : -1;
    for (x = s; x >= 0; x = m.nparent[x]) {
      if (m.nfunc[x] !== f) continue;
      var file = m.nfile[x] >= 0 ? m.strings[m.nfile[x]] : m.ffile[f], line = m.nline[x] || (m.nfile[x] < 0 ? m.fline[f] : 0);
      if (!file) continue;
      key = file + "\n" + line;
      var r = (out[file] || (out[file] = {}))[line] || (out[file][line] = [0, 0]);
      if (x === own) r[0] += w - this.leafOff[s + 1];
      if (!seen.has(key)) { seen.set(key, 1); r[1] += w; }
    }
  }
  return out;
};

/* Per row of a disassembly: [self, total], nodeRow: Map page node ->
 * row (a row counted once per stack). */
Pass.prototype.rows = function (nodeRow, nrows) {
  var m = this.x.m, self = new Float64Array(nrows), total = new Float64Array(nrows), stamp = new Int32Array(nrows).fill(-1);
  var lw = this.leafW, s, x, r, w, own;
  for (s = 0; s < m.nNodes; s++) {
    w = lw[s + 1];
    if (!w) continue;
    own = w - this.leafOff[s + 1] ? this.selfNode(s) : -1;
    for (x = s; x >= 0; x = m.nparent[x]) {
      r = nodeRow.get(x);
      if (r === undefined) continue;
      if (x === own) self[r] += w - this.leafOff[s + 1];
      if (stamp[r] !== s) { stamp[r] = s; total[r] += w; }
    }
  }
  return { self: self, total: total };
};

/* The call nodes at or under call node c, or (c < 0) under any call
 * node of function f: the timeline's highlight. */
Pass.prototype.underNode = function (c, f) {
  var T = this.x.tree, n = T.size(), inside = new Uint8Array(n);
  for (var i = 0; i < n; i++) inside[i] = (c >= 0 ? i === c : T.func[i] === f) || (T.parent[i] >= 0 && inside[T.parent[i]]);
  return inside;
};

/* ---- the bottom-up (inverted) tree, built as it is opened ---- */

/* A node: the function f, reached from leaf call nodes whose self time
 * it totals; each entry [leaf call node, call node at this level]. */
function Inverted(pass) {
  this.p = pass;
  this.nodes = [];   /* {func, parent, w, entries, kids (null: not built)} */
  var T = pass.x.tree, byF = new Map(), i;
  for (i = 0; i < pass.n; i++) {
    if (!pass.self[i]) continue;
    var f = T.func[i], e = byF.get(f);
    if (!e) { e = []; byF.set(f, e); }
    e.push(i, i);
  }
  this.roots = this.make(byF, -1);
}
Inverted.prototype.make = function (byF, parent) {
  var ids = [], self = this;
  byF.forEach(function (e, f) {
    var w = 0;
    for (var k = 0; k < e.length; k += 2) w += self.p.self[e[k]];
    self.nodes.push({ func: f, parent: parent, w: w, entries: e, kids: null });
    ids.push(self.nodes.length - 1);
  });
  return ids.sort(function (a, b) { return self.nodes[b].w - self.nodes[a].w; });
};
Inverted.prototype.kids = function (id) {
  var nd = this.nodes[id];
  if (nd.kids) return nd.kids;
  var T = this.p.x.tree, byF = new Map();
  for (var k = 0; k < nd.entries.length; k += 2) {
    var up = T.parent[nd.entries[k + 1]];
    if (up < 0) continue;
    var f = T.func[up], e = byF.get(f);
    if (!e) { e = []; byF.set(f, e); }
    e.push(nd.entries[k], up);
  }
  nd.kids = this.make(byF, id);
  return nd.kids;
};

/* ---- the timeline's data: per thread and pixel column ---- */

/* Samples per column of [v0, v1) for every thread: all of them, those the
 * transform keeps, and those under call node hl (the selection); and
 * per column the reason a thread spent most of it off the CPU and the
 * share of the column it spent so. */
function Density(x, pass, v0, v1, cols, hl, hlFunc) {
  var m = x.m, nt = m.nThreads, i, col, t, s, c;
  var span = v1 - v0, per = span / cols;
  this.cols = cols; this.v0 = v0; this.v1 = v1;
  this.all = new Float32Array(nt * cols);
  this.kept = new Float32Array(nt * cols);
  this.kern = new Float32Array(nt * cols);    /* of kept: in the kernel */
  this.script = new Float32Array(nt * cols);  /* of kept: in Python or JavaScript */
  this.hl = new Float32Array(nt * cols);
  this.capacity = Math.max(1, per / m.interval);   /* samples a busy thread has in a column */
  var inside = hl >= 0 || hlFunc >= 0 ? pass.underNode(hl, hlFunc) : null;
  var lo = lowerBound(m.stime, m.nSamples, v0), hi = lowerBound(m.stime, m.nSamples, v1);
  for (i = lo; i < hi; i++) {
    col = Math.floor((m.stime[i] - v0) / per);
    if (col >= cols) col = cols - 1;
    t = m.sthread[i];
    s = t * cols + col;
    this.all[s]++;
    c = x.sampleNode(m.sstack[i]);
    if (c === -2) continue;
    this.kept[s]++;
    var st = m.sstack[i], cat = st >= 0 ? m.ncat[st] : 0;
    if (cat === 1) this.kern[s]++; else if (cat === 2) this.script[s]++;
    if (inside && c < inside.length && inside[c]) this.hl[s]++;
  }
  /* off-CPU: the time per reason in each column, the longest kept */
  this.offReason = new Uint8Array(nt * cols).fill(255);
  this.offShare = new Float32Array(nt * cols);
  if (m.nOff) {
    var nr = m.reasons.length, acc = new Float32Array(nt * cols * nr);
    lo = lowerBound(m.otime, m.nOff, v0 - m.maxDur);
    for (i = lo; i < m.nOff && m.otime[i] < v1; i++) {
      var a = Math.max(m.otime[i], v0), b = Math.min(m.otime[i] + m.odur[i], v1);
      if (b <= a) continue;
      t = m.othread[i];
      var c0 = Math.floor((a - v0) / per), c1 = Math.min(cols - 1, Math.floor((b - v0) / per));
      for (col = c0; col <= c1; col++) {
        var ca = v0 + col * per, cb = ca + per;
        acc[(t * cols + col) * nr + m.oreason[i]] += Math.min(b, cb) - Math.max(a, ca);
      }
    }
    for (s = 0; s < nt * cols; s++) {
      var best = -1, bw = 0, sum = 0;
      for (var r = 0; r < nr; r++) { var v = acc[s * nr + r]; sum += v; if (v > bw) { bw = v; best = r; } }
      if (best >= 0) { this.offReason[s] = best; this.offShare[s] = Math.min(1, sum / per); }
    }
  }
}
