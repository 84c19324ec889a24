/* ehframe.c - read .eh_frame / .debug_frame entries (ehframe.h).
 *
 * Every read is checked against an end pointer. Corruption returns
 * -EINVAL and records the place in the cfi_section (SQLite's
 * CORRUPT_BKPT idea), so a caller can say where.
 */
#include "lib/ehframe.h"

#include <errno.h>
#include <string.h>
#define DW_EH_PE_omit 0xff
#define DW_EH_PE_indirect 0x80

int cfi_corrupt(struct cfi_section *sec, const uint8_t *p, const char *file, int line)
{
	if (sec) {
		sec->err_file = file;
		sec->err_line = line;
		sec->err_off = (sec->data && p >= sec->data && p <= sec->data + sec->size)
			? (size_t)(p - sec->data) : 0;
	}
	return -EINVAL;
}
#define CORRUPT(p) CFI_CORRUPT(sec, (p))

bool cfi_rd_u8(const uint8_t **pp, const uint8_t *end, uint8_t *v)
{
	if (*pp >= end)
		return false;
	*v = *(*pp)++;
	return true;
}

bool cfi_rd_fixed(const uint8_t **pp, const uint8_t *end, size_t n, uint64_t *v)
{
	if ((size_t)(end - *pp) < n || *pp > end)
		return false;
	uint64_t x = 0;
	for (size_t i = 0; i < n; i++)
		x |= (uint64_t)(*pp)[i] << (8 * i);
	*pp += n;
	*v = x;
	return true;
}

bool cfi_rd_uleb(const uint8_t **pp, const uint8_t *end, uint64_t *v)
{
	uint64_t x = 0;
	unsigned shift = 0;
	const uint8_t *p = *pp;
	for (;;) {
		if (p >= end)
			return false;
		uint8_t b = *p++;
		if (shift < 64)
			x |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			break;
		if (shift > 70)
			return false;
	}
	*pp = p;
	*v = x;
	return true;
}

