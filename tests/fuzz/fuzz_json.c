/* fuzz_json.c - fuzz target for what stax serve does with its query
 * parameters before the views see them: ?tid= through parse_u64 and
 * ?func= echoed through json_str (the parameters arrive URL-decoded, so
 * any bytes but NUL). json_str's output must be a JSON string literal of
 * valid UTF-8 whatever the input: this target checks that and aborts
 * when it is not.
 *
 * libFuzzer: built by tests/fuzz/run.sh with every src/ file.
 * Input: the parameter's bytes (cut at the first NUL, as C strings are).
 */
#include "lib/json.h"
#include "lib/util.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void bad(const char *why, const char *out)
{
	fprintf(stderr, "fuzz_json: %s: %s\n", why, out);
	abort();
}

/* A JSON string literal (RFC 8259) of valid UTF-8 (RFC 3629). */
static void check(const unsigned char *s, size_t n)
{
	size_t i = 1;
	if (n < 2 || s[0] != '"' || s[n - 1] != '"')
		bad("not in quotes", (const char *)s);
	while (i < n - 1) {
		unsigned char c = s[i];
		if (c == '\\') {
			if (i + 1 >= n - 1)
				bad("escape at the end", (const char *)s);
			if (s[i + 1] == 'u') {
				size_t k;
				if (i + 6 > n - 1)
					bad("short \\u escape", (const char *)s);
				for (k = 2; k < 6; k++)
					if (!strchr("0123456789abcdefABCDEF", s[i + k]) || !s[i + k])
						bad("bad \\u escape", (const char *)s);
				i += 6;
			} else if (strchr("\"\\/bfnrt", s[i + 1]) && s[i + 1]) {
				i += 2;
			} else {
				bad("bad escape", (const char *)s);
			}
		} else if (c == '"' || c < 0x20) {
			bad("unescaped quote or control byte", (const char *)s);
		} else if (c < 0x80) {
			i++;
		} else {
			size_t len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0, k;
			uint32_t cp = c & (len == 4 ? 0x07 : len == 3 ? 0x0f : 0x1f);
			if (!len || c > 0xf4 || i + len > n - 1)
				bad("bad UTF-8 lead byte", (const char *)s);
			for (k = 1; k < len; k++) {
				if ((s[i + k] & 0xc0) != 0x80)
					bad("bad UTF-8 continuation", (const char *)s);
				cp = cp << 6 | (s[i + k] & 0x3f);
			}
			if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
			    (len == 4 && cp < 0x10000) || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
				bad("overlong, surrogate or too large", (const char *)s);
			i += len;
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in = malloc(size + 1), *out = NULL;
	size_t n = 0;
	uint64_t v;
	FILE *f;

	memcpy(in, data, size);
	in[size] = '\0';
	parse_u64(in, &v);
	f = open_memstream(&out, &n);
	json_str(f, in);
	fclose(f);
	check((const unsigned char *)out, n);
	free(out);
	free(in);
	return 0;
}
