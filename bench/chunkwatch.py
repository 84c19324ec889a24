#!/usr/bin/env python3
# chunkwatch.py STAX SPIN OUT SECONDS - bench/run.sh section 10.
#
# Records SPIN (tests/programs spin-fp, which prints its pid, then spins)
# with STAX into OUT, watches OUT's size every 2 ms for SECONDS after the
# first chunk and notes when it grows (the recorder writes each chunk
# with one write()), then SIGKILLs the recorder and reads the program's
# CPU time at that moment from /proc/PID/schedstat (nanoseconds). Prints
#   gaps N max_ms median_ms
#   cpu_ms_at_kill C
# The caller counts the samples left in OUT (stax flame --folded).
import os, signal, statistics, subprocess, sys, time

stax, spin, out, secs = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
for f in (out, out + ".old"):
    try:
        os.unlink(f)
    except FileNotFoundError:
        pass
rec = subprocess.Popen([stax, "record", "-q", "-o", out, "--", spin, "3600"],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
pid = int(rec.stdout.readline())


def size():
    try:
        return os.stat(out).st_size
    except FileNotFoundError:
        return 0


# the file header alone is 16 bytes: wait for the first chunk after it
deadline = time.monotonic() + 60
while size() <= 16 and time.monotonic() < deadline:
    time.sleep(0.002)
last, grew = size(), []
end = time.monotonic() + secs
while time.monotonic() < end:
    s = size()
    if s != last:
        grew.append(time.monotonic())
        last = s
    time.sleep(0.002)
gaps = [1000 * (b - a) for a, b in zip(grew, grew[1:])]
rec.send_signal(signal.SIGKILL)
with open("/proc/%d/schedstat" % pid) as f:
    cpu_ns = int(f.read().split()[0])
rec.wait()
os.kill(pid, signal.SIGKILL)
print("gaps %d %.1f %.1f" % (len(gaps), max(gaps) if gaps else -1, statistics.median(gaps) if gaps else -1))
print("cpu_ms_at_kill %.1f" % (cpu_ns / 1e6))
