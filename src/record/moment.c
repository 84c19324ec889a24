/* moment.c - the in-kernel reader at the sample's moment (see moment.h). */
#include "record/moment.h"
#include "lib/hash.h"
#include "lib/perm.h"

#include "moment.skel.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define MOMENT_RING_DEFAULT (8u << 20)
#define MOMENT_HELD_MAX (64u << 20)   /* bytes of records waiting for their sample */
#define MOMENT_QUEUE_MAX 512          /* records waiting per thread */

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

/* A record read, waiting for its sample. */
struct mrec {
	struct mrec *next;
	uint64_t time;
	uint8_t data[];   /* the record (struct moment_rec first) */
};

struct mthread {
	uint32_t tid;
	uint32_t n;
	struct mrec *head, *tail;
	uint64_t asked;   /* when need_tstate was last called for it */
	uint64_t retry;   /* and how long until it is called again */
};

struct moment {
	struct moment_opts o;
	struct moment_bpf *skel;
	struct ring_buffer *rb;
	struct bpf_link **links;
	size_t nlinks, linkcap;
	struct mthread *threads;
	size_t nthreads, threadcap;
	struct hmap thread_index;  /* tid -> index */
	struct mrec *taken;        /* the record moment_take() returned last */
	size_t held;               /* bytes in the queues */
	int stats_fd;              /* BPF_ENABLE_STATS holder, or -1 */
	struct moment_stats st;
};

/* libbpf's messages: kept (the last lines) for the error of a failed
 * load, not printed (stax's output is its own) unless STAX_BPF_LOG=1 is
 * set (then all of them, the verifier's log of a refused program too, on
 * standard error: for whoever debugs the reader on another kernel). */
static char libbpf_log[1024];

static int on_libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	const char *all = getenv("STAX_BPF_LOG");
	char line[512];
	size_t n, have;
	if (all && !strcmp(all, "1")) {
		va_list aq;
		va_copy(aq, ap);
		vfprintf(stderr, fmt, aq);
		va_end(aq);
	}
	if (level == LIBBPF_DEBUG)
		return 0;
	vsnprintf(line, sizeof(line), fmt, ap);
	n = strlen(line);
	have = strlen(libbpf_log);
	if (have + n >= sizeof(libbpf_log)) {
		memmove(libbpf_log, libbpf_log + have / 2, have - have / 2 + 1);
		have = strlen(libbpf_log);
	}
	if (have + n < sizeof(libbpf_log))
		memcpy(libbpf_log + have, line, n + 1);
	return 0;
}

/* The last non-empty line of libbpf's messages, for an error. */
static const char *libbpf_last(char *buf, size_t n)
{
	char *end = libbpf_log + strlen(libbpf_log), *start;
	while (end > libbpf_log && (end[-1] == '\n' || end[-1] == ' '))
		end--;
	start = end;
	while (start > libbpf_log && start[-1] != '\n')
		start--;
	snprintf(buf, n, "%.*s", (int)(end - start), start);
	return buf;
}

static struct mthread *thread_of(struct moment *m, uint32_t tid, bool make)
{
	uint32_t at;
	if (hmap_get(&m->thread_index, tid, &at))
		return &m->threads[at];
	if (!make)
		return NULL;
	GROW(m->threads, m->threadcap, m->nthreads + 1);
	at = (uint32_t)m->nthreads++;
	memset(&m->threads[at], 0, sizeof(m->threads[at]));
	m->threads[at].tid = tid;
	hmap_put(&m->thread_index, tid, at);
	return &m->threads[at];
}

