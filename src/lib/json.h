/* json.h - write JSON strings safely (escaping control bytes and quotes). */
#ifndef STAX_LIB_JSON_H
#define STAX_LIB_JSON_H

#include <stdio.h>

/* Print s as a JSON string literal, quotes included. NULL prints null.
 * Bytes that are not valid UTF-8 each print as \ufffd, so the output is
 * JSON whatever s holds. */
void json_str(FILE *f, const char *s);
/* json_str, and '<', '>' and '&' as \u003c, \u003e and \u0026 (also
 * U+FFFE and U+FFFF, which XML forbids, escaped): the literal can sit in
 * a script inside HTML or XML (no "</script>", "]]>" or entity in it). */
void json_str_markup(FILE *f, const char *s);

#endif
