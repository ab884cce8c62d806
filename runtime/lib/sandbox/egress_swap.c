/* A pool claim's egress policy: the rules in the tries of a member's own
 * programs rewritten in place (the programs and the counter map stay), and
 * read back by reset, which says the next tenant has the pool's policy only
 * when every node is what the pool's policy makes (check egress.policy).
 * The tries are found as the counters are (egress_counters.c): through the
 * connect4 program attached to the member's cgroup v2 directory, whose map
 * ids only host CAP_SYS_ADMIN can turn into fds. Not atomic, and it need
 * not be: nothing of the member runs while a claim or a reset rewrites it. */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bpf_insn.h"
#include "sandbox/egress.h"
#include "sandbox/egress_internal.h"
#include "utils.h"

struct tries {
  int fd[2];         /* v4, v6 */
};

static const int families[2] = { AF_INET, AF_INET6 };
static const char *const names[2] = { BRIG_EGRESS_V4_MAP_NAME, BRIG_EGRESS_V6_MAP_NAME };

static size_t
addr_len (int i)
{
  return i == 0 ? 4 : 16;
}

static void
tries_close (struct tries *t)
{
  for (int i = 0; i < 2; i++)
    if (t->fd[i] >= 0)
      close (t->fd[i]);
}

/* Both tries of the programs attached to dir: 0, -ENOENT (none there). */
static int
tries_open (const char *dir, struct tries *t, char **why)
{
  _cleanup_close_ int cgfd = -1;

  t->fd[0] = t->fd[1] = -1;
  if (dir == NULL)
    {
      *why = xstrdup ("no cgroup v2 directory");
      return -ENOENT;
    }
  cgfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (cgfd < 0)
    {
      int e = errno;
      *why = xasprintf ("open %s: %s", dir, strerror (e));
      return -e;
    }
  static const uint32_t sizes[2] = { 4 + 4, 4 + 16 };
  if (brig_egress_find_maps (cgfd, names, sizes, t->fd, 2) < 0)
    {
      tries_close (t);
      *why = xasprintf ("no egress programs with their tries are attached to %s", dir);
      return -ENOENT;
    }
  return 0;
}

static int
elem (int cmd, int fd, const void *key, void *value_or_next)
{
  union bpf_attr a;
  memset (&a, 0, sizeof a);
  a.map_fd = (uint32_t) fd;
  a.key = (uint64_t) (uintptr_t) key;
  if (cmd == BPF_MAP_GET_NEXT_KEY)
    a.next_key = (uint64_t) (uintptr_t) value_or_next;
  else
    a.value = (uint64_t) (uintptr_t) value_or_next;
  return brig_bpf (cmd, &a) < 0 ? -errno : 0;
}

static void
node_key (const struct node *nd, size_t alen, uint8_t key[20])
{
  uint32_t plen = nd->prefix;
  memcpy (key, &plen, 4);
  memcpy (key + 4, nd->addr, alen);
}

/* Empty trie i and fill it with nodes. */
static int
trie_rewrite (int fd, int i, const struct node *nodes, size_t n, brig_error *err)
{
  uint8_t key[20];
  int r;

  /* nothing adds keys meanwhile: delete the first until there is none */
  while ((r = elem (BPF_MAP_GET_NEXT_KEY, fd, NULL, key)) == 0)
    if ((r = elem (BPF_MAP_DELETE_ELEM, fd, key, NULL)) < 0 && r != -ENOENT)
      return brig_error_set (err, -r, BRIG_EGRESS_KEY ": empty the %s trie", names[i]);
  if (r != -ENOENT)
    return brig_error_set (err, -r, BRIG_EGRESS_KEY ": read the %s trie", names[i]);
  for (size_t k = 0; k < n; k++)
    {
      node_key (&nodes[k], addr_len (i), key);
      union bpf_attr a;
      memset (&a, 0, sizeof a);
      a.map_fd = (uint32_t) fd;
      a.key = (uint64_t) (uintptr_t) key;
      a.value = (uint64_t) (uintptr_t) &nodes[k].v;
      if (brig_bpf (BPF_MAP_UPDATE_ELEM, &a) < 0)
        {
          if (errno == E2BIG || errno == ENOSPC)
            return brig_error_say (err, errno, BRIG_EGRESS_KEY ": the policy's %zu rules do not "
                                   "fit the member's %s trie (a member filled by an older brig: "
                                   "drain and fill the pool)", n, names[i]);
          return brig_error_errno (err, BRIG_EGRESS_KEY ": fill the %s trie", names[i]);
        }
    }
  return 0;
}