static void drop_head(struct moment *m, struct mthread *t)
{
	struct mrec *r = t->head;
	const struct moment_rec *h = (const void *)r->data;
	t->head = r->next;
	if (!t->head)
		t->tail = NULL;
	t->n--;
	m->held -= h->size;
	m->st.unmatched++;
	free(r);
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct moment *m = ctx;
	const struct moment_rec *h = data;
	struct mthread *t;
	struct mrec *r;

	if (size < sizeof(*h) || h->size > size || h->size < sizeof(*h)) {
		m->st.lost_bytes += size;
		return 0;
	}
	m->st.read++;
	t = thread_of(m, h->tid, true);
	if ((h->flags & (MOMENT_F_NO_TSTATE | MOMENT_F_TSTATE_GONE)) && m->o.need_tstate &&
	    (!t->asked || h->time - t->asked >= t->retry)) {
		/* soon at first (an interpreter starting makes its thread
		 * state just after), then less and less often for a thread
		 * that has none (a thread that never runs Python) */
		t->retry = !t->asked ? MOMENT_TSTATE_RETRY_NS : MIN(2 * t->retry, MOMENT_TSTATE_RETRY_MAX_NS);
		t->asked = h->time ? h->time : 1;
		m->o.need_tstate(m->o.arg, h->pid, h->tid);
	} else if ((h->flags & MOMENT_F_PY) && !(h->flags & (MOMENT_F_NO_TSTATE | MOMENT_F_TSTATE_GONE))) {
		t->asked = 0; /* known: a later loss of it is asked soon again */
	}
	if (m->held + h->size > MOMENT_HELD_MAX) {
		m->st.unmatched++;
		return 0;
	}
	if (t->n >= MOMENT_QUEUE_MAX)
		drop_head(m, t);
	r = xmalloc(sizeof(*r) + h->size);
	r->next = NULL;
	r->time = h->time;
	memcpy(r->data, data, h->size);
	if (t->tail)
		t->tail->next = r;
	else
		t->head = r;
	t->tail = r;
	t->n++;
	m->held += h->size;
	return 0;
}

int moment_open(struct moment **out, const struct moment_opts *o, struct err *e)
{
	struct moment *m;
	struct moment_bpf *skel;
	size_t ring = o->ring_bytes ? o->ring_bytes : MOMENT_RING_DEFAULT;
	char last[400];
	int ret, ncpu;

	*out = NULL;
	if (geteuid() != 0 && !(perm_has_cap(CAP_BPF) && perm_has_cap(CAP_PERFMON)))
		return err_set(e, -EPERM, "cannot load the in-kernel reader: it needs root, or CAP_BPF"
			       " and CAP_PERFMON (run stax as root, or give it those capabilities)");
	if (access("/sys/kernel/btf/vmlinux", R_OK))
		return err_set(e, -ENOENT, "cannot load the in-kernel reader: this kernel has no BTF"
			       " (/sys/kernel/btf/vmlinux; it needs a kernel built with"
			       " CONFIG_DEBUG_INFO_BTF, as Debian's are)");
	if (ring < (64u << 10) || (ring & (ring - 1)))
		return err_set(e, -EINVAL, "cannot load the in-kernel reader: its ring of %zu bytes"
			       " is not a power of two of 64 KiB or more", ring);
	libbpf_set_print(on_libbpf_print);
	libbpf_log[0] = 0;
	skel = moment_bpf__open();
	if (!skel)
		return err_set(e, -errno ? -errno : -EINVAL, "cannot load the in-kernel reader: %s",
			       libbpf_last(last, sizeof(last)));
	ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0) {
		moment_bpf__destroy(skel);
		return err_set(e, ncpu < 0 ? ncpu : -EINVAL, "cannot load the in-kernel reader: cannot"
			       " count this machine's possible cpus (/sys/devices/system/cpu/possible)");
	}
	if ((ret = bpf_map__set_max_entries(skel->maps.ring, (uint32_t)ring)) ||
	    (ret = bpf_map__set_max_entries(skel->maps.scratch, (uint32_t)ncpu)) ||
	    (ret = moment_bpf__load(skel))) {
		const char *why = libbpf_last(last, sizeof(last));
		moment_bpf__destroy(skel);
		if (ret > 0)
			ret = -ret;
		if (strstr(libbpf_log, "unknown func") || strstr(libbpf_log, "invalid func") ||
		    ret == -ENOTSUP || ret == -EOPNOTSUPP)
			return err_set(e, -EOPNOTSUPP, "cannot load the in-kernel reader: this kernel is"
				       " too old for it (it needs bpf_loop and bpf_task_pt_regs, Linux"
				       " 5.17 or later): %s", why);
		if (strstr(libbpf_log, "BEGIN PROG LOAD LOG"))
			return err_set(e, ret ? ret : -EINVAL, "cannot load the in-kernel reader: this kernel's"
				       " verifier refused it: %s (STAX_BPF_LOG=1 shows its log)", why);
		if (ret == -EPERM || ret == -EACCES)
			return err_set(e, -EPERM, "cannot load the in-kernel reader: permission denied"
				       " (it needs root, or CAP_BPF and CAP_PERFMON; a lockdown or"
				       " seccomp policy may also refuse BPF)");
		return err_set(e, ret ? ret : -EINVAL, "cannot load the in-kernel reader: %s (%s)",
			       strerror(ret ? -ret : EINVAL), why[0] ? why : "no reason given");
	}
	skel->bss->config.stack_user = o->stack_user;
	skel->bss->config.window = o->window;
	skel->bss->config.topwin = o->topwin;
	skel->bss->config.deep_all = o->deep_all;
	m = xcalloc(1, sizeof(*m));
	m->o = *o;
	m->skel = skel;
	m->stats_fd = -1;
	hmap_init(&m->thread_index);
	m->rb = ring_buffer__new(bpf_map__fd(skel->maps.ring), on_record, m, NULL);
	if (!m->rb) {
		ret = -errno ? -errno : -ENOMEM;
		moment_free(m);
		return err_set(e, ret, "cannot map the in-kernel reader's ring buffer: %s", strerror(-ret));
	}
	*out = m;
	return 0;
}

