/* json.h - write JSON strings safely (escaping control bytes and quotes). */
#ifndef STAX_LIB_JSON_H
#define STAX_LIB_JSON_H

#include <stdio.h>

/* Print s as a JSON string literal, quotes included. NULL prints null.
 * Bytes that are not valid UTF-8 each print as \ufffd, so the output is
 * JSON whatever s holds. */
void json_str(FILE *f, const char *s);

#endif
