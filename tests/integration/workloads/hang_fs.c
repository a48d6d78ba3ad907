/* hang_fs.c - a read-only FUSE file system that a test can make hang, as a
 * network mount does when its server goes away: it serves files /prog0 ..
 * /progN-1, each with the bytes of SOURCE; stopped (SIGSTOP), it answers
 * nothing more, and whoever asks (an open, a lookup) waits for it. The
 * kernel waits killably while a request is still queued, as NFS does: a
 * fatal signal, or this process's death, ends the wait. (A request the
 * server has read but never answers would be waited for uninterruptibly:
 * not what a network mount does, so not modelled.) Files are kept in the
 * page cache, so a program already running from it keeps running.
 *
 *   hang_fs SOURCE N MOUNTPOINT     foreground; allow_other (run it as root)
 */
#define FUSE_USE_VERSION 31
#include <errno.h>
#include <fuse.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_FILES 16

static char *data;
static size_t size;
static int files;

/* The index of "/progK", or -1. */
static int file_index(const char *path)
{
	char *end;
	long k;

	if (strncmp(path, "/prog", 5) != 0 || !path[5])
		return -1;
	k = strtol(path + 5, &end, 10);
	return *end || k < 0 || k >= files ? -1 : (int)k;
}

static int fs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	(void)fi;
	memset(st, 0, sizeof(*st));
	if (strcmp(path, "/") == 0) {
		st->st_mode = S_IFDIR | 0755;
		st->st_nlink = 2;
		return 0;
	}
	if (file_index(path) < 0)
		return -ENOENT;
	st->st_mode = S_IFREG | 0755;
	st->st_nlink = 1;
	st->st_size = (off_t)size;
	return 0;
}

static int fs_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
		      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	char name[32];

	(void)off;
	(void)fi;
	(void)flags;
	if (strcmp(path, "/") != 0)
		return -ENOENT;
	fill(buf, ".", NULL, 0, 0);
	fill(buf, "..", NULL, 0, 0);
	for (int k = 0; k < files; k++) {
		snprintf(name, sizeof(name), "prog%d", k);
		fill(buf, name, NULL, 0, 0);
	}
	return 0;
}

static int fs_open(const char *path, struct fuse_file_info *fi)
{
	if (file_index(path) < 0)
		return -ENOENT;
	if ((fi->flags & O_ACCMODE) != O_RDONLY)
		return -EACCES;
	fi->keep_cache = 1;
	return 0;
}

static int fs_read(const char *path, char *buf, size_t n, off_t off, struct fuse_file_info *fi)
{
	(void)path;
	(void)fi;
	if (off < 0 || (size_t)off >= size)
		return 0;
	if (n > size - (size_t)off)
		n = size - (size_t)off;
	memcpy(buf, data + off, n);
	return (int)n;
}

static const struct fuse_operations ops = {
	.getattr = fs_getattr,
	.readdir = fs_readdir,
	.open = fs_open,
	.read = fs_read,
};

int main(int argc, char **argv)
{
	FILE *in;
	struct stat st;
	char *fuse_argv[] = { argv[0], "-f", "-o", "allow_other,ro", NULL, NULL };

	if (argc != 4) {
		fprintf(stderr, "usage: hang_fs SOURCE N MOUNTPOINT\n");
		return 2;
	}
	files = atoi(argv[2]);
	if (files < 1 || files > MAX_FILES) {
		fprintf(stderr, "hang_fs: N must be 1..%d\n", MAX_FILES);
		return 2;
	}
	in = fopen(argv[1], "rb");
	if (!in || fstat(fileno(in), &st) != 0) {
		perror(argv[1]);
		return 1;
	}
	size = (size_t)st.st_size;
	data = malloc(size ? size : 1);
	if (!data || fread(data, 1, size, in) != size) {
		perror(argv[1]);
		return 1;
	}
	fclose(in);
	fuse_argv[4] = argv[3];
	return fuse_main(5, fuse_argv, &ops, NULL);
}