void moment_free(struct moment *m)
{
	size_t i;
	if (!m)
		return;
	for (i = 0; i < m->nlinks; i++)
		bpf_link__destroy(m->links[i]);
	if (m->stats_fd >= 0)
		close(m->stats_fd);
	free(m->links);
	if (m->rb)
		ring_buffer__free(m->rb);
	moment_bpf__destroy(m->skel);
	for (i = 0; i < m->nthreads; i++)
		while (m->threads[i].head) {
			struct mrec *r = m->threads[i].head;
			m->threads[i].head = r->next;
			free(r);
		}
	free(m->threads);
	free(m->taken);
	hmap_release(&m->thread_index);
	free(m);
}

int moment_attach(struct moment *m, int perf_fd, struct err *e)
{
	struct bpf_link *l = bpf_program__attach_perf_event(m->skel->progs.moment_sample, perf_fd);
	char last[400];
	int ret;
	if (!l) {
		ret = -errno ? -errno : -EINVAL;
		return err_set(e, ret, "cannot attach the in-kernel reader to a perf event: %s (%s)",
			       strerror(-ret), libbpf_last(last, sizeof(last)));
	}
	/* libbpf enables the event as it attaches; the recorder enables
	 * its events itself, at the command's exec (enable_on_exec, which
	 * still holds for a disabled event) or when it starts: a command's
	 * samples from before its exec were stax's child in execve (slow
	 * paths over 9p in the arm64 guest: 1.7% of callgraph-pac's samples,
	 * [unknown] and broken) */
	ioctl(perf_fd, PERF_EVENT_IOC_DISABLE, 0);
	GROW(m->links, m->linkcap, m->nlinks + 1);
	m->links[m->nlinks++] = l;
	return 0;
}

static bool off_fits(uint64_t off, uint64_t size, uint64_t buf)
{
	return off <= buf - size && !(off & (size - 1));
}

