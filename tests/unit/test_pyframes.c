/* test_pyframes.c - the parts of reading CPython's frames that take bytes
 * (ingest/pyframes.h): 3.13's _Py_DebugOffsets, as written here and as
 * pyenv's libpython3.13 holds it (the initial value of _PyRuntime in its
 * .data), str objects of each kind, and the check of a sample's words. */
#include "ingest/pyframes.h"
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <glob.h>
#include <libelf.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

/* a debug offsets block with the values 3.13.0's headers give */
static void make_debug(uint8_t *b)
{
	memset(b, 0, PYF_DEBUG_OFFSETS_SIZE);
	memcpy(b, "xdebugpy", 8);
	put64(b + 8, 0x030d00f0);
	put64(b + 40, 632);   /* runtime_state.interpreters_head */
	put64(b + 64, 7264);  /* interpreter_state.next */
	put64(b + 72, 7344);  /* interpreter_state.threads_head */
	put64(b + 168, 8);    /* thread_state.next */
	put64(b + 184, 72);   /* thread_state.current_frame */
	put64(b + 200, 160);  /* thread_state.native_thread_id */
	put64(b + 232, 8);    /* interpreter_frame.previous */
	put64(b + 240, 0);    /* interpreter_frame.executable */
	put64(b + 264, 70);   /* interpreter_frame.owner */
	put64(b + 280, 112);  /* code_object.filename */
	put64(b + 296, 128);  /* code_object.qualname */
	put64(b + 344, 200);  /* code_object.co_code_adaptive */
	put64(b + 360, 8);    /* pyobject.ob_type */
	put64(b + 544, 32);   /* unicode_object.state */
	put64(b + 552, 16);   /* unicode_object.length */
	put64(b + 560, 40);   /* unicode_object.asciiobject_size */
}

static bool is_313(const struct pyf_layout *l)
{
	return l->version == 0x030d && l->rt_interp_head == 632 && l->interp_next == 7264 &&
	       l->interp_threads_head == 7344 && l->ts_next == 8 && l->ts_current == 72 &&
	       l->ts_native_tid == 160 && l->fr_previous == 8 && l->fr_code == 0 && l->fr_owner == 70 &&
	       l->fr_is_entry == -1 && l->owned_by_cstack == 3 && l->co_filename == 112 &&
	       l->co_qualname == 128 && l->co_code == 200 && l->ob_type == 8 && l->u_state == 32 &&
	       l->u_length == 16 && l->u_ascii_size == 40 && l->u_compact_size == 56 && l->ts_cframe == 0;
}

static void test_debug_offsets(void)
{
	uint8_t b[PYF_DEBUG_OFFSETS_SIZE];
	struct pyf_layout l;

	make_debug(b);
	CHECK(pyf_layout_from_debug(b, sizeof(b), &l) == 0 && is_313(&l), "debug offsets: 3.13 layout read");
	CHECK(pyf_layout_from_debug(b, sizeof(b) - 1, &l) == -EINVAL, "debug offsets: short block refused");
	b[0] = 'X';
	CHECK(pyf_layout_from_debug(b, sizeof(b), &l) == -EINVAL, "debug offsets: wrong cookie refused");
	make_debug(b);
	put64(b + 8, 0x030e00a1);
	CHECK(pyf_layout_from_debug(b, sizeof(b), &l) == -EINVAL, "debug offsets: 3.14 refused (another layout)");
	make_debug(b);
	put64(b + 16, 1);
	CHECK(pyf_layout_from_debug(b, sizeof(b), &l) == -EINVAL, "debug offsets: free-threaded build refused");
	make_debug(b);
	put64(b + 232, 1ull << 40);
	CHECK(pyf_layout_from_debug(b, sizeof(b), &l) == -EINVAL, "debug offsets: implausible offset refused");
	make_debug(b);
	put64(b + 40, 1ull << 32);
	CHECK(pyf_layout_from_debug(b, sizeof(b), &l) == -EINVAL, "debug offsets: implausible runtime offset refused");
}

