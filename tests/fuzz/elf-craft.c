/* elf-craft.c - damage an ELF64 little-endian file on purpose, for the
 * crafted cases of the fuzz corpus (tests/fuzz/make-elf-corpus.sh) and the
 * end-to-end test of crafted binaries (tests/e2e/crafted_elf.sh).
 *
 *   elf-craft IN OUT OP...
 *
 * OP is one of (numbers in C syntax: 8, 0x10, ..., or NAME:FIELD with FIELD
 * offset, size or addr of section NAME, optionally +N or -N):
 *   sec NAME FIELD VALUE   set a field of the first section named NAME:
 *                          type flags addr offset size link info align
 *                          entsize name
 *   ehdr FIELD VALUE       set an ELF header field: entry phoff shoff
 *                          phentsize phnum shentsize shnum shstrndx
 *   phdr TYPE FIELD VALUE  set a field of the first program header of
 *                          p_type TYPE: type flags offset vaddr filesz
 *                          memsz align
 *   sym NAME VALUE         set the value of the .symtab symbol NAME
 *   poke NAME OFF HEX      write the bytes HEX (e.g. "ffff00") at offset
 *                          OFF of section NAME's bytes in the file
 *   truncate SIZE          cut the file to SIZE bytes
 * Operations apply in order, each to the result of the ones before; a
 * name or field that is not found is an error (exit 1), so a case that
 * silently stopped being crafted cannot go unnoticed.
 *
 * Only the section and program headers a program is not run by change
 * (except with phdr): crafted programs still run.
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char *img;
static size_t len;

static void die(const char *what, const char *arg)
{
	fprintf(stderr, "elf-craft: %s: %s\n", what, arg);
	exit(1);
}

static Elf64_Shdr *section(const char *name);

/* A number, or NAME:FIELD (offset, size or addr of section NAME) plus an
 * optional +N or -N: ".text:offset", ".eh_frame:size-8". */
static unsigned long long num(const char *s)
{
	const char *colon = strrchr(s, ':');
	char *end;
	unsigned long long v;

	if (colon) {
		char name[64];
		const char *f = colon + 1;
		size_t n = (size_t)(colon - s), flen = strcspn(f, "+-");
		Elf64_Shdr *sh;
		if (n >= sizeof(name))
			die("section name too long", s);
		memcpy(name, s, n);
		name[n] = '\0';
		sh = section(name);
		if (!strncmp(f, "offset", flen) && flen == 6)
			v = sh->sh_offset;
		else if (!strncmp(f, "size", flen) && flen == 4)
			v = sh->sh_size;
		else if (!strncmp(f, "addr", flen) && flen == 4)
			v = sh->sh_addr;
		else
			die("no such field to refer to", s);
		if (f[flen] == '+')
			v += num(f + flen + 1);
		else if (f[flen] == '-')
			v -= num(f + flen + 1);
		return v;
	}
	v = strtoull(s, &end, 0);
	if (!*s || *end)
		die("not a number", s);
	return v;
}

static void *at(size_t off, size_t n, const char *what)
{
	if (off > len || len - off < n)
		die("out of the file", what);
	return img + off;
}

static Elf64_Ehdr *ehdr(void)
{
	Elf64_Ehdr *e = at(0, sizeof(*e), "ELF header");
	if (memcmp(e->e_ident, ELFMAG, SELFMAG) || e->e_ident[EI_CLASS] != ELFCLASS64 ||
	    e->e_ident[EI_DATA] != ELFDATA2LSB)
		die("not an ELF64 little-endian file", "input");
	return e;
}

static Elf64_Shdr *shdr(size_t i)
{
	Elf64_Ehdr *e = ehdr();
	if (i >= e->e_shnum || e->e_shentsize != sizeof(Elf64_Shdr))
		die("no such section header", "index");
	return at(e->e_shoff + i * sizeof(Elf64_Shdr), sizeof(Elf64_Shdr), "section header");
}

static Elf64_Shdr *section(const char *name)
{
	Elf64_Ehdr *e = ehdr();
	Elf64_Shdr *str = shdr(e->e_shstrndx);
	for (size_t i = 0; i < e->e_shnum; i++) {
		Elf64_Shdr *s = shdr(i);
		const char *n = at(str->sh_offset + s->sh_name, 1, "section name");
		if (memchr(n, 0, len - (size_t)(n - (char *)img)) && !strcmp(n, name))
			return s;
	}
	die("no such section", name);
	return NULL;
}

#define SET(field, name, lhs) \
	if (!strcmp(field, name)) { lhs = v; return; }

