import json, re, sys, time
data = {'a': list(range(20)), 'b': 'x' * 50, 'c': {'d': 1.5, 'e': [True, None]}}
text = 'alpha beta gamma 123 delta 456 ' * 4
pat = re.compile(r'[a-z]+|[0-9]+')
def work(n):
    s = 0
    for i in range(n):
        s += len(json.dumps(data))
        s += len(pat.findall(text))
    return s
def heavy():
    return work(200)
def light():
    return work(100)
spent = {'h': 0.0, 'l': 0.0}
end = time.thread_time() + float(sys.argv[1])
while time.thread_time() < end:
    t = time.thread_time()
    heavy()
    u = time.thread_time()
    light()
    spent['h'] += u - t
    spent['l'] += time.thread_time() - u
print('truth %.4f' % (spent['h'] / (spent['h'] + spent['l'])))

# work.py - two functions doing 2/3 and 1/3 of the work in short calls
# into C (json.dumps, re.findall), no -X perf needed; prints the true
# share of heavy() in CPU time. tests/e2e/moment.sh and
# tests/arm64/runtimes.sh copy it to $T/work.py (their checks name its
# lines, work.py:8 and 9: this comment stays at the end); make bench's
# section 14 runs it as bench/work/moment.py.