/* The initial bytes of _PyRuntime in pyenv's libpython3.13 (its .data). */
static void test_debug_offsets_real(void)
{
	const char *root = getenv("PYENV_ROOT");
	char pat[512];
	glob_t gl;
	struct pyf_layout l;
	uint8_t b[PYF_DEBUG_OFFSETS_SIZE];
	bool found = false, read = false;
	int fd = -1;
	Elf *e = NULL;
	Elf_Scn *scn = NULL;

	snprintf(pat, sizeof(pat), "%s/versions/3.13.*/lib/libpython3.13.so.1.0",
		 root ? root : "/root/.pyenv");
	if (glob(pat, 0, NULL, &gl) || !gl.gl_pathc) {
		SKIP("debug offsets of a real libpython3.13", "no pyenv CPython 3.13 (libpython3.13.so.1.0)");
		return;
	}
	elf_version(EV_CURRENT);
	if ((fd = open(gl.gl_pathv[gl.gl_pathc - 1], O_RDONLY)) < 0 || !(e = elf_begin(fd, ELF_C_READ, NULL)))
		goto out;
	while ((scn = elf_nextscn(e, scn)) && !found) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t k;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !(d = elf_getdata(scn, NULL)))
			continue;
		for (k = 0; k < sh.sh_size / sh.sh_entsize; k++) {
			GElf_Sym sym;
			const char *n;
			if (!gelf_getsym(d, (int)k, &sym) || !(n = elf_strptr(e, sh.sh_link, sym.st_name)) ||
			    strcmp(n, "_PyRuntime") || sym.st_shndx == SHN_UNDEF)
				continue;
			/* the file offset of its address in its section */
			Elf_Scn *ds = elf_getscn(e, sym.st_shndx);
			GElf_Shdr dsh;
			if (ds && gelf_getshdr(ds, &dsh) && dsh.sh_type == SHT_PROGBITS &&
			    pread(fd, b, sizeof(b), (off_t)(dsh.sh_offset + sym.st_value - dsh.sh_addr)) == (ssize_t)sizeof(b))
				read = true;
			found = true;
			break;
		}
	}
out:
	CHECK(read && pyf_layout_from_debug(b, sizeof(b), &l) == 0 && is_313(&l),
	      "debug offsets: libpython3.13's own _PyRuntime gives the headers' layout");
	if (e)
		elf_end(e);
	if (fd >= 0)
		close(fd);
	globfree(&gl);
}

static void test_builtin(void)
{
	struct pyf_layout l;
	CHECK(pyf_layout_builtin(0x030b, &l) && l.fr_code == 32 && l.fr_previous == 48 && l.fr_is_entry == 68 &&
	      l.ts_cframe == 56 && l.cf_current == 8 && l.u_ascii_size == 48 && l.co_code == 184,
	      "builtin: 3.11 layout (is_entry, cframe, wstr in str)");
	CHECK(pyf_layout_builtin(0x030c, &l) && l.fr_code == 0 && l.fr_owner == 70 && l.fr_is_entry == -1 &&
	      l.owned_by_cstack == 3 && l.interp_threads_head == 72 && l.u_ascii_size == 40,
	      "builtin: 3.12 layout (entry frames owned by the C stack)");
	CHECK(!pyf_layout_builtin(0x030a, &l) && !pyf_layout_builtin(0x030d, &l),
	      "builtin: 3.10 and 3.13 have none (3.13 publishes its own)");
}

/* a memory image at base for the str reader */
struct mem {
	uint64_t base;
	uint8_t b[512];
};

static int mem_read(void *arg, uint64_t addr, void *buf, size_t len)
{
	struct mem *m = arg;
	if (addr < m->base || addr - m->base > sizeof(m->b) || len > sizeof(m->b) - (addr - m->base))
		return -EFAULT;
	memcpy(buf, m->b + (addr - m->base), len);
	return 0;
}

/* a compact str at m->base as l lays it out: kind 1, 2 or 4 */
static void make_str(struct mem *m, const struct pyf_layout *l, unsigned kind, bool ascii, bool compact,
		     const void *data, uint64_t len)
{
	uint32_t state = kind << 2 | (compact ? 1u << 5 : 0) | (ascii ? 1u << 6 : 0);
	memset(m->b, 0xee, sizeof(m->b));
	memcpy(m->b + l->u_state, &state, 4);
	put64(m->b + l->u_length, len);
	memcpy(m->b + (ascii ? l->u_ascii_size : l->u_compact_size), data, (size_t)len * kind);
}