int moment_pyproc_from_layout(const struct pyf_layout *l, uint64_t code_type, struct moment_pyproc *pp)
{
	uint64_t fmax, cmax;
	memset(pp, 0, sizeof(*pp));
	pp->code_type = code_type;
	pp->version = l->version;
	if (l->ts_native_tid > 0xfff0 || (l->ts_cframe ? l->ts_cframe : l->ts_current) > 0xfff0 ||
	    l->cf_current > 0xfff0)
		return -EINVAL;
	pp->ts_native_tid = (uint16_t)l->ts_native_tid;
	pp->ts_frame = (uint16_t)(l->ts_cframe ? l->ts_cframe : l->ts_current);
	pp->cf_current = l->ts_cframe ? (uint16_t)l->cf_current : 0xffff;
	/* the frame's fields: within the frame buffer, aligned (the
	 * program masks offsets to stay in its buffers) */
	if (!off_fits(l->fr_code, 8, MOMENT_FRAME_BUF) || !off_fits(l->fr_previous, 8, MOMENT_FRAME_BUF) ||
	    !off_fits(l->fr_instr, 8, MOMENT_FRAME_BUF) || !off_fits(l->fr_owner, 1, MOMENT_FRAME_BUF) ||
	    (l->fr_is_entry >= 0 && !off_fits((uint64_t)l->fr_is_entry, 1, MOMENT_FRAME_BUF)))
		return -EINVAL;
	pp->fr_code = (uint16_t)l->fr_code;
	pp->fr_previous = (uint16_t)l->fr_previous;
	pp->fr_instr = (uint16_t)l->fr_instr;
	pp->fr_owner = (uint16_t)l->fr_owner;
	pp->fr_is_entry = l->fr_is_entry >= 0 ? (uint16_t)l->fr_is_entry : 0xffff;
	pp->owned_by_cstack = l->owned_by_cstack;
	fmax = MAX(MAX(l->fr_code, l->fr_previous), l->fr_instr) + 8;
	fmax = MAX(fmax, l->fr_owner + 1);
	if (l->fr_is_entry >= 0)
		fmax = MAX(fmax, (uint64_t)l->fr_is_entry + 1);
	pp->frame_read = (uint16_t)fmax;
	if (!off_fits(l->co_filename, 8, MOMENT_CODE_BUF) || !off_fits(l->co_name, 8, MOMENT_CODE_BUF) ||
	    !off_fits(l->co_qualname, 8, MOMENT_CODE_BUF) || !off_fits(l->co_linetable, 8, MOMENT_CODE_BUF) ||
	    !off_fits(l->co_firstlineno, 4, MOMENT_CODE_BUF) || !off_fits(l->ob_type, 8, MOMENT_CODE_BUF) ||
	    !l->co_code || l->co_code > 0xfff0)
		return -EINVAL;
	pp->co_filename = (uint16_t)l->co_filename;
	pp->co_name = (uint16_t)l->co_name;
	pp->co_qualname = (uint16_t)l->co_qualname;
	pp->co_linetable = (uint16_t)l->co_linetable;
	pp->co_firstlineno = (uint16_t)l->co_firstlineno;
	pp->co_code = (uint16_t)l->co_code;
	pp->ob_type = (uint16_t)l->ob_type;
	cmax = MAX(MAX(l->co_filename, l->co_name), MAX(l->co_qualname, l->co_linetable)) + 8;
	cmax = MAX(cmax, MAX(l->co_firstlineno + 4, l->ob_type + 8));
	pp->code_read = (uint16_t)cmax;
	return 0;
}

int moment_set_go(struct moment *m, uint32_t pid, const struct moment_goproc *gp)
{
	int fd = bpf_map__fd(m->skel->maps.goprocs);
	if (!gp)
		return bpf_map_delete_elem(fd, &pid) && errno != ENOENT ? -errno : 0;
	return bpf_map_update_elem(fd, &pid, gp, BPF_ANY) ? -errno : 0;
}

int moment_set_python(struct moment *m, uint32_t pid, const struct moment_pyproc *pp)
{
	int fd = bpf_map__fd(m->skel->maps.pyprocs);
	if (!pp)
		return bpf_map_delete_elem(fd, &pid) && errno != ENOENT ? -errno : 0;
	return bpf_map_update_elem(fd, &pid, pp, BPF_ANY) ? -errno : 0;
}

int moment_set_tstate(struct moment *m, uint32_t tid, uint64_t tstate)
{
	int fd = bpf_map__fd(m->skel->maps.tstates);
	if (!tstate)
		return bpf_map_delete_elem(fd, &tid) && errno != ENOENT ? -errno : 0;
	return bpf_map_update_elem(fd, &tid, &tstate, BPF_ANY) ? -errno : 0;
}

int moment_set_deep(struct moment *m, uint32_t pid, bool deep)
{
	int fd = bpf_map__fd(m->skel->maps.deep);
	uint32_t one = 1;
	if (!deep)
		return bpf_map_delete_elem(fd, &pid) && errno != ENOENT ? -errno : 0;
	return bpf_map_update_elem(fd, &pid, &one, BPF_ANY) ? -errno : 0;
}

