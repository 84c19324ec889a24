/* test_json.c - json_str: quotes, control bytes, and bytes that are not
 * UTF-8 (names from binaries, serve's query parameters) still give JSON. */
#include "lib/json.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

static char *str(const char *s)
{
	static char out[256];
	FILE *f = fmemopen(out, sizeof(out), "w");
	json_str(f, s);
	fclose(f);
	return out;
}

int main(void)
{
	CHECK(!strcmp(str("plain"), "\"plain\""), "ascii as is");
	CHECK(!strcmp(str("a\"b\\c"), "\"a\\\"b\\\\c\""), "quote and backslash escaped");
	CHECK(!strcmp(str("\n\x01\x7f"), "\"\\u000a\\u0001\\u007f\""), "control bytes escaped");
	CHECK(!strcmp(str("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5"), "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x94\xa5\""),
	      "valid UTF-8 (2, 3 and 4 bytes) as is");
	CHECK(!strcmp(str("a\xff\xfe" "b"), "\"a\\ufffd\\ufffdb\""), "bytes that are never UTF-8 become U+FFFD");
	CHECK(!strcmp(str("\xc3"), "\"\\ufffd\""), "a sequence cut by the end of the string");
	CHECK(!strcmp(str("\xc0\xaf"), "\"\\ufffd\\ufffd\""), "an overlong form");
	CHECK(!strcmp(str("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\""), "a UTF-16 surrogate");
	CHECK(!strcmp(str("\xf4\x90\x80\x80"), "\"\\ufffd\\ufffd\\ufffd\\ufffd\""), "above U+10FFFF");
	CHECK(!strcmp(str(NULL), "null"), "NULL is null");
	TEST_DONE();
}
