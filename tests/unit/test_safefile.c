/* test_safefile.c - lib/safefile.h: files made without harming what is
 * there, temporary files renamed into place or removed, directories of
 * one's own. Works in a temporary directory; the checks that need another
 * user (chown to nobody) run only as root. */
#include "test.h"
#include "lib/safefile.h"
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[64];

static char *at(const char *name)
{
	static char buf[4][256];
	static int i;
	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", dir, name);
	return buf[i];
}

static void put(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		abort();
	close(fd);
}

/* The file's contents ("" when it cannot be read). */
static const char *get(const char *path)
{
	static char buf[256];
	int fd = open(path, O_RDONLY | O_NOFOLLOW);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static bool is(const char *path, mode_t type)
{
	struct stat st;
	return !lstat(path, &st) && (st.st_mode & S_IFMT) == type;
}

/* Files whose names hold ".stax-" (temporary ones) in the directory. */
static int temps(void)
{
	char cmd[300];
	FILE *p;
	int n = -1;
	snprintf(cmd, sizeof(cmd), "ls -A '%s' | grep -c '\\.stax-'", dir);
	if ((p = popen(cmd, "r"))) {
		if (fscanf(p, "%d", &n) != 1)
			n = -1;
		pclose(p);
	}
	return n;
}

static void test_create(void)
{
	struct safe_created c;
	struct err why = { 0 };
	int fd;

	fd = safe_create(&c, at("rec"), 0644, &why);
	CHECK(fd >= 0 && is(at("rec"), S_IFREG) && !c.old, "safe_create: a new file");
	if (fd >= 0) {
		CHECK(write(fd, "one", 3) == 3, "safe_create: writable");
		close(fd);
	}
	safe_created_release(&c);
	fd = safe_create(&c, at("rec"), 0644, &why);
	CHECK(fd >= 0 && !strcmp(get(at("rec.old")), "one") && !strcmp(get(at("rec")), ""),
	      "safe_create: the previous regular file becomes .old");
	if (fd >= 0)
		close(fd);
	safe_create_undo(&c);
	CHECK(!strcmp(get(at("rec")), "one") && !is(at("rec.old"), S_IFREG),
	      "safe_create_undo: the new file removed, the previous one back");

	mkdir(at("d"), 0755);
	mkfifo(at("f"), 0644);
	symlink(at("rec"), at("l"));
	CHECK(safe_create(&c, at("d"), 0644, &why) == -EEXIST && !c.bad_old &&
	      is(at("d"), S_IFDIR) && strstr(why.msg, "a directory"), "safe_create: a directory is refused");
	CHECK(safe_create(&c, at("f"), 0644, &why) == -EEXIST && is(at("f"), S_IFIFO) &&
	      strstr(why.msg, "a FIFO"), "safe_create: a FIFO is refused");
	CHECK(safe_create(&c, at("l"), 0644, &why) == -EEXIST && is(at("l"), S_IFLNK) &&
	      !strcmp(get(at("rec")), "one"), "safe_create: a symlink is refused, its target untouched");
	mkdir(at("rec.old"), 0755);
	CHECK(safe_create(&c, at("rec"), 0644, &why) == -EEXIST && c.bad_old &&
	      !strcmp(get(at("rec")), "one") && is(at("rec.old"), S_IFDIR),
	      "safe_create: a directory at .old is refused, both left");
	rmdir(at("rec.old"));
}

static void test_replace(void)
{
	struct safe_replace r;
	struct err why = { 0 };
	struct stat st;

	put(at("out"), "old");
	chmod(at("out"), 0640);
	CHECK(safe_replace_begin(&r, AT_FDCWD, at("out"), 0, 0, &why) == 0 && r.fd >= 0 &&
	      temps() == 1, "safe_replace_begin: a temporary file beside it");
	CHECK(write(r.fd, "new", 3) == 3 && !strcmp(get(at("out")), "old"),
	      "until committed, the old file is whole");
	safe_replace_abort(&r);
	CHECK(!strcmp(get(at("out")), "old") && temps() == 0, "safe_replace_abort: old file whole, no temporary file");

	safe_replace_begin(&r, AT_FDCWD, at("out"), 0, 0, &why);
	CHECK(write(r.fd, "new", 3) == 3, "write the new contents");
	CHECK(safe_replace_commit(&r) == 0 && !strcmp(get(at("out")), "new") && temps() == 0 &&
	      !stat(at("out"), &st) && (st.st_mode & 0777) == 0640,
	      "safe_replace_commit: renamed into place, the old mode (640) kept");

	CHECK(safe_replace_begin(&r, AT_FDCWD, at("f"), 0, 0, &why) == -EEXIST &&
	      is(at("f"), S_IFIFO) && temps() == 0, "safe_replace_begin: a FIFO is refused at once");
	CHECK(safe_replace_begin(&r, AT_FDCWD, at("l"), 0, 0, &why) == -EEXIST &&
	      is(at("l"), S_IFLNK), "safe_replace_begin: a symlink is refused");
	/* in a directory of one's own, anything but a directory is replaced */
	CHECK(safe_replace_begin(&r, AT_FDCWD, at("l"), 0600, SAFE_REPLACE_OWN_DIR, &why) == 0 &&
	      write(r.fd, "mine", 4) == 4 && safe_replace_commit(&r) == 0 && is(at("l"), S_IFREG) &&
	      !strcmp(get(at("l")), "mine") && !strcmp(get(at("rec")), "one") &&
	      !stat(at("l"), &st) && (st.st_mode & 0777) == 0600,
	      "SAFE_REPLACE_OWN_DIR: the link itself replaced (mode 600), its target untouched");
	/* something other than a file put there meanwhile: left, not replaced */
	unlink(at("late"));
	safe_replace_begin(&r, AT_FDCWD, at("late"), 0, 0, &why);
	mkfifo(at("late"), 0644);
	CHECK(safe_replace_commit(&r) == -EEXIST && is(at("late"), S_IFIFO) && temps() == 0,
	      "safe_replace_commit: a FIFO put there meanwhile stays, the temporary file goes");
}

/* A child that begins a replacement and then ends by exit() or a signal:
 * the temporary file must not outlive it. */
static void test_pending(void)
{
	int how;
	for (how = 0; how < 2; how++) {
		pid_t pid = fork();
		int st;
		if (pid == 0) {
			struct safe_replace r;
			if (safe_replace_begin(&r, AT_FDCWD, at("child"), 0, 0, NULL))
				_exit(2);
			if (how == 0)
				exit(1); /* as die() does */
			raise(SIGTERM);
			_exit(3);
		}
		waitpid(pid, &st, 0);
		CHECK(temps() == 0 && !is(at("child"), S_IFREG) &&
		      (how == 0 ? WIFEXITED(st) && WEXITSTATUS(st) == 1 : WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM),
		      how == 0 ? "a temporary file is removed when the process exits first"
			       : "a temporary file is removed when SIGTERM ends the process (which still dies of it)");
	}
}

static void test_dirs(void)
{
	struct err why = { 0 };
	struct stat st;
	int fd, base = open(dir, O_RDONLY | O_DIRECTORY);
	struct passwd *nobody = getpwnam("nobody");

	CHECK(safe_dir_open(base, "cache", 0, &why) == -ENOENT, "safe_dir_open: not there");
	fd = safe_dir_open(base, "cache", SAFE_DIR_CREATE | SAFE_DIR_PRIVATE, &why);
	CHECK(fd >= 0 && !stat(at("cache"), &st) && (st.st_mode & 0777) == 0700,
	      "safe_dir_open: created with mode 700");
	if (fd >= 0)
		close(fd);
	chmod(at("cache"), 0777);
	CHECK(safe_dir_open(base, "cache", SAFE_DIR_PRIVATE, &why) == -EPERM,
	      "SAFE_DIR_PRIVATE: refused when others may write it");
	fd = safe_dir_open(base, "cache", 0, &why);
	CHECK(fd >= 0, "without SAFE_DIR_PRIVATE: a 777 directory of one's own is used");
	if (fd >= 0)
		close(fd);
	symlink(at("cache"), at("clink"));
	CHECK(safe_dir_open(base, "clink", 0, &why) == -ENOTDIR,
	      "safe_dir_open: a symlink is not followed");
	fd = safe_dir_open(base, "clink", SAFE_DIR_LINK_OK, &why);
	CHECK(fd >= 0, "SAFE_DIR_LINK_OK: one's own symlink is followed");
	if (fd >= 0)
		close(fd);
	fd = safe_dir_open(AT_FDCWD, at("cache"), 0, &why);
	CHECK(fd >= 0, "safe_dir_open: an absolute path with AT_FDCWD");
	if (fd >= 0)
		close(fd);
	if (geteuid() != 0 || !nobody) {
		SKIP("safe_dir_open: another user's directory and link", "needs root and the user nobody");
		close(base);
		return;
	}
	mkdir(at("theirs"), 0755);
	if (chown(at("theirs"), nobody->pw_uid, nobody->pw_gid) || lchown(at("clink"), nobody->pw_uid, nobody->pw_gid))
		abort();
	CHECK(safe_dir_open(base, "theirs", 0, &why) == -EPERM && strstr(why.msg, "another user"),
	      "safe_dir_open: another user's directory is refused");
	CHECK(safe_dir_open(base, "clink", SAFE_DIR_LINK_OK, &why) == -EPERM,
	      "SAFE_DIR_LINK_OK: another user's symlink is not followed");
	fd = open(at("theirs"), O_RDONLY | O_DIRECTORY);
	CHECK(safe_dir_open(fd, "sub", SAFE_DIR_CREATE, &why) == -EPERM && !is(at("theirs/sub"), S_IFDIR),
	      "SAFE_DIR_CREATE: nothing is made in another user's directory");
	close(fd);
	close(base);
}

int main(void)
{
	char cmd[100];
	snprintf(dir, sizeof(dir), "/tmp/stax-test-safefile-XXXXXX");
	if (!mkdtemp(dir))
		return 1;
	test_create();
	test_replace();
	test_pending();
	test_dirs();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		return 1;
	TEST_DONE();
}
