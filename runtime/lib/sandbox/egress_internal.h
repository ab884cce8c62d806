/* What the egress programs (egress_bpf.c) and the reading of their
 * denial counters (egress_counters.c) share: the counter map's name and
 * key. */
#ifndef BRIG_SANDBOX_EGRESS_INTERNAL_H
#define BRIG_SANDBOX_EGRESS_INTERNAL_H

#include <stdint.h>

#define BRIG_EGRESS_CNT_MAP_NAME "brig_egress_cnt"

/* one counted destination (the programs write it on the stack) */
struct cnt_key {
  uint8_t addr[16];
  uint16_t port;   /* network order */
  uint8_t proto;
  uint8_t family;  /* 4 or 6 */
  uint32_t pad;
};

#endif