static void set_sec(const char *name, const char *field, unsigned long long v)
{
	Elf64_Shdr *s = section(name);
	SET(field, "type", s->sh_type);
	SET(field, "flags", s->sh_flags);
	SET(field, "addr", s->sh_addr);
	SET(field, "offset", s->sh_offset);
	SET(field, "size", s->sh_size);
	SET(field, "link", s->sh_link);
	SET(field, "info", s->sh_info);
	SET(field, "align", s->sh_addralign);
	SET(field, "entsize", s->sh_entsize);
	SET(field, "name", s->sh_name);
	die("no such section field", field);
}

static void set_ehdr(const char *field, unsigned long long v)
{
	Elf64_Ehdr *e = ehdr();
	SET(field, "entry", e->e_entry);
	SET(field, "phoff", e->e_phoff);
	SET(field, "shoff", e->e_shoff);
	SET(field, "phentsize", e->e_phentsize);
	SET(field, "phnum", e->e_phnum);
	SET(field, "shentsize", e->e_shentsize);
	SET(field, "shnum", e->e_shnum);
	SET(field, "shstrndx", e->e_shstrndx);
	die("no such header field", field);
}

static void set_phdr(unsigned long long type, const char *field, unsigned long long v)
{
	Elf64_Ehdr *e = ehdr();
	for (size_t i = 0; i < e->e_phnum; i++) {
		Elf64_Phdr *p = at(e->e_phoff + i * sizeof(*p), sizeof(*p), "program header");
		if (p->p_type != type)
			continue;
		SET(field, "type", p->p_type);
		SET(field, "flags", p->p_flags);
		SET(field, "offset", p->p_offset);
		SET(field, "vaddr", p->p_vaddr);
		SET(field, "filesz", p->p_filesz);
		SET(field, "memsz", p->p_memsz);
		SET(field, "align", p->p_align);
		die("no such program header field", field);
	}
	die("no program header of that type", field);
}

static void set_sym(const char *name, unsigned long long v)
{
	Elf64_Shdr *st = section(".symtab"), *str = shdr(st->sh_link);
	for (size_t o = 0; o + sizeof(Elf64_Sym) <= st->sh_size; o += sizeof(Elf64_Sym)) {
		Elf64_Sym *s = at(st->sh_offset + o, sizeof(*s), "symbol");
		const char *n = at(str->sh_offset + s->st_name, 1, "symbol name");
		if (memchr(n, 0, len - (size_t)(n - (char *)img)) && !strcmp(n, name)) {
			s->st_value = v;
			return;
		}
	}
	die("no such symbol", name);
}

static void poke(const char *name, unsigned long long off, const char *hex)
{
	Elf64_Shdr *s = section(name);
	size_t n = strlen(hex) / 2;
	unsigned char *p;
	if (strlen(hex) % 2)
		die("odd number of hex digits", hex);
	p = at(s->sh_offset + off, n, "poke");
	for (size_t i = 0; i < n; i++) {
		unsigned int b;
		if (sscanf(hex + 2 * i, "%2x", &b) != 1)
			die("not hex", hex);
		p[i] = (unsigned char)b;
	}
}

int main(int argc, char **argv)
{
	FILE *f;
	long n;
	int i;

	if (argc < 3)
		die("usage", "elf-craft IN OUT OP...");
	if (!(f = fopen(argv[1], "rb")) || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 ||
	    fseek(f, 0, SEEK_SET))
		die("cannot read", argv[1]);
	len = (size_t)n;
	img = malloc(len ? len : 1);
	if (!img || fread(img, 1, len, f) != len)
		die("cannot read", argv[1]);
	fclose(f);
	for (i = 3; i < argc;) {
		const char *op = argv[i];
#define NEED(k) do { if (i + (k) >= argc) die("missing arguments of", op); } while (0)
		if (!strcmp(op, "sec")) {
			NEED(3);
			set_sec(argv[i + 1], argv[i + 2], num(argv[i + 3]));
			i += 4;
		} else if (!strcmp(op, "ehdr")) {
			NEED(2);
			set_ehdr(argv[i + 1], num(argv[i + 2]));
			i += 3;
		} else if (!strcmp(op, "phdr")) {
			NEED(3);
			set_phdr(num(argv[i + 1]), argv[i + 2], num(argv[i + 3]));
			i += 4;
		} else if (!strcmp(op, "sym")) {
			NEED(2);
			set_sym(argv[i + 1], num(argv[i + 2]));
			i += 3;
		} else if (!strcmp(op, "poke")) {
			NEED(3);
			poke(argv[i + 1], num(argv[i + 2]), argv[i + 3]);
			i += 4;
		} else if (!strcmp(op, "truncate")) {
			NEED(1);
			if (num(argv[i + 1]) < len)
				len = (size_t)num(argv[i + 1]);
			i += 2;
		} else {
			die("unknown operation", op);
		}
	}
	if (!(f = fopen(argv[2], "wb")) || fwrite(img, 1, len, f) != len || fclose(f))
		die("cannot write", argv[2]);
	return 0;
}
