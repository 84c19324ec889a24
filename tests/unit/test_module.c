/* test_module.c - the module cache (src/module/module.c).
 *
 * Real files: this test program, copies and hard links of it, and a
 * debug file made of a copy with objcopy. One binary asked for by
 * build-id under two paths is one module; without a build-id, a hard
 * link is the same file and a copy is not; a build-id given that the
 * file does not have makes module_open() refuse the file; a part is
 * built once for all its holders (also when threads ask at once), freed
 * with its last holder and built again after; a debug file is looked
 * for once; every module is gone when its last reference is.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "test.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/elffile.h"
#include "module/module.h"
#include "symbol/fpcheck.h"
#include "unwind/table.h"

static char dir[] = "/tmp/stax-test-module-XXXXXX";
static atomic_int builds, frees;

static void *build_counted(struct module *m, void *arg)
{
	atomic_fetch_add(&builds, 1);
	if (arg)
		usleep(20000); /* long enough for the other threads to ask meanwhile */
	return malloc(16);
}

static void free_counted(void *p)
{
	atomic_fetch_add(&frees, 1);
	free(p);
}

static bool run(const char *cmd)
{
	return system(cmd) == 0;
}

struct thread_arg {
	const char *path;
	void *part;
};

static pthread_barrier_t all_have_it;

static void *ask(void *p)
{
	struct thread_arg *a = p;
	struct module *m = module_get(a->path, NULL, 0);
	a->part = module_part(m, MODULE_FP, build_counted, free_counted, (void *)1);
	pthread_barrier_wait(&all_have_it); /* each holds it until all have it */
	module_part_put(m, MODULE_FP);
	module_put(m);
	return NULL;
}

