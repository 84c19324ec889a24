/* test_pyline.c - CPython line tables (symbol/pyline.h) against CPython
 * itself: pyenv's 3.10, 3.11, 3.12 and 3.13 each compile a source with
 * the shapes that need every entry form (lines far apart, a line going
 * back in a loop, columns past 127, multi-line expressions, code without
 * a line) and walk the code objects of json, re, collections and enum; each prints every code
 * object's co_firstlineno and co_linetable and, from co_lines(), the
 * line of every range of its bytecode. Every offset of every range must
 * get that line from the table. And corruption: tables cut short or
 * with a stray byte are reported where they break, never read past end.
 */
#include "test.h"
#include "symbol/pyline.h"

#include <glob.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char gen[] =
	"import sys, json, json.encoder, json.decoder, re, types\n"
	"src = '''\n"
	"def f(a, b):\n"
	"    x = a + b\n"
	"    for i in range(3):\n"
	"        x += i\n"
	"    y = (a +\n"
	"         b +\n"
	"         x)\n"
	"    z = [aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa for aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa in range(2)]\n"
	"    try:\n"
	"        pass\n"
	"    except Exception:\n"
	"        pass\n"
	"    return x + y\n"
	"''' + '\\n' * 300 + '''\n"
	"def g():\n"
	"    while True:\n"
	"        if g: break\n"
	"    return [i for i in range(2)]\n"
	"class C:\n"
	"    def m(self): return 1\n"
	"'''\n"
	"seen = set()\n"
	"def walk(co):\n"
	"    if id(co) in seen: return\n"
	"    seen.add(id(co))\n"
	"    print('C', co.co_firstlineno, co.co_linetable.hex() or '-')\n"
	"    for s, e, l in co.co_lines():\n"
	"        print('R', s, e, -1 if l is None else l)\n"
	"    for c in co.co_consts:\n"
	"        if isinstance(c, types.CodeType): walk(c)\n"
	"walk(compile(src, 'gen.py', 'exec'))\n"
	"import collections, enum\n"
	"def funcs(ns):\n"
	"    for v in list(ns.values()):\n"
	"        if isinstance(v, type) and v.__module__ == mod.__name__: funcs(vars(v))\n"
	"        c = getattr(v, '__code__', None)\n"
	"        if isinstance(c, types.CodeType): walk(c)\n"
	"for name in sorted(sys.modules):\n"
	"    if name.split('.')[0] in ('json', 're', 'sre_parse', 'sre_compile', 'collections', 'enum'):\n"
	"        mod = sys.modules[name]\n"
	"        funcs(vars(mod))\n";

static size_t unhex(const char *s, uint8_t *out, size_t max)
{
	size_t n = 0;
	if (!strcmp(s, "-"))
		return 0;
	while (s[0] && s[1] && n < max) {
		unsigned v;
		if (sscanf(s, "%2x", &v) != 1)
			break;
		out[n++] = (uint8_t)v;
		s += 2;
	}
	return n;
}

static void check_version(const char *python, uint32_t version, const char *script)
{
	char cmd[600], line[70000], label[200];
	static uint8_t table[32768];
	size_t n = 0, codes = 0, offsets = 0, wrong = 0;
	int first = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "%s %s", python, script);
	if (!(f = popen(cmd, "r"))) {
		SKIP(python, "cannot run it");
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		char hex[sizeof(line)];
		long s, e, l;
		if (sscanf(line, "C %d %s", &first, hex) == 2) {
			n = unhex(hex, table, sizeof(table));
			codes++;
		} else if (sscanf(line, "R %ld %ld %ld", &s, &e, &l) == 3) {
			for (long off = s; off < e; off += 2) {
				int got = pyline_find(table, table + n, first, version, (uint32_t)off, NULL);
				offsets++;
				if (got != (int)l && wrong++ < 3)
					printf("# %s: code at line %d, offset %ld: line %d, CPython says %ld\n",
					       python, first, off, got, l);
			}
		}
	}
	pclose(f);
	snprintf(label, sizeof(label), "pyline: %s: every offset of %zu code objects (%zu offsets) has"
		 " CPython's line", python, codes, offsets);
	CHECK(codes > 200 && offsets > 10000 && wrong == 0, label);
}

