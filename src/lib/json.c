#include "lib/json.h"

#include <stdbool.h>
#include <inttypes.h>
#include <stdint.h>

size_t utf8_len(const unsigned char *s)
{
	size_t n, i;
	uint32_t cp;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80) /* also stops at the NUL */
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

static void json_str_esc(FILE *f, const char *s, bool markup)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n;

	if (!s) {
		fputs("null", f);
		return;
	}
	fputc('"', f);
	for (; *p; p++) {
		unsigned char c = *p;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == 0x7f || (markup && (c == '<' || c == '>' || c == '&')))
			fprintf(f, "\\u%04x", c);
		else if (c < 0x80)
			fputc(c, f);
		else if ((n = utf8_len(p)) > 0 && markup && n == 3 && c == 0xef && p[1] == 0xbf && p[2] >= 0xbe) {
			/* U+FFFE and U+FFFF are not XML characters, even in CDATA */
			fprintf(f, "\\uff%s", p[2] == 0xbe ? "fe" : "ff");
			p += 2;
		} else if (n > 0) {
			fwrite(p, 1, n, f);
			p += n - 1;
		} else {
			/* not UTF-8 (a name from a binary or a URL): JSON must
			 * be, so the byte becomes U+FFFD */
			fputs("\\ufffd", f);
		}
	}
	fputc('"', f);
}

void json_str(FILE *f, const char *s)
{
	json_str_esc(f, s, false);
}

void json_str_markup(FILE *f, const char *s)
{
	json_str_esc(f, s, true);
}

void json_addr(FILE *f, uint64_t addr)
{
	fprintf(f, "\"0x%" PRIx64 "\"", addr);
}
