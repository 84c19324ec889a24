/* err.c - filling a struct err (err.h). */
#include "lib/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int err_set(struct err *e, int code, const char *fmt, ...)
{
	va_list ap;
	if (e) {
		e->code = code;
		va_start(ap, fmt);
		vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
		va_end(ap);
	}
	return code;
}

void err_append(struct err *e, const char *fmt, ...)
{
	va_list ap;
	size_t len;
	if (!e)
		return;
	len = strnlen(e->msg, sizeof(e->msg));
	if (len + 1 >= sizeof(e->msg))
		return;
	va_start(ap, fmt);
	vsnprintf(e->msg + len, sizeof(e->msg) - len, fmt, ap);
	va_end(ap);
}
