#include "view/view.h"

#include <stdlib.h>
#include <string.h>

bool view_keep(const struct profile *p, const struct view_filter *f, const struct rec_sample *s)
{
	if (f->pid >= 0 && s->pid != (uint64_t)f->pid)
		return false;
	if (f->tid >= 0 && s->tid != (uint64_t)f->tid)
		return false;
	if (f->comm && strcmp(profile_comm(p, s->pid, s->tid, s->time), f->comm))
		return false;
	return true;
}

const char *view_func_name(const struct profile *p, uint32_t func)
{
	const struct prof_func *fn = profile_func(p, func);
	return fn ? fn->name : "[unknown]";
}

double view_weight_ms(const struct profile *p, uint64_t weight)
{
	const char *clock = profile_meta(p, "event_is_clock");
	if (clock && !strcmp(clock, "1"))
		return weight / 1e6;
	return 0;
}
