/* test_store_full.c - store/writer.h when the file cannot grow.
 *
 * A full disk is simulated with RLIMIT_FSIZE (SIGXFSZ ignored, as the
 * recorder does): writes past the limit fail with EFBIG. The error must
 * come back from the writer, store_writer_rewind() must cut the file back
 * to the end of its last whole chunk so that it reads, records written
 * after it must read too, and a close that cannot write its END chunk
 * must still leave whole chunks only. */
#include "test.h"
#include "profile/profile.h"
#include "store/writer.h"
#include "lib/util.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

/* A META record of n hex digits that zstd cannot shrink much. */
static void put_noise(struct store_writer *w, int i, size_t n)
{
	static uint64_t x = 0x9e3779b97f4a7c15ull;
	char key[32], *v = xmalloc(n + 1);
	size_t k;
	for (k = 0; k < n; k++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		v[k] = "0123456789abcdef"[x & 15];
	}
	v[n] = '\0';
	snprintf(key, sizeof(key), "noise%d", i);
	store_put_meta(w, key, v);
	free(v);
}

static off_t size_of(const char *path)
{
	struct stat st;
	return stat(path, &st) ? -1 : st.st_size;
}

/* Fill path under a limit of limit bytes until a write fails; the chunks
 * written whole in *whole. Returns the error. */
static int fill(struct store_writer *w, const char *path, rlim_t limit, int *whole)
{
	struct rlimit rl;
	int i, e = 0;
	getrlimit(RLIMIT_FSIZE, &rl);
	rl.rlim_cur = limit;
	setrlimit(RLIMIT_FSIZE, &rl);
	store_writer_open(w, path);
	for (i = 0; i < 200 && !e; i++) {
		put_noise(w, i, 3000);
		e = store_flush(w, CHUNK_DATA);
		if (!e)
			e = store_sync(w);
	}
	*whole = (int)w->seq_written;
	return e;
}

int main(void)
{
	char path[] = "/tmp/stax-test-store-full-XXXXXX";
	int fd = mkstemp(path), whole, e;
	struct store_writer w;
	struct profile p;
	struct rlimit unlimited;
	bool all;

	signal(SIGXFSZ, SIG_IGN);
	close(fd);
	getrlimit(RLIMIT_FSIZE, &unlimited);

	e = fill(&w, path, 40000, &whole);
	CHECK(e == -EFBIG, "a write past the limit fails with EFBIG, returned by the writer");
	CHECK(size_of(path) > (off_t)w.bytes, "the failed chunk left part of itself in the file");
	CHECK(store_writer_rewind(&w) == 0 && size_of(path) == (off_t)w.bytes && w.err == 0,
	      "store_writer_rewind: the file cut back to its last whole chunk, the error cleared");
	store_put_meta(&w, "after", "rewind");
	CHECK(store_writer_close(&w) == 0, "a small chunk and END fit after the rewind");
	setrlimit(RLIMIT_FSIZE, &unlimited);
	CHECK(profile_load_err(&p, path, NULL) == 0 && !p.partial && profile_meta(&p, "after") &&
	      !strcmp(profile_meta(&p, "after"), "rewind"), "the file reads, finished, with the record put after");
	{
		char key[32];
		int i;
		all = true;
		for (i = 0; i < whole; i++) { /* chunk i holds noise<i> */
			snprintf(key, sizeof(key), "noise%d", i);
			all = all && profile_meta(&p, key);
		}
		snprintf(key, sizeof(key), "noise%d", whole);
		CHECK(all && !profile_meta(&p, key) && whole > 3,
		      "every whole chunk's records read, the failed one's are gone");
	}
	profile_release(&p);

	/* a close whose END does not fit: only whole chunks stay */
	e = fill(&w, path, 40000, &whole);
	store_writer_rewind(&w);
	put_noise(&w, 999, 40000);
	CHECK(store_writer_close(&w) != 0, "a close that cannot write its last chunks fails");
	setrlimit(RLIMIT_FSIZE, &unlimited);
	CHECK(profile_load_err(&p, path, NULL) == 0 && p.partial && !profile_meta(&p, "noise999") &&
	      profile_meta(&p, "noise0"), "and the file still reads up to its last whole chunk (partial)");
	profile_release(&p);
	unlink(path);
	TEST_DONE();
}
