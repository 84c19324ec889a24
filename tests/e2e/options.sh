#!/bin/sh
# options.sh - every option 'stax help CMD' lists is accepted by CMD.
#
# For each command and each option its help lists, stax runs the command
# with that option (and a value that makes sense for it) on a real
# recording of callgraph-fp (main;a;b;leaf_b and main;a;c;leaf_c), and
# must not refuse it: exit 0 (serve: still serving when stopped). Filters
# get values that match the recording, so a refusal cannot hide behind
# "nothing matched".
# stax-test: seconds=20
. "$(dirname "$0")/lib.sh"
require_stax

D=$T/a.data
if ! stax record -o "$D" -- "$PROG/callgraph-fp" 0.3 >/dev/null 2>"$T/rec.err"; then
	fail "record" "$(first_line "$T/rec.err")"
	done_testing
fi
PERF=""
if command -v perf >/dev/null 2>&1 &&
   perf record -q -o "$T/perf.data" -- "$PROG/callgraph-fp" 0.1 >/dev/null 2>&1; then
	PERF=$T/perf.data
fi
# a process to attach to for as long as the test runs (under the
# sanitizer the options take longer than a minute); killed at the end
sleep 3600 &
SLEEPER=$!
bg_add "$SLEEPER"

STAX="$STAX" D="$D" T="$T" PROG="$PROG" PERF="$PERF" SLEEPER="$SLEEPER" python3 - <<'PY' || FAILED=1
import json, os, re, subprocess

stax, D, T, PROG = os.environ["STAX"], os.environ["D"], os.environ["T"], os.environ["PROG"]
perf, sleeper = os.environ["PERF"], os.environ["SLEEPER"]

