/* Small helpers shared by libbrig: cleanup attributes, file I/O, retries. */
#ifndef BRIG_UTILS_H
#define BRIG_UTILS_H

#include <dirent.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <unistd.h>

#include "error.h"

void brig_freep (void *p);
void brig_closep (int *fd);
void brig_fclosep (FILE **f);
void brig_closedirp (DIR **d);
/* Free a NULL-terminated string vector and its strings. */
void brig_strv_free (char **v);
void brig_strv_freep (char ***v);

/* Write s to f as a JSON string, quotes included ("" for NULL). */
void brig_json_write_string (FILE *f, const char *s);

#define _cleanup_free_ __attribute__ ((cleanup (brig_freep)))
#define _cleanup_close_ __attribute__ ((cleanup (brig_closep)))
#define _cleanup_fclose_ __attribute__ ((cleanup (brig_fclosep)))
#define _cleanup_closedir_ __attribute__ ((cleanup (brig_closedirp)))
#define _cleanup_strv_ __attribute__ ((cleanup (brig_strv_freep)))

/* Hand over ownership out of a cleanup variable. */
#define brig_steal_ptr(p) ({ __typeof__ (p) _tmp = (p); (p) = NULL; _tmp; })
#define brig_steal_fd(fd) ({ int _tmp = (fd); (fd) = -1; _tmp; })

#define BRIG_ARRAY_SIZE(a) (sizeof (a) / sizeof ((a)[0]))

/* malloc/strdup that abort on OOM: brig cannot do anything useful without
 * a few bytes, and this keeps error paths about real failures. */
void *xmalloc0 (size_t size);
void *xrealloc (void *p, size_t size);
char *xstrdup (const char *s);
char *xasprintf (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

/* Read all of fd / the file at path into a NUL-terminated malloc'd buffer. */
int brig_read_fd (int fd, char **out, size_t *len, brig_error *err);
int brig_read_file_at (int dirfd, const char *path, char **out, size_t *len, brig_error *err);

/* Write buf to path (relative to dirfd) through a temporary file and
 * rename(2), so readers never see a partial file; the temporary file is
 * always a new one (O_EXCL | O_NOFOLLOW), never a symlink planted there. */
int brig_write_file_atomic (int dirfd, const char *path, const char *buf, size_t len,
                            mode_t mode, brig_error *err);

/* Write len bytes to fd, retrying on EINTR and short writes; 0 or -errno. */
int brig_write_all (int fd, const void *buf, size_t len);

/* Write a short string to a file (sysfs, procfs, cgroupfs); 0 or -errno. */
int brig_write_string_at (int dirfd, const char *path, const char *value);

/* mkdir -p with mode for each missing component; 0 or -errno. */
int brig_mkdir_p (const char *path, mode_t mode);

/* Field `field` (0 name .. 6 shell) of uid's entry in the current root's
 * /etc/passwd, or NULL (also when it is not a regular file of at most
 * 16 MiB). Read by hand, not through NSS: the entry must come from the
 * container's file, and brig links statically. */
char *brig_passwd_field (uid_t uid, int field);

/* Read state ('R', 'S', 'Z', ...) and start time of pid from /proc/PID/stat;
 * 0 or -errno. A pid is a process only with its start time (recycling). */
int brig_proc_stat (pid_t pid, char *state, unsigned long long *start_time);

/* CLOCK_MONOTONIC in milliseconds: whole, and with the fraction (timings). */
int64_t brig_mono_ms (void);
double brig_mono_ms_f (void);

/* Sleep that long, through EINTR. */
void brig_sleep_us (long us);
void brig_sleep_ms (long ms);

/* qsort(3)'s order of pid_t values. */
int brig_cmp_pid (const void *a, const void *b);

/* Write pid to path (--pid-file) atomically; errors wrapped with what. */
int brig_write_pid_file (const char *path, pid_t pid, const char *what, brig_error *err);

#endif
