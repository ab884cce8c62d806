/* What the egress programs (egress_bpf.c), the reading of their denial
 * counters (egress_counters.c) and a claim's rewriting of their tries
 * (egress_swap.c) share: the maps' names, keys and values. */
#ifndef BRIG_SANDBOX_EGRESS_INTERNAL_H
#define BRIG_SANDBOX_EGRESS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "sandbox/egress.h"

#define BRIG_EGRESS_CNT_MAP_NAME "brig_egress_cnt"

/* one counted destination (the programs write it on the stack) */
struct cnt_key {
  uint8_t addr[16];
  uint16_t port;   /* network order */
  uint8_t proto;
  uint8_t family;  /* 4 or 6 */
  uint32_t pad;
};

#define NPORTS 8
#define BRIG_EGRESS_V4_MAP_NAME "brig_egress_v4"
#define BRIG_EGRESS_V6_MAP_NAME "brig_egress_v6"

/* the value of a trie entry: its verdict per port (egress_bpf.c) */
struct lpm_value {
  uint32_t dflt;
  uint32_t port[NPORTS];
  uint32_t verdict[NPORTS];
};

/* one node of a trie: a prefix and its per-port verdicts */
struct node {
  uint8_t addr[16];
  unsigned prefix;
  struct lpm_value v;
};

/* The trie nodes of p's rules of family (AF_INET, AF_INET6): *out
 * malloc'd, *n_out of them. */
int brig_egress_nodes (const brig_egress_policy *p, int family, struct node **out, size_t *n_out,
                       brig_error *err);

/* The map named name (key_size bytes of key) of the connect6 or connect4
 * program attached to the cgroup directory cgfd: an fd, or -1
 * (egress_counters.c). */
int brig_egress_find_map (int cgfd, const char *name, uint32_t key_size);

/* The same for n maps at once, into fds[] (each -1 on entry): 0, or
 * -ENOENT when one was not found (those found are open). */
int brig_egress_find_maps (int cgfd, const char *const *names, const uint32_t *sizes, int *fds,
                           size_t n);

#endif