int moment_set_slots(struct moment *m, uint32_t tid, const struct moment_range *r, size_t n, uint32_t gen,
		     uint64_t top)
{
	int fd = bpf_map__fd(m->skel->maps.slots);
	struct moment_slots *s;
	size_t i;
	int ret = 0;

	if (!n && !top)
		return bpf_map_delete_elem(fd, &tid) && errno != ENOENT ? -errno : 0;
	if (n > MOMENT_MAX_RANGES)
		return -EINVAL;
	for (i = 0; i < n; i++)
		if ((r[i].addr & 7) || r[i].len < 8 || r[i].len > MOMENT_MAX_RANGE || (r[i].len & 7))
			return -EINVAL;
	s = xcalloc(1, sizeof(*s));
	s->n = (uint32_t)n;
	s->gen = gen;
	s->top = top;
	if (n)
		memcpy(s->r, r, n * sizeof(*r));
	if (bpf_map_update_elem(fd, &tid, s, BPF_ANY))
		ret = -errno;
	free(s);
	return ret;
}

void moment_forget_thread(struct moment *m, uint32_t tid)
{
	struct mthread *t = thread_of(m, tid, false);
	moment_set_tstate(m, tid, 0);
	moment_set_slots(m, tid, NULL, 0, 0, 0);
	bpf_map_delete_elem(bpf_map__fd(m->skel->maps.tops), &tid);
	if (!t)
		return;
	while (t->head)
		drop_head(m, t);
	t->asked = t->retry = 0;
}

size_t moment_poll(struct moment *m)
{
	uint64_t before = m->st.read;
	free(m->taken);
	m->taken = NULL;
	ring_buffer__consume(m->rb);
	return (size_t)(m->st.read - before);
}

const struct moment_rec *moment_take(struct moment *m, uint32_t tid, uint64_t time, uint64_t ip,
				     uint64_t sp)
{
	struct mthread *t = thread_of(m, tid, false);
	free(m->taken);
	m->taken = NULL;
	if (!t)
		return NULL;
	while (t->head) {
		const struct moment_rec *h = (const void *)t->head->data;
		if (h->time > time + MOMENT_JOIN_NS)
			return NULL; /* a later sample's */
		if (h->time + MOMENT_JOIN_NS >= time && ((!ip && !sp) || (h->ip == ip && h->sp == sp))) {
			m->taken = t->head;
			t->head = t->head->next;
			if (!t->head)
				t->tail = NULL;
			t->n--;
			m->held -= h->size;
			m->st.taken++;
			return (const void *)m->taken->data;
		}
		if (h->time > time)
			return NULL; /* near, not this one's: the next sample's */
		drop_head(m, t); /* an earlier sample's, whose sample is gone */
	}
	return NULL;
}

void moment_compact(struct moment *m)
{
	size_t i, n = 0;
	hmap_release(&m->thread_index);
	hmap_init(&m->thread_index);
	for (i = 0; i < m->nthreads; i++) {
		if (!m->threads[i].head && !m->threads[i].asked)
			continue;
		m->threads[n] = m->threads[i];
		hmap_put(&m->thread_index, m->threads[n].tid, (uint32_t)n);
		n++;
	}
	m->nthreads = n;
	if (m->nthreads < m->threadcap / 4) {
		m->threadcap = MAX(m->nthreads, (size_t)16);
		m->threads = xrealloc(m->threads, m->threadcap * sizeof(*m->threads));
	}
}

void moment_expire(struct moment *m, uint64_t before)
{
	size_t i;
	for (i = 0; i < m->nthreads; i++)
		while (m->threads[i].head && m->threads[i].head->time < before)
			drop_head(m, &m->threads[i]);
}

const struct moment_pyframe *moment_rec_pyframes(const struct moment_rec *r)
{
	if (!r->npy || r->size < sizeof(*r) + (size_t)r->npy * sizeof(struct moment_pyframe))
		return NULL;
	return (const struct moment_pyframe *)(r + 1);
}

