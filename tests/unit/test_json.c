/* test_json.c - json_str: quotes, control bytes, and bytes that are not
 * UTF-8 (names from binaries, serve's query parameters) still give JSON;
 * json_str_markup also keeps a literal safe inside an XML or HTML script. */
#include "lib/json.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

static char *str_with(void (*fn)(FILE *, const char *), const char *s)
{
	static char out[256];
	FILE *f = fmemopen(out, sizeof(out), "w");
	fn(f, s);
	fclose(f);
	return out;
}

static char *str(const char *s)
{
	return str_with(json_str, s);
}

static char *markup(const char *s)
{
	return str_with(json_str_markup, s);
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
	/* json_str_markup: a name in a flamegraph SVG's script (CDATA) */
	CHECK(!strcmp(str("a]]><&"), "\"a]]><&\""), "json_str leaves markup characters");
	CHECK(!strcmp(markup("operator<<(a]]>b&)"), "\"operator\\u003c\\u003c(a]]\\u003eb\\u0026)\""),
	      "markup: <, > and & escaped, so no ]]> or </script>");
	CHECK(!strcmp(markup("x\xef\xbf\xbe\xef\xbf\xbf\xef\xbf\xbd\"\xff"), "\"x\\ufffe\\uffff\xef\xbf\xbd\\\"\\ufffd\""),
	      "markup: U+FFFE and U+FFFF escaped, U+FFFD kept, quote and bad bytes as json_str");
	TEST_DONE();
}
