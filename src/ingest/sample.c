#include "ingest/sample.h"
#include "lib/cursor.h"
#include "lib/util.h"

#include <string.h>

static const char *const sw_names[] = {
	"cpu-clock", "task-clock", "page-faults", "context-switches", "cpu-migrations",
	"minor-faults", "major-faults", "alignment-faults", "emulation-faults", "dummy",
	"bpf-output", "cgroup-switches",
};
static const char *const hw_names[] = {
	"cycles", "instructions", "cache-references", "cache-misses", "branches",
	"branch-misses", "bus-cycles", "stalled-cycles-frontend", "stalled-cycles-backend",
	"ref-cycles",
};

const char *perf_event_name(uint32_t type, uint64_t config)
{
	if (type == PERF_TYPE_SOFTWARE && config < sizeof(sw_names) / sizeof(sw_names[0]))
		return sw_names[config];
	if (type == PERF_TYPE_HARDWARE && config < sizeof(hw_names) / sizeof(hw_names[0]))
		return hw_names[config];
	return NULL;
}

static uint64_t get64(struct cursor *c)
{
	uint64_t v;
	cur_get(c, &v, 8);
	return v;
}

static void skip(struct cursor *c, uint64_t n)
{
	if (c->bad || cur_left(c) < n) {
		c->bad = true;
		return;
	}
	c->p += n;
}

static void skip_read(struct cursor *c, uint64_t rf)
{
	uint64_t per = 1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST);
	uint64_t times = !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) + !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);
	uint64_t n;
	if (!(rf & PERF_FORMAT_GROUP)) {
		skip(c, (per + times) * 8);
		return;
	}
	n = get64(c);
	skip(c, times * 8);
	if (n > cur_left(c) / 8 / per) {
		c->bad = true;
		return;
	}
	skip(c, n * per * 8);
}

int perf_sample_parse(const struct perf_format *f, const struct perf_event_header *h,
		      struct perf_sample *s)
{
	struct cursor c;
	uint64_t t = f->sample_type, v;

	memset(s, 0, sizeof(*s));
	s->misc = h->misc;
	if (h->size < sizeof(*h))
		return -1;
	cur_init(&c, h + 1, h->size - sizeof(*h));
	if (t & PERF_SAMPLE_IDENTIFIER)
		s->id = get64(&c);
	if (t & PERF_SAMPLE_IP)
		s->ip = get64(&c);
	if (t & PERF_SAMPLE_TID) {
		v = get64(&c);
		s->pid = (uint32_t)v;
		s->tid = (uint32_t)(v >> 32);
	}
	if (t & PERF_SAMPLE_TIME)
		s->time = get64(&c);
	if (t & PERF_SAMPLE_ADDR)
		s->addr = get64(&c);
	if (t & PERF_SAMPLE_ID)
		s->id = get64(&c);
	if (t & PERF_SAMPLE_STREAM_ID)
		skip(&c, 8);
	if (t & PERF_SAMPLE_CPU)
		s->cpu = (uint32_t)get64(&c);
	if (t & PERF_SAMPLE_PERIOD)
		s->period = get64(&c);
	if (t & PERF_SAMPLE_READ)
		skip_read(&c, f->read_format);
	if (t & PERF_SAMPLE_CALLCHAIN) {
		s->callchain_nr = get64(&c);
		if (s->callchain_nr > cur_left(&c) / 8)
			return -1;
		s->callchain = (const uint64_t *)c.p;
		skip(&c, s->callchain_nr * 8);
	}
	if (t & PERF_SAMPLE_RAW) {
		uint32_t n = 0;
		cur_get(&c, &n, 4);
		s->raw = c.p;
		s->raw_size = n;
		skip(&c, n);
		if (c.bad)
			return -1;
	}
	if (t & PERF_SAMPLE_BRANCH_STACK) {
		uint64_t n = get64(&c);
		if (n > cur_left(&c) / 24)
			return -1;
		/* hw_idx is present only with PERF_SAMPLE_BRANCH_HW_INDEX, which
		 * lives in branch_sample_type; we do not ask for branch stacks */
		skip(&c, n * 24);
	}
	if (t & PERF_SAMPLE_REGS_USER) {
		s->regs_abi = get64(&c);
		if (s->regs_abi) {
			uint64_t n = (uint64_t)__builtin_popcountll(f->regs_user_mask);
			s->regs = c.p;
			s->regs_mask = f->regs_user_mask;
			skip(&c, n * 8);
		}
	}
	if (t & PERF_SAMPLE_STACK_USER) {
		s->stack_size = get64(&c);
		if (s->stack_size) {
			if (s->stack_size > cur_left(&c))
				return -1;
			s->stack = c.p;
			skip(&c, s->stack_size);
			s->stack_dyn_size = get64(&c);
			if (s->stack_dyn_size > s->stack_size)
				s->stack_dyn_size = s->stack_size;
		}
	}
	/* later fields (weight, data_src, ...) are not needed */
	return c.bad ? -1 : 0;
}

