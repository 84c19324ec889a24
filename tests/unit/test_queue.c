/* test_queue.c - the recorder's drain thread and bounded queue (queue.h)
 * over a real perf_event ring: samples of this process with 8 KiB stack
 * copies (taken 8 KiB or more below the stack's top, so each is full), a
 * queue bound small enough that nobody taking from it makes it pass its
 * high-water mark and its bound. Every record read must still
 * parse; the samples past the high-water mark carry QUEUE_MISC_TRIMMED
 * and a stack copy of QUEUE_TRIM_KEEP bytes or none; past the bound they
 * are dropped and counted; the level matches the bytes handed over.
 * And with the main thread passing itself every 2 ms (rqueue_pass(), as
 * the recorder does while it reads the processes) beside the drain
 * thread: every sample once, in order, most of them read by the main
 * thread's passes. */
#include "test.h"
#include "record/events.h"
#include "record/queue.h"
#include "record/ring.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define STACK 8192

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static volatile uint64_t sink;

static void spin(unsigned ms)
{
	uint64_t end = now_ms() + ms, i = 0;
	while (now_ms() < end)
		sink += ++i;
}

/* spin with STACK bytes of this frame between it and the stack's top:
 * the kernel fills every sample's whole copy (the drain thread keeps
 * only the bytes it filled) */
static __attribute__((noinline)) void spin_deep(unsigned ms)
{
	volatile uint8_t pad[STACK + 512];
	/* every page touched: the kernel copies no page it would fault in */
	for (size_t i = 0; i < sizeof(pad); i += 64)
		pad[i] = 1;
	spin(ms);
	sink += pad[0];
}

/* A sample record in b: tid, a stack copy of 64 bytes (byte i is i) of
 * which the kernel filled dyn, then a weight of 0x1234. */
static void crafted_sample(struct buf *b, uint64_t dyn)
{
	struct perf_event_header h = { PERF_RECORD_SAMPLE, 0, 0 };
	uint32_t pidtid[2] = { 7, 8 };
	uint64_t size = 64, weight = 0x1234;
	uint8_t stack[64];
	for (int i = 0; i < 64; i++)
		stack[i] = (uint8_t)i;
	buf_reset(b);
	buf_add(b, &h, sizeof(h));
	buf_add(b, pidtid, 8);
	buf_add(b, &size, 8);
	buf_add(b, stack, 64);
	buf_add(b, &dyn, 8);
	buf_add(b, &weight, 8);
	((struct perf_event_header *)b->data)->size = (uint16_t)b->len;
}

/* A cpu-clock event of this thread at 10 kHz with stack copies of stack
 * bytes (disabled), and the format of its records; -1 when it cannot be
 * opened. */