int
brig_egress_swap (const char *dir, const brig_egress_policy *p, brig_error *err)
{
  struct tries t;
  _cleanup_free_ char *why = NULL;
  int r = tries_open (dir, &t, &why);

  if (r < 0)
    return brig_error_say (err, -r, BRIG_EGRESS_KEY ": %s", why);
  for (int i = 0; i < 2 && r == 0; i++)
    {
      _cleanup_free_ struct node *nodes = NULL;
      size_t n = 0;
      r = brig_egress_nodes (p, families[i], &nodes, &n, err);
      if (r == 0 && n > BRIG_EGRESS_TRIE_MAX)
        r = brig_error_say (err, E2BIG, BRIG_EGRESS_KEY ": %zu trie nodes, at most %d", n,
                            BRIG_EGRESS_TRIE_MAX);
      if (r == 0)
        r = trie_rewrite (t.fd[i], i, nodes, n, err);
    }
  tries_close (&t);
  return r;
}

/* Whether trie fd (family i) holds exactly nodes. */
static int
trie_same (int fd, int i, const struct node *nodes, size_t n, char **detail)
{
  uint8_t key[20], next[20];
  size_t seen = 0;
  bool first = true;
  int r;

  for (size_t k = 0; k < n; k++)
    {
      struct lpm_value v;
      node_key (&nodes[k], addr_len (i), key);
      /* LOOKUP on an LPM trie is longest-prefix: a missing node could be
       * covered by a shorter one, so the prefix read back must match too
       * (GET_NEXT_KEY below counts the entries) */
      if ((r = elem (BPF_MAP_LOOKUP_ELEM, fd, key, &v)) < 0)
        {
          *detail = xasprintf ("%s: a node of the pool's policy is missing (prefix %u)",
                               names[i], nodes[k].prefix);
          return 0;
        }
      if (memcmp (&v, &nodes[k].v, sizeof v) != 0)
        {
          *detail = xasprintf ("%s: a node's verdicts differ from the pool's policy (prefix %u)",
                               names[i], nodes[k].prefix);
          return 0;
        }
    }
  while ((r = elem (BPF_MAP_GET_NEXT_KEY, fd, first ? NULL : key, next)) == 0)
    {
      first = false;
      memcpy (key, next, sizeof key);
      if (++seen > n)
        break;
      /* each key read must be one of the pool's nodes, exactly */
      bool found = false;
      for (size_t k = 0; k < n && !found; k++)
        {
          uint8_t want[20];
          node_key (&nodes[k], addr_len (i), want);
          found = memcmp (want, key, 4 + addr_len (i)) == 0;
        }
      if (!found)
        {
          *detail = xasprintf ("%s: holds a node the pool's policy does not have", names[i]);
          return 0;
        }
    }
  if (r < 0 && r != -ENOENT)
    {
      *detail = xasprintf ("%s: read: %s", names[i], strerror (-r));
      return r;
    }
  if (seen != n)
    {
      *detail = xasprintf ("%s: %zu nodes, the pool's policy has %zu", names[i], seen, n);
      return 0;
    }
  return 1;
}

int
brig_egress_verify (const char *dir, const brig_egress_policy *p, char **detail)
{
  struct tries t;
  int r;

  *detail = NULL;
  r = tries_open (dir, &t, detail);
  if (r < 0)
    return r;
  r = 1;
  for (int i = 0; i < 2 && r == 1; i++)
    {
      _cleanup_free_ struct node *nodes = NULL;
      size_t n = 0;
      brig_error e = { 0 };
      if (brig_egress_nodes (p, families[i], &nodes, &n, &e) < 0)
        {
          *detail = xstrdup (e.msg ? e.msg : "the pool's policy could not be built");
          brig_error_clear (&e);
          r = -EINVAL;
          break;
        }
      r = trie_same (t.fd[i], i, nodes, n, detail);
    }
  tries_close (&t);
  return r;
}