static void test_corrupt(void)
{
	/* 3.11+: an entry of code 13 (no columns) covering 2 units, line +3;
	 * then code 14 (long) with its four varints; then code 15 */
	const uint8_t good[] = { 0x80 | 13 << 3 | 1, 6, 0x80 | 14 << 3 | 0, 0x41, 0x00, 1, 2, 3,
				 0x80 | 15 << 3 | 0 };
	uint8_t bad[sizeof(good)];
	size_t at = 99;
	int r;

	CHECK(pyline_find(good, good + sizeof(good), 10, 0x030c, 0, NULL) == 13, "pyline: no-columns form");
	CHECK(pyline_find(good, good + sizeof(good), 10, 0x030c, 2, NULL) == 13, "pyline: an entry covers its units");
	/* 0x41 0x00: varint 1 | 0 << 6 = 1: signed -0 ... (1 & 1: -(0)) */
	CHECK(pyline_find(good, good + sizeof(good), 10, 0x030c, 4, NULL) == 13, "pyline: long form");
	CHECK(pyline_find(good, good + sizeof(good), 10, 0x030c, 6, NULL) == PYLINE_NONE, "pyline: no location");
	CHECK(pyline_find(good, good + sizeof(good), 10, 0x030c, 8, NULL) == PYLINE_BEYOND, "pyline: past the end");
	/* cut inside the long form's varints */
	r = pyline_find(good, good + 5, 10, 0x030c, 6, &at);
	CHECK(r == PYLINE_CORRUPT && at == 2, "pyline: a table cut inside an entry is corrupt where it starts");
	memcpy(bad, good, sizeof(bad));
	bad[2] = 0x05; /* not the start of an entry */
	r = pyline_find(bad, bad + sizeof(bad), 10, 0x030c, 6, &at);
	CHECK(r == PYLINE_CORRUPT && at == 2, "pyline: a byte that starts no entry is corrupt there");
	/* a varint that never ends */
	{
		const uint8_t endless[] = { 0x80 | 13 << 3, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f, 0x7f };
		CHECK(pyline_find(endless, endless + sizeof(endless), 1, 0x030d, 0, &at) == PYLINE_CORRUPT,
		      "pyline: an endless varint is corrupt");
	}
	/* 3.10: pairs; an odd byte at the end */
	{
		const uint8_t t10[] = { 4, 1, 2, 0x80, 6, 2, 9 };
		CHECK(pyline_find(t10, t10 + 6, 5, 0x030a, 0, NULL) == 6 &&
		      pyline_find(t10, t10 + 6, 5, 0x030a, 4, NULL) == PYLINE_NONE &&
		      pyline_find(t10, t10 + 6, 5, 0x030a, 7, NULL) == 8, "pyline: 3.10 pairs");
		CHECK(pyline_find(t10, t10 + 7, 5, 0x030a, 20, &at) == PYLINE_CORRUPT && at == 6,
		      "pyline: 3.10: a half pair is corrupt");
	}
	CHECK(pyline_find(good, good + sizeof(good), 1, 0x0309, 0, &at) == PYLINE_CORRUPT,
	      "pyline: another version is refused");
}

int main(void)
{
	static const struct { const char *glob; uint32_t version; } vs[] = {
		{ "/root/.pyenv/versions/3.10.*/bin/python3.10", 0x030a },
		{ "/root/.pyenv/versions/3.11.*/bin/python3.11", 0x030b },
		{ "/root/.pyenv/versions/3.12.*/bin/python3.12", 0x030c },
		{ "/root/.pyenv/versions/3.13.*/bin/python3.13", 0x030d },
	};
	char script[] = "/tmp/stax-pyline-XXXXXX";
	int fd = mkstemp(script);
	size_t i;

	test_corrupt();
	if (fd < 0 || write(fd, gen, sizeof(gen) - 1) != (ssize_t)(sizeof(gen) - 1)) {
		CHECK(0, "pyline: write the generator");
		TEST_DONE();
	}
	close(fd);
	for (i = 0; i < sizeof(vs) / sizeof(vs[0]); i++) {
		glob_t g;
		if (glob(vs[i].glob, 0, NULL, &g) || !g.gl_pathc) {
			SKIP(vs[i].glob, "not installed (pyenv install it)");
			continue;
		}
		check_version(g.gl_pathv[0], vs[i].version, script);
		globfree(&g);
	}
	unlink(script);
	TEST_DONE();
}