static void test_unicode(void)
{
	struct pyf_layout l11, l12;
	struct mem m = { 0x10000, { 0 } };
	char out[PYF_MAX_NAME];
	uint16_t pi[] = { 0x3c0, 'r' };
	uint32_t emoji[] = { 0x1f600 };

	pyf_layout_builtin(0x030b, &l11);
	pyf_layout_builtin(0x030c, &l12);
	make_str(&m, &l12, 1, true, true, "spin_a", 6);
	CHECK(!pyf_unicode(&l12, mem_read, &m, m.base, out, sizeof(out)) && !strcmp(out, "spin_a"),
	      "str: compact ASCII (3.12: data after 40 bytes)");
	make_str(&m, &l11, 1, true, true, "Thread.run", 10);
	CHECK(!pyf_unicode(&l11, mem_read, &m, m.base, out, sizeof(out)) && !strcmp(out, "Thread.run"),
	      "str: compact ASCII (3.11: data after 48 bytes)");
	make_str(&m, &l12, 1, false, true, "caf\xe9", 4);
	CHECK(!pyf_unicode(&l12, mem_read, &m, m.base, out, sizeof(out)) && !strcmp(out, "caf\xc3\xa9"),
	      "str: latin-1 to UTF-8");
	make_str(&m, &l12, 2, false, true, pi, 2);
	CHECK(!pyf_unicode(&l12, mem_read, &m, m.base, out, sizeof(out)) && !strcmp(out, "\xcf\x80r"),
	      "str: UCS-2 to UTF-8");
	make_str(&m, &l12, 4, false, true, emoji, 1);
	CHECK(!pyf_unicode(&l12, mem_read, &m, m.base, out, sizeof(out)) && !strcmp(out, "\xf0\x9f\x98\x80"),
	      "str: UCS-4 to UTF-8");
	make_str(&m, &l12, 1, true, false, "legacy", 6);
	CHECK(pyf_unicode(&l12, mem_read, &m, m.base, out, sizeof(out)) == -EINVAL && !out[0],
	      "str: a non-compact str is refused");
	make_str(&m, &l12, 3, false, true, "xyz", 1);
	CHECK(pyf_unicode(&l12, mem_read, &m, m.base, out, sizeof(out)) == -EINVAL, "str: kind 3 is refused");
	make_str(&m, &l12, 1, true, true, "abc", 3);
	put64(m.b + l12.u_length, 1ull << 40);
	CHECK(pyf_unicode(&l12, mem_read, &m, m.base, out, sizeof(out)) == -EINVAL, "str: absurd length refused");
	put64(m.b + l12.u_length, 600); /* past the image: the read fails */
	CHECK(pyf_unicode(&l12, mem_read, &m, m.base, out, sizeof(out)) == -EFAULT, "str: a failed read is returned");
	make_str(&m, &l12, 1, true, true, "abcdef", 6);
	CHECK(!pyf_unicode(&l12, mem_read, &m, m.base, out, 4) && !strcmp(out, "abc"), "str: cut to the buffer");
	CHECK(pyf_unicode(&l12, mem_read, &m, 0, out, sizeof(out)) == -EINVAL, "str: NULL pointer refused");
}

static void test_seen(void)
{
	uint8_t regs[16], stack[36];
	struct pyf_sample s = { regs, 2, stack, sizeof(stack) };
	memset(regs, 0, sizeof(regs));
	memset(stack, 0, sizeof(stack));
	put64(regs + 8, 0x5000);
	CHECK(pyf_seen_points_into(&s, 0x4000, 0x5001) && !pyf_seen_points_into(&s, 0x4000, 0x5000),
	      "seen: a register in [lo, hi)");
	put64(stack + 24, 0x9008);
	CHECK(pyf_seen_points_into(&s, 0x9000, 0x9010), "seen: a stack word");
	put64(stack + 28, 0x7777); /* straddles the end: not a whole word */
	s.stack_size = 35;
	CHECK(!pyf_seen_points_into(&s, 0x7777, 0x7778), "seen: only whole words of the copy");
	s.nregs = 0;
	s.stack_size = 0;
	CHECK(!pyf_seen_points_into(&s, 0, UINT64_MAX), "seen: nothing seen, nothing found");
}

int main(void)
{
	test_debug_offsets();
	test_debug_offsets_real();
	test_builtin();
	test_unicode();
	test_seen();
	TEST_DONE();
}
