#include "lib/json.h"
#include "lib/util.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* ---- the streaming writer ---- */

/* Before a value: the comma after the previous item, then the key. */
static void item(struct jw *w, const char *key)
{
	if (w->depth > 0) {
		if (w->has[w->depth - 1])
			fputc(',', w->f);
		w->has[w->depth - 1] = true;
	}
	if (key) {
		json_str(w->f, key);
		fputc(':', w->f);
	}
}

static void open_c(struct jw *w, const char *key, char c)
{
	item(w, key);
	if (w->depth == w->cap) {
		bool *h = xmalloc(2 * w->cap * sizeof(*h));
		memcpy(h, w->has, w->cap * sizeof(*h));
		if (w->has != w->inline_has)
			free(w->has);
		w->has = h;
		w->cap *= 2;
	}
	fputc(c, w->f);
	w->has[w->depth++] = false;
}

static void close_c(struct jw *w, char c)
{
	if (!w->depth)
		BUG("JSON closed more than opened");
	w->depth--;
	fputc(c, w->f);
	if (!w->depth && w->has != w->inline_has) {
		free(w->has);
		w->has = w->inline_has;
		w->cap = JW_DEPTH;
	}
}

void jw_init_value(struct jw *w, FILE *f)
{
	w->f = f;
	w->depth = 0;
	w->has = w->inline_has;
	w->cap = JW_DEPTH;
}

void jw_begin(struct jw *w, FILE *f)
{
	jw_init_value(w, f);
	jw_object(w, NULL);
	jw_u64(w, "json_version", JSON_VERSION);
}

void jw_end(struct jw *w)
{
	jw_object_end(w);
	if (w->depth)
		BUG("JSON containers left open");
	fputc('\n', w->f);
}

void jw_object(struct jw *w, const char *key)
{
	open_c(w, key, '{');
}

void jw_object_end(struct jw *w)
{
	close_c(w, '}');
}

void jw_array(struct jw *w, const char *key)
{
	open_c(w, key, '[');
}

void jw_array_end(struct jw *w)
{
	close_c(w, ']');
}

void jw_str(struct jw *w, const char *key, const char *s)
{
	item(w, key);
	json_str(w->f, s);
}

void jw_str_markup(struct jw *w, const char *key, const char *s)
{
	item(w, key);
	json_str_markup(w->f, s);
}

void jw_u64(struct jw *w, const char *key, uint64_t v)
{
	item(w, key);
	fprintf(w->f, "%" PRIu64, v);
}

void jw_i64(struct jw *w, const char *key, int64_t v)
{
	item(w, key);
	fprintf(w->f, "%" PRId64, v);
}

void jw_double(struct jw *w, const char *key, double v, int decimals)
{
	item(w, key);
	if (isfinite(v))
		fprintf(w->f, "%.*f", decimals, v);
	else
		fputs("null", w->f);
}

void jw_bool(struct jw *w, const char *key, bool v)
{
	item(w, key);
	fputs(v ? "true" : "false", w->f);
}

void jw_null(struct jw *w, const char *key)
{
	item(w, key);
	fputs("null", w->f);
}

void jw_addr(struct jw *w, const char *key, uint64_t addr)
{
	item(w, key);
	json_addr(w->f, addr);
}

void jw_key(struct jw *w, const char *key)
{
	item(w, key);
}

void jw_raw(struct jw *w, const char *key, const char *fmt, ...)
{
	va_list ap;
	item(w, key);
	va_start(ap, fmt);
	vfprintf(w->f, fmt, ap);
	va_end(ap);
}
