/* The compiled-filter cache: <root>/@seccomp-cache/<hash>.bpf.
 *
 * A file holds a header, the full cache key (the canonical profile text)
 * and the BPF program. The file name is only a 64-bit hash of the key; a
 * lookup compares the whole stored key, so a hash collision is a miss and
 * never loads another profile's program. Files are written atomically and
 * trusted only when owned by us and not writable by anyone else. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/filter.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "seccomp/internal.h"
#include "utils.h"

#define CACHE_MAGIC "brig-seccomp-bpf 1\n"

struct cache_header {
  char magic[sizeof CACHE_MAGIC - 1];
  uint32_t key_len;
  uint32_t bpf_len;
};

/* Length-prefixed strings keep the key unambiguous whatever the names hold. */
static void
put_str (FILE *f, const char *tag, const char *s)
{
  if (s == NULL)
    fprintf (f, "%s-\n", tag);
  else
    fprintf (f, "%s%zu:%s\n", tag, strlen (s), s);
}

static void
put_strv (FILE *f, const char *tag, char **v, size_t n)
{
  fprintf (f, "%s[%zu]\n", tag, v == NULL ? (size_t) 0 : n);
  for (size_t i = 0; v != NULL && i < n; i++)
    put_str (f, " ", v[i]);
}

char *
brig_seccomp_cache_key (const oci_seccomp *s, size_t *len)
{
  const struct scmp_version *v = seccomp_version ();
  char *buf = NULL;
  size_t size = 0;
  FILE *f = open_memstream (&buf, &size);

  if (f == NULL)
    abort ();
  /* What else changes the program: libseccomp's tables and code, the API
   * level it detected in the kernel, the native architecture. */
  fprintf (f, "libseccomp %u.%u.%u api %u native %" PRIu32 "\n", v->major, v->minor, v->micro,
           seccomp_api_get (), seccomp_arch_native ());
  put_str (f, "defaultAction ", s->default_action);
  fprintf (f, "defaultErrnoRet %d %" PRIu32 "\n", s->has_default_errno_ret, s->default_errno_ret);
  put_strv (f, "architectures", s->architectures, s->architectures_len);
  put_strv (f, "flags", s->flags, s->flags_len);
  fprintf (f, "syscalls %zu\n", s->syscalls_len);
  for (size_t i = 0; i < s->syscalls_len; i++)
    {
      const oci_syscall *sys = &s->syscalls[i];
      put_strv (f, "names", sys->names, sys->names_len);
      put_str (f, "action ", sys->action);
      fprintf (f, "errnoRet %d %" PRIu32 "\nargs %zu\n", sys->has_errno_ret, sys->errno_ret,
               sys->args_len);
      for (size_t a = 0; a < sys->args_len; a++)
        {
          const oci_syscall_arg *arg = &sys->args[a];
          fprintf (f, " %" PRIu32 " %" PRIu64 " %d %" PRIu64 " ", arg->index, arg->value,
                   arg->has_value_two, arg->value_two);
          put_str (f, "", arg->op);
        }
    }
  if (fclose (f) != 0)
    abort ();
  *len = size;
  return buf;
}

/* FNV-1a, 64 bits: only names the file; the stored key is compared. */
static uint64_t
fnv1a (const char *p, size_t n)
{
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < n; i++)
    {
      h ^= (unsigned char) p[i];
      h *= 0x100000001b3ULL;
    }
  return h;
}

static char *
cache_name (const char *key, size_t key_len)
{
  return xasprintf ("%016" PRIx64 ".bpf", fnv1a (key, key_len));
}

int
brig_seccomp_cache_get (const char *cache_dir, const char *key, size_t key_len, void **bpf,
                        size_t *bpf_len)
{
  _cleanup_free_ char *name = cache_name (key, key_len);
  _cleanup_free_ char *path = xasprintf ("%s/%s", cache_dir, name);
  _cleanup_close_ int fd = open (path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  _cleanup_free_ char *buf = NULL;
  struct cache_header h;
  struct stat st;
  size_t len = 0;

  if (fd < 0)
    return 0;
  if (fstat (fd, &st) < 0 || !S_ISREG (st.st_mode) || st.st_uid != geteuid ()
      || (st.st_mode & 0022) != 0)
    {
      brig_debug ("seccomp cache: ignoring %s (not a private regular file)", path);
      return 0;
    }
  if (brig_read_fd (fd, &buf, &len, NULL) < 0 || len < sizeof h)
    return 0;
  memcpy (&h, buf, sizeof h);
  if (memcmp (h.magic, CACHE_MAGIC, sizeof h.magic) != 0 || h.key_len != key_len
      || h.bpf_len == 0 || h.bpf_len % sizeof (struct sock_filter) != 0
      || len != sizeof h + (size_t) h.key_len + h.bpf_len
      || memcmp (buf + sizeof h, key, key_len) != 0)
    {
      brig_debug ("seccomp cache: %s does not match this profile", path);
      return 0;
    }
  *bpf = xmalloc0 (h.bpf_len);
  memcpy (*bpf, buf + sizeof h + key_len, h.bpf_len);
  *bpf_len = h.bpf_len;
  brig_debug ("seccomp cache: hit %s", path);
  return 1;
}

void
brig_seccomp_cache_put (const char *cache_dir, const char *key, size_t key_len, const void *bpf,
                        size_t bpf_len)
{
  _cleanup_free_ char *name = cache_name (key, key_len);
  _cleanup_free_ char *buf = NULL;
  _cleanup_close_ int dfd = -1;
  struct cache_header h;
  brig_error err = { 0 };
  size_t len = sizeof h + key_len + bpf_len;
  int r;

  if (key_len > UINT32_MAX || bpf_len > UINT32_MAX)
    return;
  r = brig_mkdir_p (cache_dir, 0700);
  if (r < 0 && r != -EEXIST)
    {
      brig_debug ("seccomp cache: mkdir %s: %s", cache_dir, strerror (-r));
      return;
    }
  dfd = open (cache_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (dfd < 0)
    {
      brig_debug ("seccomp cache: open %s: %s", cache_dir, strerror (errno));
      return;
    }
  memcpy (h.magic, CACHE_MAGIC, sizeof h.magic);
  h.key_len = (uint32_t) key_len;
  h.bpf_len = (uint32_t) bpf_len;
  buf = xmalloc0 (len);
  memcpy (buf, &h, sizeof h);
  memcpy (buf + sizeof h, key, key_len);
  memcpy (buf + sizeof h + key_len, bpf, bpf_len);
  if (brig_write_file_atomic (dfd, name, buf, len, 0600, &err) < 0)
    {
      brig_debug ("seccomp cache: %s", err.msg ? err.msg : "write failed");
      brig_error_clear (&err);
      return;
    }
  brig_debug ("seccomp cache: stored %s/%s", cache_dir, name);
}
