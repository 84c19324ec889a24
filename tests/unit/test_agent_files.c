/* test_agent_files.c - stax agent's files in their directory
 * (agent/files.h): the names it gives and recognizes, the file it makes
 * (mode 0600, never over something there), and retention: by age and by
 * total size, oldest first, never the file being written, and never
 * anything the agent could not have written (another name, a symbolic
 * link, a file that is no recording, one of another user, one a writer
 * still holds).
 */
#include "agent/files.h"
#include "lib/err.h"
#include "test.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define NS 1000000000ull

static char dir[512];

static uint64_t wall(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * NS + (uint64_t)ts.tv_nsec;
}

/* A file name in dir with content (a recording's magic, or text) of size
 * bytes, last written age seconds ago. */
static void make(const char *name, bool recording, size_t size, unsigned age)
{
	char path[768];
	struct timespec t[2];
	char *b = calloc(1, size + 8);
	FILE *f;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (recording)
		memcpy(b, "STAXREC", 8);
	else
		memcpy(b, "notes...", 8);
	fwrite(b, 1, size < 8 ? 8 : size, f);
	fclose(f);
	free(b);
	clock_gettime(CLOCK_REALTIME, &t[0]);
	t[0].tv_sec -= age;
	t[1] = t[0];
	utimensat(AT_FDCWD, path, t, 0);
}

static bool there(const char *name)
{
	char path[768];
	struct stat st;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return !lstat(path, &st);
}