int main(int argc, char **argv)
{
	char self[512], copy[600], link_[600], cmd[4096], dbg[600];
	uint8_t bid[64];
	const uint8_t *got;
	size_t n;
	int fd;

	(void)argc;
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0 || !mkdtemp(dir)) {
		CHECK(0, "setup: /proc/self/exe and a temporary directory");
		TEST_DONE();
	}
	self[len] = '\0';
	snprintf(copy, sizeof(copy), "%s/copy", dir);
	snprintf(link_, sizeof(link_), "%s/link", dir);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s' && ln '%s' '%s'", self, copy, copy, link_);
	CHECK(run(cmd), "setup: a copy and a hard link of this program");

	/* the file's build-id, read as everyone reads it */
	Elf *e = elf_file_open(self, &fd);
	size_t bidn = e ? elf_file_build_id(e, bid, sizeof(bid)) : 0;
	elf_file_close(e, fd);
	if (!bidn) {
		SKIP("build-id checks", "this test program has no build-id (linked without --build-id)");
	} else {
		struct module *a = module_get(self, bid, bidn), *b = module_get(copy, bid, bidn);
		CHECK(a == b, "one build-id under two paths is one module");
		CHECK(module_count() == 1, "and the cache holds one module");
		CHECK(!strcmp(module_path(a), self), "named by the path it was first asked for by");
		n = module_build_id(a, &got);
		CHECK(n == bidn && !memcmp(got, bid, n), "its build-id is the one given");
		Elf *o = module_open(b, &fd);
		CHECK(o && fd >= 0, "module_open opens the binary of that build");
		module_close(o, fd);
		module_put(b);
		module_put(a);
		CHECK(module_count() == 0, "gone with its last reference");

		uint8_t other[20];
		memset(other, 0x5a, sizeof(other));
		struct module *w = module_get(self, other, sizeof(other));
		o = module_open(w, &fd);
		CHECK(!o && fd == -1, "a file of another build-id than the one given is refused");
		module_close(o, fd);
		module_put(w);

		struct module *p = module_get(copy, NULL, 0);
		n = module_build_id(p, &got);
		CHECK(n == bidn && !memcmp(got, bid, n), "without a build-id given, the file's is read");
		module_put(p);
	}

	/* without a build-id: the file's identity */
	struct module *c = module_get(copy, NULL, 0), *l = module_get(link_, NULL, 0),
		      *s = module_get(self, NULL, 0);
	CHECK(c == l, "without a build-id: a hard link is the same module");
	CHECK(c != s, "and a copy (another inode) is another");
	module_put(c);
	module_put(l);
	module_put(s);
	struct module *gone = module_get("/nonexistent/stax-module", NULL, 0);
	CHECK(gone && module_is_file(gone), "a missing file is still a module (by path)");
	Elf *ge = module_open(gone, &fd);
	CHECK(!ge, "that cannot be opened");
	module_put(gone);

	/* parts */
	struct module *m = module_get(self, NULL, 0);
	void *p1 = module_part(m, MODULE_FP, build_counted, free_counted, NULL);
	void *p2 = module_part(m, MODULE_FP, build_counted, free_counted, NULL);
	CHECK(p1 && p1 == p2 && builds == 1, "a part is built once for two holders");
	module_part_put(m, MODULE_FP);
	CHECK(frees == 0, "and kept while one holds it");
	module_part_put(m, MODULE_FP);
	CHECK(frees == 1, "freed when its last holder lets go");
	module_part(m, MODULE_FP, build_counted, free_counted, NULL);
	CHECK(builds == 2, "built again when asked for after that");
	module_part_put(m, MODULE_FP);

	/* threads asking at once: one build */
	builds = frees = 0;
	pthread_t th[4];
	struct thread_arg ta[4];
	pthread_barrier_init(&all_have_it, NULL, 4);
	for (int i = 0; i < 4; i++) {
		ta[i] = (struct thread_arg){ self, NULL };
		pthread_create(&th[i], NULL, ask, &ta[i]);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&all_have_it);
	CHECK(builds == 1 && ta[0].part && ta[0].part == ta[1].part && ta[1].part == ta[2].part &&
	      ta[2].part == ta[3].part, "four threads asking for a part at once: built once, one part");
	CHECK(frees == 1, "freed once, by the last of them");

	/* the frame-pointer verdict and the unwind table through the module */
	struct fp_report r1, r2;
	int f1 = fp_check_module(m, &r1), f2 = fp_check_file(self, &r2);
	CHECK(f1 == 0 && f2 == 0 && r1.functions == r2.functions && r1.functions > 0 &&
	      r1.has_eh_frame, "doctor's verdict is the same through the module and by path");
	struct utable *t = utable_build(m);
	CHECK(t && t->nrows > 0 && !t->err, "the unwind table compiles from the module");
	utable_free(t);
	module_put(m);

	/* debug files: made with objcopy, found once by .gnu_debuglink */
	snprintf(dbg, sizeof(dbg), "%s/copy.debug", dir);
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && objcopy --only-keep-debug copy copy.debug && objcopy --strip-debug"
		 " --remove-section=.note.gnu.build-id --add-gnu-debuglink=copy.debug copy stripped"
		 " 2>/dev/null", dir);
	if (!run(cmd)) {
		SKIP("debug file checks", "objcopy could not make a debug file");
	} else {
		char stripped[600];
		const char *found = NULL;
		snprintf(stripped, sizeof(stripped), "%s/stripped", dir);
		struct module *d = module_get(stripped, NULL, 0);
		Elf *de = module_open_debug(d, MODULE_DEBUG_LINK, &fd, &found);
		CHECK(de && found && !strcmp(found, dbg),
		      "the debug file named by .gnu_debuglink is found (its CRC matches)");
		module_close(de, fd);
		de = module_open_debug(d, MODULE_DEBUG_LINK, &fd, &found);
		CHECK(de && found && !strcmp(found, dbg), "asked again: the file found the first time");
		module_close(de, fd);
		unlink(dbg);
		de = module_open_debug(d, MODULE_DEBUG_LINK, &fd, &found);
		CHECK(!de && fd == -1, "a debug file gone since is not opened");
		module_close(de, fd);
		module_put(d);
		snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", self, dbg); /* same name, another file */
		run(cmd);
		d = module_get(stripped, NULL, 0);
		de = module_open_debug(d, MODULE_DEBUG_LINK, &fd, &found);
		CHECK(!de, "a file of that name whose CRC differs is refused");
		module_close(de, fd);
		module_put(d);
	}
	CHECK(module_count() == 0, "no module outlives its last reference");

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	run(cmd);
	(void)argv;
	TEST_DONE();
}
