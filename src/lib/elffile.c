#include "lib/elffile.h"
#include "lib/elfguard.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

static pthread_once_t elf_once = PTHREAD_ONCE_INIT;

static void elf_init_once(void)
{
	elf_version(EV_CURRENT);
}

void elf_file_init(void)
{
	pthread_once(&elf_once, elf_init_once);
}

int elf_file_fd(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	return fd;
}

Elf *elf_file_begin(int fd)
{
	Elf *e;

	elf_file_init();
	e = elfguard_begin(fd); /* a file cut short meanwhile reads as zeros */
	if (e && elf_kind(e) != ELF_K_ELF) {
		elfguard_end(e);
		e = NULL;
	}
	return e;
}

Elf *elf_file_open(const char *path, int *fd)
{
	Elf *e;

	*fd = elf_file_fd(path);
	if (*fd < 0) {
		*fd = -1;
		return NULL;
	}
	e = elf_file_begin(*fd);
	if (!e) {
		close(*fd);
		*fd = -1;
	}
	return e;
}
