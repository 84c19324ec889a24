/* json.h - write JSON: strings escaped safely, and a small streaming
 * writer (struct jw) that every --json view uses, so commas, nesting and
 * the json_version key are handled in one place. */
#ifndef STAX_LIB_JSON_H
#define STAX_LIB_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The version of stax's JSON output, the first key of every top-level
 * object a --json view (and serve's API) prints: "json_version". 2:
 * addresses are "0x..." strings (1 printed them as numbers, which JSON
 * parsers round above 2^53, so kernel addresses came out wrong). 3:
 * script's "time" is seconds (with microseconds), its nanoseconds exact
 * in the string "time_ns" (2 printed nanoseconds as a number, past 2^53
 * after 104 days of uptime). */
#define JSON_VERSION 3
#define JSON_STR_(x) #x
#define JSON_STR(x) JSON_STR_(x)
/* Opens a top-level object: '{"json_version":3,' */
#define JSON_OPEN "{\"json_version\":" JSON_STR(JSON_VERSION) ","

/* Length of the valid UTF-8 sequence at s (lead byte >= 0x80), or 0 when
 * it is not one: overlong forms, surrogates and code points above
 * U+10FFFF are invalid too (RFC 3629). Reads no further than a NUL. The
 * one UTF-8 check of stax (JSON strings, SVG text). */
size_t utf8_len(const unsigned char *s);

/* Print s as a JSON string literal, quotes included. NULL prints null.
 * Bytes that are not valid UTF-8 each print as \ufffd, so the output is
 * JSON whatever s holds. */
void json_str(FILE *f, const char *s);
/* json_str, and '<', '>' and '&' as \u003c, \u003e and \u0026 (also
 * U+FFFE and U+FFFF, which XML forbids, escaped): the literal can sit in
 * a script inside HTML or XML (no "</script>", "]]>" or entity in it). */
void json_str_markup(FILE *f, const char *s);
/* Print an address as a JSON string "0x1a2b" (lowercase hex): exact
 * whatever its size, where a number above 2^53 would be rounded. */
void json_addr(FILE *f, uint64_t addr);

/* The streaming writer. Values go out as they are given: each value
 * function takes the key it goes under inside an object, NULL inside an
 * array (or for the top level). Commas are put where they belong; the
 * caller opens and closes containers in order, as deep as it likes (a
 * call tree nests a level per frame): past JW_DEPTH levels the writer
 * holds memory until the document is closed. Writes go to f as they
 * come: a view that fails half-way leaves half a document (serve rewinds
 * its memory stream then). */
#define JW_DEPTH 64
struct jw {
	FILE *f;
	size_t depth;               /* open containers */
	bool *has;                  /* has[d]: the container at depth d has an item */
	bool inline_has[JW_DEPTH];
	size_t cap;
};
/* Start the top-level object of a --json view: {"json_version":N */
void jw_begin(struct jw *w, FILE *f);
/* Close the top-level object and end the line. */
void jw_end(struct jw *w);
/* Start writing into f inside a document someone else opened (serve's
 * /api/info puts a view's object under a key): as jw_begin without the
 * object; the first value written is the one the caller's key awaits. */
void jw_init_value(struct jw *w, FILE *f);

void jw_object(struct jw *w, const char *key);
void jw_object_end(struct jw *w);
void jw_array(struct jw *w, const char *key);
void jw_array_end(struct jw *w);
void jw_str(struct jw *w, const char *key, const char *s);     /* NULL: null */
void jw_str_markup(struct jw *w, const char *key, const char *s); /* json_str_markup */
void jw_u64(struct jw *w, const char *key, uint64_t v);
void jw_i64(struct jw *w, const char *key, int64_t v);
/* v with decimals digits after the point ("%.*f"); not finite: null */
void jw_double(struct jw *w, const char *key, double v, int decimals);
void jw_bool(struct jw *w, const char *key, bool v);
void jw_null(struct jw *w, const char *key);
void jw_addr(struct jw *w, const char *key, uint64_t addr);
/* Only the key (and the comma before it): the caller writes the value
 * itself to w->f next, as one JSON value (serve puts a view's whole
 * document under a key). */
void jw_key(struct jw *w, const char *key);
/* A value already in JSON form, printf-style (a number with its own
 * format): the caller answers for it being JSON. */
void jw_raw(struct jw *w, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