int perf_mmap_parse(const struct perf_format *f, const struct perf_event_header *h,
		    struct perf_mmap *m)
{
	const uint8_t *p = (const uint8_t *)(h + 1);
	size_t idsz = perf_sample_id_size(f), fixed = h->type == PERF_RECORD_MMAP2 ? 64 : 32, room;
	uint32_t pidtid[2];

	memset(m, 0, sizeof(*m));
	if (h->size < sizeof(*h) + idsz + fixed + 1)
		return -1;
	memcpy(pidtid, p, 8);
	m->pid = pidtid[0];
	m->tid = pidtid[1];
	memcpy(&m->start, p + 8, 8);
	memcpy(&m->len, p + 16, 8);
	memcpy(&m->pgoff, p + 24, 8);
	m->prot = 5;
	if (h->type == PERF_RECORD_MMAP2) {
		if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			m->has_build_id = true;
			m->build_id_size = MIN(p[32], 20);
			memcpy(m->build_id, p + 36, m->build_id_size);
		} else {
			memcpy(&m->maj, p + 32, 4);
			memcpy(&m->min, p + 36, 4);
			memcpy(&m->inode, p + 40, 8);
		}
		memcpy(&m->prot, p + 56, 4);
	} else {
		m->data = h->misc & PERF_RECORD_MISC_MMAP_DATA;
	}
	room = h->size - sizeof(*h) - idsz - fixed;
	if (strnlen((const char *)p + fixed, room) < room)
		m->name = (const char *)p + fixed;
	return 0;
}

size_t perf_sample_id_size(const struct perf_format *f)
{
	uint64_t t = f->sample_type;
	size_t n = 0;
	if (!f->sample_id_all)
		return 0;
	n += (t & PERF_SAMPLE_TID) ? 8 : 0;
	n += (t & PERF_SAMPLE_TIME) ? 8 : 0;
	n += (t & PERF_SAMPLE_ID) ? 8 : 0;
	n += (t & PERF_SAMPLE_STREAM_ID) ? 8 : 0;
	n += (t & PERF_SAMPLE_CPU) ? 8 : 0;
	n += (t & PERF_SAMPLE_IDENTIFIER) ? 8 : 0;
	return n;
}

int perf_sample_id_parse(const struct perf_format *f, const struct perf_event_header *h,
			 struct perf_sample *s)
{
	struct cursor c;
	uint64_t t = f->sample_type, v;
	size_t n = perf_sample_id_size(f);

	memset(s, 0, sizeof(*s));
	s->misc = h->misc;
	if (!n || h->size < sizeof(*h) + n)
		return -1;
	cur_init(&c, (const uint8_t *)h + h->size - n, n);
	if (t & PERF_SAMPLE_TID) {
		v = get64(&c);
		s->pid = (uint32_t)v;
		s->tid = (uint32_t)(v >> 32);
	}
	if (t & PERF_SAMPLE_TIME)
		s->time = get64(&c);
	if (t & PERF_SAMPLE_ID)
		s->id = get64(&c);
	if (t & PERF_SAMPLE_STREAM_ID)
		skip(&c, 8);
	if (t & PERF_SAMPLE_CPU)
		s->cpu = (uint32_t)get64(&c);
	if (t & PERF_SAMPLE_IDENTIFIER)
		s->id = get64(&c);
	return c.bad ? -1 : 0;
}

uint64_t perf_record_time(const struct perf_format *f, const struct perf_event_header *h)
{
	struct perf_sample s;
	if (h->type == PERF_RECORD_SAMPLE) {
		/* time comes after identifier, ip and tid: avoid a full parse */
		struct cursor c;
		uint64_t t = f->sample_type, v = 0;
		if (!(t & PERF_SAMPLE_TIME) || h->size < sizeof(*h))
			return 0;
		cur_init(&c, h + 1, h->size - sizeof(*h));
		if (t & PERF_SAMPLE_IDENTIFIER)
			skip(&c, 8);
		if (t & PERF_SAMPLE_IP)
			skip(&c, 8);
		if (t & PERF_SAMPLE_TID)
			skip(&c, 8);
		cur_get(&c, &v, 8);
		return v;
	}
	if (perf_sample_id_parse(f, h, &s) == 0)
		return s.time;
	return 0;
}