const struct moment_go *moment_rec_go(const struct moment_rec *r, const uint8_t **stack)
{
	size_t at = sizeof(*r) + (size_t)r->npy * sizeof(struct moment_pyframe);
	const struct moment_go *go;

	*stack = NULL;
	if (!(r->flags & MOMENT_F_GO) || r->size < at + sizeof(*go))
		return NULL;
	go = (const struct moment_go *)((const uint8_t *)r + at);
	if (go->stack_len > MOMENT_GO_STACK || (go->stack_len & 7) ||
	    r->size - at - sizeof(*go) < go->stack_len)
		return NULL;
	if (go->stack_len)
		*stack = (const uint8_t *)(go + 1);
	return go;
}

/* The span of r at *at (a range header and its bytes, at most max),
 * *at moved past it; NULL when it is out of the record. */
static const struct moment_range_hdr *rec_span(const struct moment_rec *r, const uint8_t **at, size_t max,
					       const uint8_t **data)
{
	const uint8_t *end = (const uint8_t *)r + r->size;
	const struct moment_range_hdr *h;

	if (*at > end || (size_t)(end - *at) < sizeof(*h))
		return NULL;
	h = (const struct moment_range_hdr *)*at;
	if (h->len > max || (size_t)(end - *at) - sizeof(*h) < h->len)
		return NULL;
	*data = *at + sizeof(*h);
	*at += sizeof(*h) + h->len;
	return h;
}

/* Where r's windows begin (past its Python frames or goroutine part);
 * NULL when that is out of the record. */
static const uint8_t *rec_windows(const struct moment_rec *r)
{
	const uint8_t *at = (const uint8_t *)r + sizeof(*r) + (size_t)r->npy * sizeof(struct moment_pyframe);
	const uint8_t *gs;

	if (r->flags & MOMENT_F_GO) {
		const struct moment_go *go = moment_rec_go(r, &gs);
		if (!go)
			return NULL;
		at += sizeof(*go) + go->stack_len;
	}
	return at;
}

const struct moment_range_hdr *moment_rec_window(const struct moment_rec *r, const uint8_t **data)
{
	const uint8_t *at = rec_windows(r);
	*data = NULL;
	if (!at || !(r->flags & MOMENT_F_WINDOW))
		return NULL;
	return rec_span(r, &at, MOMENT_WINDOW_MAX, data);
}

const struct moment_range_hdr *moment_rec_topwin(const struct moment_rec *r, const uint8_t **data)
{
	const uint8_t *at = rec_windows(r), *d;
	*data = NULL;
	if (!at || !(r->flags & MOMENT_F_TOPWIN))
		return NULL;
	if ((r->flags & MOMENT_F_WINDOW) && !rec_span(r, &at, MOMENT_WINDOW_MAX, &d))
		return NULL;
	return rec_span(r, &at, MOMENT_TOPWIN_MAX, data);
}

const struct moment_range_hdr *moment_rec_next_range(const struct moment_rec *r, struct moment_range_it *it,
						     const uint8_t **data)
{
	const uint8_t *d;
	const struct moment_range_hdr *h;

	*data = NULL;
	if (it->k >= r->nranges)
		return NULL;
	if (!it->at) {
		/* past the windows */
		if (!(it->at = rec_windows(r)) ||
		    ((r->flags & MOMENT_F_WINDOW) && !rec_span(r, &it->at, MOMENT_WINDOW_MAX, &d)) ||
		    ((r->flags & MOMENT_F_TOPWIN) && !rec_span(r, &it->at, MOMENT_TOPWIN_MAX, &d))) {
			it->k = r->nranges;
			return NULL;
		}
	}
	if (!(h = rec_span(r, &it->at, MOMENT_MAX_RANGE, data))) {
		it->k = r->nranges;
		return NULL;
	}
	it->k++;
	return h;
}

void moment_get_stats(const struct moment *m, struct moment_stats *st)
{
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);
	*st = m->st;
	st->dropped = m->skel->bss->dropped;
	memset(&info, 0, sizeof(info));
	if (!bpf_obj_get_info_by_fd(bpf_program__fd(m->skel->progs.moment_sample), &info, &len)) {
		st->run_ns = info.run_time_ns;
		st->run_cnt = info.run_cnt;
	}
}

int moment_count_time(struct moment *m)
{
	if (m->stats_fd >= 0)
		return 0;
	m->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	return m->stats_fd < 0 ? -errno : 0;
}
