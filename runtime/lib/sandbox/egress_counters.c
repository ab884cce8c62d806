/* The denial counters of the egress programs (egress_bpf.c writes them):
 * found through the program attached to the container's cgroup, read for
 * `brig events --stats` and emptied by reset, so a tenant never sees the
 * previous one's. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bpf_insn.h"
#include "sandbox/egress.h"
#include "sandbox/egress_internal.h"
#include "utils.h"

static int
fd_by_id (int cmd, uint32_t id)
{
  union bpf_attr a;
  memset (&a, 0, sizeof a);
  if (cmd == BPF_PROG_GET_FD_BY_ID)
    a.prog_id = id;
  else
    a.map_id = id;
  return brig_bpf (cmd, &a);
}

static int
obj_info (int fd, void *info, uint32_t len)
{
  union bpf_attr a;
  memset (&a, 0, sizeof a);
  a.info.bpf_fd = (uint32_t) fd;
  a.info.info_len = len;
  a.info.info = (uint64_t) (uintptr_t) info;
  return brig_bpf (BPF_OBJ_GET_INFO_BY_FD, &a) < 0 ? -errno : 0;
}

/* The maps named names[i] (key_size sizes[i]) of the program attached to
 * cgfd for attach, into fds[i] (left as they are when not found): how many
 * were found. */
static size_t
find_maps_of (int cgfd, uint32_t attach, const char *const *names, const uint32_t *sizes,
              int *fds, size_t n)
{
  uint32_t ids[4], map_ids[8];
  struct bpf_prog_info pi;
  union bpf_attr a;
  _cleanup_close_ int pfd = -1;
  size_t found = 0;

  memset (&a, 0, sizeof a);
  a.query.target_fd = (uint32_t) cgfd;
  a.query.attach_type = attach;
  a.query.prog_ids = (uint64_t) (uintptr_t) ids;
  a.query.prog_cnt = BRIG_ARRAY_SIZE (ids);
  if (brig_bpf (BPF_PROG_QUERY, &a) < 0 || a.query.prog_cnt == 0)
    return 0;
  pfd = fd_by_id (BPF_PROG_GET_FD_BY_ID, ids[0]);
  if (pfd < 0)
    return 0;
  memset (&pi, 0, sizeof pi);
  pi.nr_map_ids = BRIG_ARRAY_SIZE (map_ids);
  pi.map_ids = (uint64_t) (uintptr_t) map_ids;
  if (obj_info (pfd, &pi, sizeof pi) < 0)
    return 0;
  for (uint32_t i = 0; i < pi.nr_map_ids && i < BRIG_ARRAY_SIZE (map_ids) && found < n; i++)
    {
      struct bpf_map_info mi;
      int mfd = fd_by_id (BPF_MAP_GET_FD_BY_ID, map_ids[i]);
      bool kept = false;
      if (mfd < 0)
        continue;
      memset (&mi, 0, sizeof mi);
      if (obj_info (mfd, &mi, sizeof mi) < 0)
        mi.name[0] = '\0';
      for (size_t k = 0; k < n && !kept; k++)
        if (fds[k] < 0 && strcmp (mi.name, names[k]) == 0 && mi.key_size == sizes[k])
          {
            fds[k] = mfd;
            kept = true;
            found++;
          }
      if (!kept)
        close (mfd);
    }
  return found;
}

int
brig_egress_find_maps (int cgfd, const char *const *names, const uint32_t *sizes, int *fds,
                       size_t n)
{
  /* connect6 holds both tries (an IPv4-mapped address is looked up in the
   * IPv4 one) and the counters; connect4 the IPv4 trie and the counters */
  size_t found = find_maps_of (cgfd, BPF_CGROUP_INET6_CONNECT, names, sizes, fds, n);
  if (found < n)
    found += find_maps_of (cgfd, BPF_CGROUP_INET4_CONNECT, names, sizes, fds, n);
  return found == n ? 0 : -ENOENT;
}

int
brig_egress_find_map (int cgfd, const char *name, uint32_t key_size)
{
  int fd = -1;
  return brig_egress_find_maps (cgfd, &name, &key_size, &fd, 1) == 0 ? fd : -1;
}

/* The counter map of the programs attached to dir: 1 with *mfd, 0 when
 * no policy is attached there (or dir is NULL), or -errno. */
static int
counters_of (const char *dir, int *mfd, brig_error *err)
{
  _cleanup_close_ int cgfd = -1;

  *mfd = -1;
  if (dir == NULL)
    return 0;
  cgfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (cgfd < 0)
    return brig_error_errno (err, "open %s", dir);
  *mfd = brig_egress_find_map (cgfd, BRIG_EGRESS_CNT_MAP_NAME, sizeof (struct cnt_key));
  return *mfd >= 0;
}

/* The key after key in the map (NULL: the first) into next; -1 at the end. */
static int
next_key (int mfd, const struct cnt_key *key, struct cnt_key *next)
{
  union bpf_attr a;
  memset (&a, 0, sizeof a);
  a.map_fd = (uint32_t) mfd;
  a.key = (uint64_t) (uintptr_t) key;
  a.next_key = (uint64_t) (uintptr_t) next;
  return brig_bpf (BPF_MAP_GET_NEXT_KEY, &a) < 0 ? -1 : 0;
}

int
brig_egress_denials (const char *dir, struct brig_egress_denial **out, size_t *n,
                     brig_error *err)
{
  _cleanup_close_ int mfd = -1;
  struct cnt_key key, next;
  bool first = true;
  union bpf_attr a;
  int r;

  *out = NULL;
  *n = 0;
  r = counters_of (dir, &mfd, err);
  if (r <= 0)
    return r;
  memset (&key, 0, sizeof key);
  for (;;)
    {
      struct brig_egress_denial *d;
      uint64_t count = 0;

      if (next_key (mfd, first ? NULL : &key, &next) < 0)
        break;
      first = false;
      key = next;
      memset (&a, 0, sizeof a);
      a.map_fd = (uint32_t) mfd;
      a.key = (uint64_t) (uintptr_t) &key;
      a.value = (uint64_t) (uintptr_t) &count;
      if (brig_bpf (BPF_MAP_LOOKUP_ELEM, &a) < 0)
        continue;
      *out = xrealloc (*out, (*n + 1) * sizeof **out);
      d = &(*out)[(*n)++];
      memset (d, 0, sizeof *d);
      inet_ntop (key.family == 4 ? AF_INET : AF_INET6, key.addr, d->addr, sizeof d->addr);
      d->port = ntohs (key.port);
      d->proto = key.proto;
      d->count = count;
    }
  return 1;
}

int
brig_egress_reset_counters (const char *dir, brig_error *err)
{
  _cleanup_close_ int mfd = -1;
  struct cnt_key key;
  union bpf_attr a;
  int r = counters_of (dir, &mfd, err);

  if (r <= 0)
    return r;
  /* the cgroup is empty: nothing adds a key while the first is deleted
   * again and again, until there is none */
  while (next_key (mfd, NULL, &key) == 0)
    {
      memset (&a, 0, sizeof a);
      a.map_fd = (uint32_t) mfd;
      a.key = (uint64_t) (uintptr_t) &key;
      if (brig_bpf (BPF_MAP_DELETE_ELEM, &a) < 0 && errno != ENOENT)
        return brig_error_errno (err, BRIG_EGRESS_KEY ": empty the denial counters");
    }
  if (errno != ENOENT)
    return brig_error_errno (err, BRIG_EGRESS_KEY ": read the denial counters");
  return 0;
}