bool cfi_rd_sleb(const uint8_t **pp, const uint8_t *end, int64_t *v)
{
	uint64_t x = 0;
	unsigned shift = 0;
	uint8_t b;
	const uint8_t *p = *pp;
	do {
		if (p >= end)
			return false;
		b = *p++;
		if (shift < 64)
			x |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (shift > 70)
			return false;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		x |= ~0ull << shift;
	*pp = p;
	*v = (int64_t)x;
	return true;
}

uint64_t cfi_field_vaddr(const struct cfi_section *sec, const uint8_t *p)
{
	if (sec && sec->data && p >= sec->data && p <= sec->data + sec->size)
		return sec->vaddr + (uint64_t)(p - sec->data);
	return 0;
}

int cfi_read_encoded(const uint8_t **pp, const uint8_t *end, uint8_t enc,
		     uint64_t field_addr, const struct cfi_section *sec,
		     uint64_t *out)
{
	const uint8_t *p = *pp;
	uint64_t v;
	int64_t s;

	if (enc == DW_EH_PE_omit || (enc & DW_EH_PE_indirect))
		return -EINVAL;
	switch (enc & 0x0f) {
	case 0x00: /* absptr */
		if (!cfi_rd_fixed(&p, end, 8, &v)) return -EINVAL;
		break;
	case 0x01: if (!cfi_rd_uleb(&p, end, &v)) return -EINVAL; break;
	case 0x02: if (!cfi_rd_fixed(&p, end, 2, &v)) return -EINVAL; break;
	case 0x03: if (!cfi_rd_fixed(&p, end, 4, &v)) return -EINVAL; break;
	case 0x04: if (!cfi_rd_fixed(&p, end, 8, &v)) return -EINVAL; break;
	case 0x09: if (!cfi_rd_sleb(&p, end, &s)) return -EINVAL; v = (uint64_t)s; break;
	case 0x0a: if (!cfi_rd_fixed(&p, end, 2, &v)) return -EINVAL; v = (uint64_t)(int64_t)(int16_t)v; break;
	case 0x0b: if (!cfi_rd_fixed(&p, end, 4, &v)) return -EINVAL; v = (uint64_t)(int64_t)(int32_t)v; break;
	case 0x0c: if (!cfi_rd_fixed(&p, end, 8, &v)) return -EINVAL; break;
	default:
		return -EINVAL;
	}
	switch (enc & 0x70) {
	case 0x00: break;
	case 0x10: v += field_addr; break;                      /* pcrel */
	case 0x20: v += sec ? sec->textrel : 0; break;          /* textrel */
	case 0x30: v += sec ? sec->datarel : 0; break;          /* datarel */
	case 0x40: break;                                       /* funcrel: LSDA only */
	case 0x50: break;                                       /* aligned */
	default:
		return -EINVAL;
	}
	*pp = p;
	*out = v;
	return 0;
}

/* Skip an encoded pointer without applying it (personality routines may
 * be indirect). */
static bool skip_encoded(const uint8_t **pp, const uint8_t *end, uint8_t enc)
{
	uint64_t v;
	if (enc == DW_EH_PE_omit)
		return true;
	return cfi_read_encoded(pp, end, enc & 0x0f, 0, NULL, &v) == 0;
}

/* Reads the initial length; sets *entry_end and *is64. Returns 0 at a
 * terminator, 1 for an entry, -EINVAL on corruption. */
static int read_length(struct cfi_section *sec, const uint8_t **pp,
		       const uint8_t **entry_end, bool *is64)
{
	const uint8_t *end = sec->data + sec->size;
	const uint8_t *p = *pp;
	uint64_t len;

	if (!cfi_rd_fixed(&p, end, 4, &len))
		return CORRUPT(p);
	*is64 = false;
	if (len == 0xffffffffu) {
		if (!cfi_rd_fixed(&p, end, 8, &len))
			return CORRUPT(p);
		*is64 = true;
	}
	if (len == 0)
		return 0;
	if (len > (uint64_t)(end - p))
		return CORRUPT(*pp);
	*entry_end = p + len;
	*pp = p;
	return 1;
}

static int parse_cie_body(struct cfi_section *sec, size_t off, const uint8_t *p,
			  const uint8_t *end, struct cfi_cie *cie)
{
	uint8_t u8;
	uint64_t u;
	int64_t s;

	memset(cie, 0, sizeof(*cie));
	cie->off = off;
	cie->addr_size = 8;
	cie->fde_enc = 0; /* absptr */
	cie->lsda_enc = DW_EH_PE_omit;
	if (!cfi_rd_u8(&p, end, &cie->version))
		return CORRUPT(p);
	if (cie->version != 1 && cie->version != 3 && cie->version != 4)
		return CORRUPT(p - 1);
	const char *aug = (const char *)p;
	const uint8_t *nul = memchr(p, 0, (size_t)(end - p));
	if (!nul)
		return CORRUPT(p);
	p = nul + 1;
	if (cie->version >= 4) {
		uint8_t seg;
		if (!cfi_rd_u8(&p, end, &cie->addr_size) || !cfi_rd_u8(&p, end, &seg))
			return CORRUPT(p);
		if (cie->addr_size != 8 && cie->addr_size != 4)
			return CORRUPT(p - 2);
		if (seg != 0)
			return CORRUPT(p - 1);
	}
	if (!cfi_rd_uleb(&p, end, &cie->code_align) || !cfi_rd_sleb(&p, end, &cie->data_align))
		return CORRUPT(p);
	if (cie->version == 1) {
		if (!cfi_rd_u8(&p, end, &u8))
			return CORRUPT(p);
		cie->ra_reg = u8;
	} else {
		if (!cfi_rd_uleb(&p, end, &u))
			return CORRUPT(p);
		cie->ra_reg = u > 255 ? 255 : (unsigned)u;
	}
	if (cie->addr_size == 4)
		cie->fde_enc = 0x03;
	if (aug[0] == 'z') {
		if (!cfi_rd_uleb(&p, end, &u) || u > (uint64_t)(end - p))
			return CORRUPT(p);
		const uint8_t *aend = p + u;
		cie->has_aug_data = true;
		for (const char *a = aug + 1; *a; a++) {
			switch (*a) {
			case 'R':
				if (!cfi_rd_u8(&p, aend, &cie->fde_enc))
					return CORRUPT(p);
				break;
			case 'L':
				if (!cfi_rd_u8(&p, aend, &cie->lsda_enc))
					return CORRUPT(p);
				break;
			case 'P':
				if (!cfi_rd_u8(&p, aend, &u8) || !skip_encoded(&p, aend, u8))
					return CORRUPT(p);
				break;
			case 'S':
				cie->signal = true;
				break;
			case 'B': /* aarch64 b-key */
			case 'G': /* MTE tagged frames */
				break;
			default:
				/* Unknown letter: 'z' tells us the length, so the
				 * instructions are still reachable. */
				goto aug_done;
			}
		}
	aug_done:
		p = aend;
	} else if (aug[0] != 0) {
		if (strcmp(aug, "eh") == 0) {
			if (!cfi_rd_fixed(&p, end, cie->addr_size, &u))
				return CORRUPT(p);
		} else {
			return CORRUPT((const uint8_t *)aug);
		}
	}
	(void)s;
	cie->insn = p;
	cie->insn_end = end;
	return 0;
}

int cfi_parse_cie(struct cfi_section *sec, size_t off, struct cfi_cie *cie)
{
	const uint8_t *p, *entry_end;
	bool is64;
	uint64_t id;
	int r;

	if (off >= sec->size)
		return CORRUPT(sec->data + sec->size);
	p = sec->data + off;
	r = read_length(sec, &p, &entry_end, &is64);
	if (r <= 0)
		return r < 0 ? r : CORRUPT(p);
	if (!cfi_rd_fixed(&p, entry_end, is64 ? 8 : 4, &id))
		return CORRUPT(p);
	if (sec->is_eh ? id != 0 : id != (is64 ? ~0ull : 0xffffffffull))
		return CORRUPT(p);
	return parse_cie_body(sec, off, p, entry_end, cie);
}

int cfi_parse_entry(struct cfi_section *sec, size_t off, size_t *next,
		    struct cfi_cie *cie, struct cfi_fde *fde)
{
	const uint8_t *p, *entry_end, *id_at;
	bool is64;
	uint64_t id;
	int r;

	if (off >= sec->size)
		return 0;
	p = sec->data + off;
	r = read_length(sec, &p, &entry_end, &is64);
	if (r <= 0)
		return r;
	*next = (size_t)(entry_end - sec->data);
	id_at = p;
	if (!cfi_rd_fixed(&p, entry_end, is64 ? 8 : 4, &id))
		return CORRUPT(p);
	bool is_cie = sec->is_eh ? id == 0 : id == (is64 ? ~0ull : 0xffffffffull);
	if (is_cie) {
		r = parse_cie_body(sec, off, p, entry_end, cie);
		return r < 0 ? r : 1;
	}

	size_t cie_off;
	if (sec->is_eh) {
		if (id > (uint64_t)(id_at - sec->data))
			return CORRUPT(id_at);
		cie_off = (size_t)(id_at - sec->data) - id;
	} else {
		if (id >= sec->size)
			return CORRUPT(id_at);
		cie_off = id;
	}
	if (!cie->insn || cie->off != cie_off) {
		r = cfi_parse_cie(sec, cie_off, cie);
		if (r < 0)
			return r;
	}
	memset(fde, 0, sizeof(*fde));
	fde->off = off;
	fde->cie_off = cie_off;
	uint64_t range;
	uint8_t enc = sec->is_eh ? cie->fde_enc : (cie->addr_size == 4 ? 0x03 : 0x00);
	if (cfi_read_encoded(&p, entry_end, enc, cfi_field_vaddr(sec, p), sec, &fde->pc_begin) < 0)
		return CORRUPT(p);
	if (cfi_read_encoded(&p, entry_end, enc & 0x0f, 0, sec, &range) < 0)
		return CORRUPT(p);
	if (cie->addr_size == 4)
		range &= 0xffffffffu;
	fde->pc_end = fde->pc_begin + range;
	if (fde->pc_end < fde->pc_begin)
		return CORRUPT(p);
	if (cie->has_aug_data) {
		uint64_t alen;
		if (!cfi_rd_uleb(&p, entry_end, &alen) || alen > (uint64_t)(entry_end - p))
			return CORRUPT(p);
		p += alen;
	}
	fde->insn = p;
	fde->insn_end = entry_end;
	return 2;
}
