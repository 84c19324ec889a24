/* json.h - write JSON strings safely (escaping control bytes and quotes). */
#ifndef STAX_LIB_JSON_H
#define STAX_LIB_JSON_H

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

#endif