int main(void)
{
	struct agent_dir d;
	struct agent_retain st;
	struct err e;
	char name[AGENT_NAME_LEN], path[768];
	uint64_t w0;
	int64_t secs;
	int fd, held;
	struct stat sb;

	/* names: the UTC second of the start, and nothing else */
	agent_file_name(1765029600ull * NS + 5, name, sizeof(name));
	CHECK(!strcmp(name, "stax-20251206-140000.data"), "name: stax-YYYYMMDD-HHMMSS.data in UTC");
	CHECK(agent_is_file_name(name, &secs) && secs == 1765029600, "name: read back, its time");
	CHECK(!agent_is_file_name("stax-20251206-140000.data.old", NULL) &&
	      !agent_is_file_name("stax-2025126-140000.data", NULL) &&
	      !agent_is_file_name("stax-20251206-14000a.data", NULL) &&
	      !agent_is_file_name("xstax-20251206-140000.data", NULL) &&
	      !agent_is_file_name("stax-20251206-140000.dat", NULL), "name: anything else is not one");

	snprintf(dir, sizeof(dir), "/tmp/stax-unit-agent.XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/d", dir);
	CHECK(agent_dir_open(&d, path, &e) == 0 && !stat(path, &sb) && (sb.st_mode & 0777) == 0700,
	      "dir: made 0700 when missing");
	agent_dir_close(&d);
	snprintf(path, sizeof(path), "%s/link", dir);
	if (symlink(dir, path))
		perror("symlink");
	CHECK(agent_dir_open(&d, path, &e) < 0 && strstr(e.msg, "symbolic link"), "dir: a symbolic link is refused");
	snprintf(path, sizeof(path), "%s/d", dir);
	chmod(path, 0777);
	CHECK(agent_dir_open(&d, path, &e) < 0, "dir: one others may write is refused");
	chmod(path, 0700);
	if (agent_dir_open(&d, path, &e)) {
		printf("not ok - dir: open: %s\n", e.msg);
		return 1;
	}
	/* the files go in d from here */
	strcat(dir, "/d");

	/* the file it makes */
	w0 = wall();
	fd = agent_file_create(&d, w0, &e);
	CHECK(fd >= 0 && !fstat(fd, &sb) && (sb.st_mode & 0777) == 0600 && S_ISREG(sb.st_mode),
	      "create: a new regular file, 0600");
	CHECK(agent_is_file_name(d.current, NULL) && there(d.current), "create: named as a recording of now");
	CHECK(agent_file_create(&d, w0, &e) == -EAGAIN, "create: the same second again: -EAGAIN");
	snprintf(name, sizeof(name), "%s", d.current);
	d.current[0] = 0;
	CHECK(agent_file_create(&d, w0, &e) == -EEXIST && there(name),
	      "create: a name taken is left as it is (-EEXIST)");
	snprintf(d.current, sizeof(d.current), "%s", name);
	if (write(fd, "STAXREC", 8) != 8)
		perror("write");
	close(fd);

	/* retention by age: the agent's old files go, nothing else */
	make("stax-20000101-000000.data", true, 100, 3600);   /* old, ours: goes */
	make("stax-20000101-000001.data", false, 100, 3600);  /* old, no recording: stays */
	make("stax-20000101-000002.data", true, 100, 10);     /* young: stays */
	make("notes.txt", true, 100, 3600);                   /* another name: stays */
	make("target.data", true, 100, 3600);
	snprintf(path, sizeof(path), "%s/stax-20000101-000003.data", dir);
	if (symlink("target.data", path))                     /* a link: stays */
		perror("symlink");
	make("stax-20000101-000004.data", true, 0, 3600);     /* empty, ours: goes */
	make("stax-20000101-000005.data", true, 100, 3600);   /* held by a writer: stays */
	snprintf(path, sizeof(path), "%s/stax-20000101-000005.data", dir);
	held = open(path, O_RDONLY);
	flock(held, LOCK_EX);
	if (geteuid() == 0) {                                  /* another user's: stays */
		make("stax-20000101-000006.data", true, 100, 3600);
		snprintf(path, sizeof(path), "%s/stax-20000101-000006.data", dir);
		if (chown(path, 65534, 65534))
			perror("chown");
	}
	d.keep_ns = 60 * NS;
	agent_retain(&d, wall(), &st);
	CHECK(!there("stax-20000101-000000.data") && !there("stax-20000101-000004.data"),
	      "keep: the agent's files older than --keep are removed (a recording, an empty one)");
	CHECK(there("stax-20000101-000001.data") && there("stax-20000101-000002.data") && there("notes.txt") &&
	      there("stax-20000101-000003.data") && there("target.data") && there("stax-20000101-000005.data") &&
	      there(d.current), "keep: not a recording, young, another name, a link (and its target),"
	      " a file a writer holds, the current one: all stay");
	if (geteuid() == 0)
		CHECK(there("stax-20000101-000006.data"), "keep: another user's file stays");
	else
		SKIP("keep: another user's file stays", "needs root to give a file to another user");
	CHECK(st.removed == 2, "keep: two removed, counted");
	flock(held, LOCK_UN);
	close(held);

	/* retention by size: oldest first while all of them pass the limit;
	 * never the current one */
	make("stax-20000102-000000.data", true, 4000, 30);
	make("stax-20000102-000001.data", true, 4000, 20);
	make("stax-20000102-000002.data", true, 4000, 10);
	d.keep_ns = 0;
	/* ours now: 000002 (100), 000005 (100), 0102-* (3 x 4000), current (8) */
	d.max_bytes = 8300;
	agent_retain(&d, wall(), &st);
	CHECK(!there("stax-20000101-000002.data") && !there("stax-20000101-000005.data") &&
	      !there("stax-20000102-000000.data") && there("stax-20000102-000001.data") &&
	      there("stax-20000102-000002.data") && there(d.current),
	      "max-size: the oldest removed until the rest fit (8300 bytes: two of 4000 and the current one)");
	CHECK(st.files == 3 && st.bytes == 8008, "max-size: what is kept, counted");
	d.max_bytes = 1;
	agent_retain(&d, wall(), &st);
	CHECK(there(d.current) && !there("stax-20000102-000002.data"), "max-size: never the file being written");
	agent_dir_close(&d);
	/* the test's own directory (mkdtemp above) */
	*strrchr(dir, '/') = 0;
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (system(path))
		printf("# could not remove %s\n", dir);
	TEST_DONE();
}