def run_agent(args):
    """stax agent runs until SIGTERM: taken when it still runs after a
    second and then exits 0"""
    import signal, time
    p = subprocess.Popen([stax] + args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    time.sleep(1)
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
    try:
        err = p.communicate(timeout=60)[1]
    except subprocess.TimeoutExpired:
        p.kill()
        return 124, "did not end within 60 s of SIGTERM"
    return p.returncode, err

def run(args, timeout=30):
    try:
        r = subprocess.run([stax] + args, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=timeout)
        return r.returncode, r.stderr
    except subprocess.TimeoutExpired:
        return 124, ""

pid = json.loads(subprocess.run([stax, "script", "--json", "-i", D], capture_output=True,
                                text=True).stdout)["samples"][0]["pid"]

help_out = subprocess.run([stax, "help"], capture_output=True, text=True).stdout
cmds = re.findall(r"^  ([a-z]+) ", help_out.split("commands:", 1)[1], re.M)

# "  -f, --format FORMAT  text", "  --pid PID  text", "  -g  text"
line_re = re.compile(r"^  (?:(-[A-Za-z0-9])(?:, )?)?(--[a-z0-9-]+)?(?: ([A-Za-z][A-Za-z0-9,.:|%\[\]-]*))?(?:  |$)")

def options(cmd):
    out = subprocess.run([stax, "help", cmd], capture_output=True, text=True).stdout
    for line in out.splitlines():
        m = line_re.match(line)
        if m and (m.group(1) or m.group(2)):
            yield m.group(2) or m.group(1), m.group(3)

def value(cmd, opt, argname):
    table = {
        "--input": D, "--output": os.path.join(T, "out." + cmd), "--comm": "callgraph-fp",
        "--time": "0%,100%", "--focus": "main", "--until-symbol": "main", "--exclude": "no_such_fn",
        "--hide": "no_such_fn", "--module": "callgraph-fp", "--format": "folded", "--by": "module",
        "--title": "t", "--event": "cpu-clock", "--unwind": "hybrid", "--call-graph": "dwarf",
        "--stack-size": "8192", "--freq": "99", "--mmap-pages": "64", "--duration": "0.2",
        "--interval": "0.1", "--for-seconds": "0.1", "--timeout": "5", "--threshold": "1",
        "--fail-above": "50", "--port": "0", "-p": "0", "--since": "-1h", "--until": "+1h",
        "--pprof": T, "--listen": "127.0.0.1:0",
        "--dir": os.path.join(T, "agent"), "--rotate": "2s", "--keep": "1h", "--max-size": "100M",
        "--max-processes": "100",
    }
    if opt in ("--pid", "--tid"):
        return sleeper if cmd in ("record", "live") else str(pid)
    if argname and "|" in argname:      # a choice: the first
        return argname.split("|")[0]
    if opt == "--count":
        return "1" if cmd == "live" else "1000000"
    if opt in table:
        return table[opt]
    return "1" if argname in ("N", "DEPTH", "PCT") else "x"

def base(cmd, opt):
    """the rest of a command line that works with opt"""
    prog = [ "--", PROG + "/exitcode-fp", "0" ]
    if cmd == "record":
        if opt in ("--pid", "--tid", "--all-cpus"):
            return ["-o", T + "/r.data", "--duration", "0.2"], []
        if opt == "--duration":   # a command would end with SIGTERM's 143
            return ["-o", T + "/r.data", "-p", sleeper], []
        return ["-o", T + "/r.data"], prog
    if cmd == "live":
        if opt in ("--pid", "--all-cpus"):
            return ["--count", "1", "--interval", "0.1"], []
        return ["--count", "1", "--interval", "0.1"], prog
    if cmd == "import":
        return ([] if opt == "--input" else [perf]), []
    if cmd == "symbolize":
        subprocess.run(["cp", D, T + "/s.data"])
        return ([] if opt == "--input" else [T + "/s.data"]), []
    if cmd == "serve" and opt in ("--pprof", "--listen", "--allow-remote"):
        # the pull endpoint over the directory holding the recording
        return {"--pprof": ["--port", "0"], "--listen": ["--pprof", T],
                "--allow-remote": ["--pprof", T, "--listen", "127.0.0.1:0"]}[opt], []
    if cmd == "serve":
        return (["--port", "0"] if opt not in ("--port", "-p") else []) + ([] if opt == "--input" else ["-i", D]), []
    if cmd == "diff":
        return [D, D], []
    if cmd == "agent":
        extra = ["--listen", "127.0.0.1:0"] if opt == "--allow-remote" else []
        return ([] if opt == "--dir" else ["--dir", T + "/agent"]) + ([] if opt in ("-F", "--freq") else ["-F", "19"]) + extra, []
    if cmd == "wait":
        return ([] if opt == "--input" else ["-i", D]) + ([] if opt.startswith("--for") or opt == "--until-symbol" else ["--for-samples", "1"]), []
    if cmd == "export":
        return ([] if opt == "--input" else ["-i", D]) + ([] if opt == "--format" else ["--format", "folded"]), []
    if cmd in ("callers", "callees", "annotate"):
        return ([] if opt == "--input" else ["-i", D]) + ["leaf_b"], []
    return ([] if opt == "--input" else ["-i", D]), []

failed = 0
for cmd in cmds:
    if cmd == "help":
        continue
    if cmd == "import" and not perf:
        print("skip - options: import's options: perf could not record a perf.data here")
        continue
    if cmd == "agent" and os.geteuid() != 0 and open("/proc/sys/kernel/perf_event_paranoid").read().strip() not in ("-1", "0"):
        print("skip - options: agent's options: recording the whole machine needs root or kernel.perf_event_paranoid <= 0")
        continue
    for opt, argname in options(cmd):
        if opt in ("--help", "-h"):
            continue
        args = [opt] + ([value(cmd, opt, argname)] if argname else [])
        pre, post = base(cmd, opt)
        if cmd == "import" and opt == "--input":
            args = [opt, perf]
        if cmd == "agent":
            rc, err = run_agent([cmd] + pre + args + post)
        else:
            rc, err = run([cmd] + pre + args + post, timeout=3 if cmd == "serve" else 30)
        name = "%s %s: taken" % (cmd, " ".join(args))
        if rc == 0 or (cmd == "serve" and rc == 124):
            print("ok - options: " + name)
        else:
            first = err.strip().splitlines()[0] if err.strip() else ""
            print("not ok - options: %s: status %d: %s" % (name, rc, first[:200]))
            failed = 1
raise SystemExit(failed)
PY
done_testing