static int open_event(size_t stack, struct perf_format *f)
{
	struct perf_event_attr attr;
	int fd;

	event_attr(&attr, event_find("cpu-clock"), 10000, false, false, 0xff01ffull, stack);
	attr.disabled = 1;
	attr.inherit = 0; /* a ring of one task on any cpu: no inherit */
	fd = event_open(&attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	memset(f, 0, sizeof(*f));
	f->sample_type = attr.sample_type;
	f->read_format = attr.read_format;
	f->regs_user_mask = attr.sample_regs_user;
	f->sample_id_all = attr.sample_id_all;
	return fd;
}

/* The main thread passing (rqueue_pass()) beside the drain thread: 512
 * bytes of stack copy a sample, so that a quarter of the 1 MiB ring
 * (what wakes the drain thread) holds hundreds of samples. */
static void test_main_passes(void)
{
	struct perf_format f;
	struct ring ring;
	struct rqueue q;
	struct buf out = BUF_INIT;
	size_t off, samples = 0, takes = 0, filled = 0, bad = 0, disorder = 0;
	uint64_t last = 0, end;
	int fd = open_event(512, &f);

	if (fd < 0) {
		SKIP("queue: the main thread passing", strerror(errno));
		return;
	}
	if (ring_map(&ring, fd, 256) || rqueue_start(&q, &ring, 1, &f, 64 << 20)) {
		CHECK(0, "queue: the main thread passing: a ring and a queue");
		close(fd);
		return;
	}
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	end = now_ms() + 600;
	while (now_ms() < end) {
		size_t before = out.len;
		spin(2);
		rqueue_pass(&q);
		rqueue_take(&q, &out);
		takes++;
		filled += out.len > before;
	}
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	rqueue_stop(&q);
	rqueue_take(&q, &out);
	for (off = 0; off + sizeof(struct perf_event_header) <= out.len;) {
		struct perf_event_header *h = (void *)(out.data + off);
		struct perf_sample s;
		if (h->size < sizeof(*h) || off + h->size > out.len) {
			bad++;
			break;
		}
		off += h->size;
		if (h->type != PERF_RECORD_SAMPLE)
			continue;
		samples++;
		if (perf_sample_parse(&f, h, &s)) {
			bad++;
			continue;
		}
		disorder += s.time <= last;
		last = s.time;
	}
	printf("# main passing: %zu samples, %zu of %zu takes found records\n", samples, filled, takes);
	CHECK(bad == 0 && off == out.len && samples > 500 && disorder == 0,
	      "queue: the main thread passing beside the drain thread: every sample once, in order");
	/* the drain thread alone wakes every 50 ms or at a quarter of the
	 * ring (hundreds of samples): at most about 30 times in 600 ms */
	CHECK(filled > 60, "queue: the main thread's passes read the rings themselves");
	rqueue_release(&q);
	ring_unmap(&ring);
	close(fd);
	buf_release(&out);
}

int main(void)
{
	struct perf_format f;
	struct ring ring;
	struct rqueue q;
	struct buf out = BUF_INIT;
	size_t off, samples = 0, whole = 0, cut = 0, none = 0, bad = 0, other = 0;
	uint64_t t;
	int fd = open_event(STACK, &f), e;

	if (fd < 0) {
		SKIP("queue: a real ring", strerror(errno));
		TEST_DONE();
	}
	CHECK(ring_map(&ring, fd, 256) == 0, "queue: a 1 MiB ring maps");
	/* a bound of 160 KiB: about 20 whole samples */
	e = rqueue_start(&q, &ring, 1, &f, 160 << 10);
	CHECK(e == 0, "queue: the drain thread starts");
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	spin_deep(600); /* about 6,000 samples at 10 kHz of CPU time */
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	rqueue_stop(&q);
	t = rqueue_take(&q, &out);
	CHECK(t == UINT64_MAX, "queue: stopped, every record is handed over");
	for (off = 0; off + sizeof(struct perf_event_header) <= out.len;) {
		struct perf_event_header *h = (void *)(out.data + off);
		struct perf_sample s;
		if (h->size < sizeof(*h) || off + h->size > out.len) {
			bad++;
			break;
		}
		off += h->size;
		if (h->type != PERF_RECORD_SAMPLE) {
			other++;
			continue;
		}
		samples++;
		if (perf_sample_parse(&f, h, &s)) {
			bad++;
			continue;
		}
		if (!(h->misc & QUEUE_MISC_TRIMMED))
			whole += s.stack_size == STACK;
		else if (s.stack_size == QUEUE_TRIM_KEEP && s.stack_dyn_size <= QUEUE_TRIM_KEEP)
			cut++;
		else if (s.stack_size == 0 && s.callchain_nr > 0)
			none++;
		else
			bad++;
	}
	printf("# %zu samples: %zu whole, %zu cut, %zu without a stack copy; %zu other records;"
	       " queue: trimmed %llu, dropped %llu, peak %zu\n", samples, whole, cut, none, other,
	       (unsigned long long)q.trimmed, (unsigned long long)q.dropped, q.peak);
	CHECK(off == out.len && bad == 0, "queue: every record parses, and a marked sample has the top"
	      " of its stack copy or none, with its call chain");
	CHECK(whole > 0 && whole + cut + none == samples, "queue: below the high-water mark samples are whole");
	CHECK(cut > 0, "queue: past the high-water mark samples keep the top of the stack copy");
	CHECK(cut + none == q.trimmed, "queue: the trimmed samples are counted");
	CHECK(q.dropped > 0, "queue: at the bound samples are dropped and counted");
	CHECK(q.level == out.len && out.len <= q.cap, "queue: its level is the bytes handed over, within the bound");
	rqueue_done(&q, out.len);
	CHECK(q.level == 0, "queue: handled, the level is 0");

	/* trimming a record in place: what follows the stack copy moves with it */
	{
		struct buf b = BUF_INIT;
		struct perf_format g = { .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_STACK_USER |
					 PERF_SAMPLE_WEIGHT };
		struct perf_sample s;
		uint8_t stack[64];
		for (int i = 0; i < 64; i++)
			stack[i] = (uint8_t)i;
		crafted_sample(&b, 40);
		CHECK(rqueue_trim_sample(&g, (void *)b.data, 16), "queue: a record is trimmed to 16 bytes");
		struct perf_event_header *th = (void *)b.data;
		uint64_t w = 0;
		CHECK(th->size == 8 + 8 + 8 + 16 + 8 + 8 && (th->misc & QUEUE_MISC_TRIMMED) &&
		      !perf_sample_parse(&g, th, &s) && s.pid == 7 && s.stack_size == 16 &&
		      s.stack_dyn_size == 16 && s.stack[15] == 15,
		      "queue: the trimmed record parses with the top 16 bytes");
		memcpy(&w, b.data + th->size - 8, 8);
		CHECK(w == 0x1234, "queue: the field after the stack copy follows it");
		CHECK(!rqueue_trim_sample(&g, th, 64), "queue: a copy no longer than asked is left as it is");

		/* copying out of a ring: the copy cut to dyn_size and 8 more,
		 * nothing marked; a full copy copied whole */
		uint8_t out2[256];
		size_t n;
		crafted_sample(&b, 40);
		n = rqueue_copy_record((void *)b.data, out2, &g);
		th = (void *)out2;
		w = 0;
		memcpy(&w, out2 + n - 8, 8);
		CHECK(n == 8 + 8 + 8 + 48 + 8 + 8 && th->size == n && !(th->misc & QUEUE_MISC_TRIMMED) &&
		      !perf_sample_parse(&g, th, &s) && s.stack_size == 48 && s.stack_dyn_size == 40 &&
		      !memcmp(s.stack, stack, 40) && w == 0x1234,
		      "queue: a copy of 64 bytes the kernel filled 40 of is copied out as 48, dyn_size 40, unmarked");
		n = rqueue_copy_record((void *)b.data, b.data, &g);
		CHECK(n == th->size && !memcmp(b.data, out2, n), "queue: the same copied in place");
		crafted_sample(&b, 64);
		n = rqueue_copy_record((void *)b.data, out2, &g);
		CHECK(n == b.len && !memcmp(out2, b.data, n), "queue: a full copy is copied whole");
		crafted_sample(&b, 60);
		n = rqueue_copy_record((void *)b.data, out2, &g);
		CHECK(n == b.len, "queue: a copy filled to within 8 bytes of its end is copied whole (dyn_size stays below the size)");
		buf_release(&b);
	}
	rqueue_release(&q);
	ring_unmap(&ring);
	close(fd);
	buf_release(&out);
	test_main_passes();
	TEST_DONE();
}
