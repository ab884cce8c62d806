/* The kernel side of the egress policy: cgroup BPF programs brig writes
 * itself (as cgroup/devices_bpf.c does), so the static binary needs no
 * library and the hot path no helper process.
 *
 *   connect4/connect6     every connect() (TCP, connected UDP, ...)
 *   sendmsg4/sendmsg6     every sendto()/sendmsg() with an address (UDP)
 *   cgroup_skb egress     every IP packet the cgroup's sockets send: ICMP,
 *                         raw sockets, and a second look at the rest
 *
 * Each looks the destination up in an LPM trie per family. An IPv6
 * destination in a form that carries an IPv4 address (egress_addr.h:
 * ::ffff:a.b.c.d, ::ffff:0:a.b.c.d, 64:ff9b::a.b.c.d, 6to4, Teredo) is
 * looked up as that IPv4 address in the IPv4 trie, so every rule for an
 * IPv4 range holds its translated forms too (6to4 and Teredo as portless:
 * what reaches the IPv4 address is protocol 41 or UDP to the relay's
 * choice of port, not the port the socket names). The
 * value of a prefix carries its verdict per port, so the longest prefix
 * decides, with port rules, in one lookup:
 *
 *   struct { u32 dflt; u32 port[8]; u32 verdict[8]; }
 *
 * ports in network order, unused slots 0xffffffff. The verdict for a port
 * is computed here from every rule containing the prefix (egress.c's rank
 * order). A denial returns 0 (connect/sendmsg fail with EPERM, the packet
 * is dropped) and adds one to a hash map keyed by destination, port,
 * protocol and family, which `brig events --stats` reads back through the
 * attached program's map ids (egress_counters.c): nothing is pinned, the
 * programs and maps live exactly as long as the cgroup.
 *
 * Attached with BPF_F_ALLOW_MULTI: a program attached so is detached or
 * replaced only by whoever holds an fd of it, and only CAP_SYS_ADMIN of
 * the host gets one from its id. (Attached without flags, a program is
 * detached by anyone who can open the cgroup directory: root in a
 * container with a cgroup2 mount did so, without any capability, on Linux
 * 6.18.) Programs cgroups below add run after ours and can only deny more:
 * the kernel allows a packet or connect only when every one allows it. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpf_insn.h"
#include "sandbox/egress.h"
#include "sandbox/egress_addr.h"
#include "sandbox/egress_internal.h"
#include "log.h"
#include "utils.h"

#define CNT_MAX 4096


/* ---- the policy as trie nodes ---- */

/* The rule that decides for addr/prefix and port (0: a port no rule names). */
static bool
verdict (const struct brig_egress_rule *r, size_t n, const struct node *nd, uint16_t port)
{
  const struct brig_egress_rule *best = NULL;
  for (size_t i = 0; i < n; i++)
    {
      const struct brig_egress_rule *c = &r[i];
      if (c->prefix > nd->prefix || !brig_addr_in_prefix (c->addr, c->prefix, nd->addr))
        continue;
      if (c->port && c->port != port)
        continue;
      if (best == NULL || c->prefix > best->prefix
          || (c->prefix == best->prefix
              && ((c->port != 0) > (best->port != 0)
                  || ((c->port != 0) == (best->port != 0) && c->source > best->source))))
        best = c;
    }
  return best && best->allow;
}

/* The rules of one family as the trie sees them. */
static struct brig_egress_rule *
family_rules (const brig_egress_policy *p, int family, size_t *n)
{
  struct brig_egress_rule *v = xmalloc0 ((p->n_rules + 1) * sizeof *v);
  size_t k = 0;

  for (size_t i = 0; i < p->n_rules; i++)
    if (p->rules[i].family == family)
      v[k++] = p->rules[i];
  *n = k;
  return v;
}

int
brig_egress_nodes (const brig_egress_policy *p, int family, struct node **out, size_t *n_out,
                   brig_error *err)
{
  size_t n_rules, n = 0;
  _cleanup_free_ struct brig_egress_rule *r = family_rules (p, family, &n_rules);
  struct node *nodes = xmalloc0 ((n_rules + 1) * sizeof *nodes);

  for (size_t i = 0; i < n_rules; i++)
    {
      struct node *nd = NULL;
      uint16_t ports[NPORTS];
      size_t np = 0;

      for (size_t j = 0; j < n && nd == NULL; j++)
        if (nodes[j].prefix == r[i].prefix && memcmp (nodes[j].addr, r[i].addr, 16) == 0)
          nd = &nodes[j];
      if (nd)
        continue;
      nd = &nodes[n++];
      memcpy (nd->addr, r[i].addr, 16);
      nd->prefix = r[i].prefix;
      /* the ports any rule containing this prefix names */
      for (size_t j = 0; j < n_rules; j++)
        {
          bool seen = false;
          if (r[j].port == 0 || r[j].prefix > nd->prefix
              || !brig_addr_in_prefix (r[j].addr, r[j].prefix, nd->addr))
            continue;
          for (size_t k = 0; k < np; k++)
            seen |= ports[k] == r[j].port;
          if (seen)
            continue;
          if (np == NPORTS)
            {
              free (nodes);
              return brig_error_say (err, E2BIG, "annotation " BRIG_EGRESS_ALLOW_KEY ": more than %d "
                                     "different ports apply to one address range", NPORTS);
            }
          ports[np++] = r[j].port;
        }
      nd->v.dflt = verdict (r, n_rules, nd, 0);
      for (size_t k = 0; k < NPORTS; k++)
        {
          nd->v.port[k] = k < np ? htons (ports[k]) : 0xffffffffu;
          nd->v.verdict[k] = k < np ? verdict (r, n_rules, nd, ports[k]) : 0;
        }
    }
  *out = nodes;
  *n_out = n;
  return 0;
}

/* ---- maps ---- */

static int
map_create (uint32_t type, uint32_t key, uint32_t value, uint32_t max, uint32_t flags,
            const char *name, brig_error *err)
{
  union bpf_attr a;
  int fd;
  memset (&a, 0, sizeof a);
  a.map_type = type;
  a.key_size = key;
  a.value_size = value;
  a.max_entries = max;
  a.map_flags = flags;
  snprintf (a.map_name, sizeof a.map_name, "%s", name);
  fd = brig_bpf (BPF_MAP_CREATE, &a);
  if (fd < 0)
    return brig_error_errno (err, "annotation " BRIG_EGRESS_KEY ": create the BPF map %s", name);
  return fd;
}

static int
map_update (int fd, const void *key, const void *value)
{
  union bpf_attr a;
  memset (&a, 0, sizeof a);
  a.map_fd = (uint32_t) fd;
  a.key = (uint64_t) (uintptr_t) key;
  a.value = (uint64_t) (uintptr_t) value;
  return brig_bpf (BPF_MAP_UPDATE_ELEM, &a) < 0 ? -errno : 0;
}

static int
trie_create (const brig_egress_policy *p, int family, brig_error *err)
{
  _cleanup_free_ struct node *nodes = NULL;
  size_t n = 0, alen = family == AF_INET ? 4 : 16;
  int fd, r;

  r = brig_egress_nodes (p, family, &nodes, &n, err);
  if (r < 0)
    return r;
  fd = map_create (BPF_MAP_TYPE_LPM_TRIE, (uint32_t) (4 + alen), sizeof (struct lpm_value),
                   BRIG_EGRESS_TRIE_MAX, BPF_F_NO_PREALLOC,
                   family == AF_INET ? "brig_egress_v4" : "brig_egress_v6", err);
  if (fd < 0)
    return fd;
  for (size_t i = 0; i < n; i++)
    {
      uint8_t key[20];
      uint32_t plen = nodes[i].prefix;
      memcpy (key, &plen, 4);
      memcpy (key + 4, nodes[i].addr, alen);
      if ((r = map_update (fd, key, &nodes[i].v)) < 0)
        {
          close (fd);
          return brig_error_set (err, -r, "annotation " BRIG_EGRESS_KEY ": fill the BPF trie");
        }
    }
  return fd;
}

/* ---- programs ---- */

enum { L_DECIDED4, L_DECIDED6, L_DECIDED_W, L_ALLOW, L_DENY, L_INSERT, L_DROP, L_V4, L_V6, L_P4,
       L_D4, L_P6, L_D6, L_NDP, L_COUNT, L_W_ZERO, L_W_TEREDO, L_W_6TO4, L_NATIVE6, L_MAPPED,
       L_WRAPPED, L_WRAPPED_KEY, L_LOOKUP4, L_LAST };

struct prog {
  struct bpf_insn *v;
  size_t n;
  int map4, map6, cnt;
  /* forward jumps to labels: insn index, label */
  size_t fix_at[128];
  int fix_label[128];
  size_t n_fix;
  size_t label_at[L_LAST];
};

static void
emit (struct prog *p, uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
  p->v = xrealloc (p->v, (p->n + 1) * sizeof *p->v);
  p->v[p->n++] = brig_bpf_insn (code, dst, src, off, imm);
}

/* A forward jump to label, resolved once the label is placed. */
static void
jump_insn (struct prog *p, uint8_t code, uint8_t dst, uint8_t src, int32_t imm, int label)
{
  if (p->n_fix == BRIG_ARRAY_SIZE (p->fix_at))
    abort ();  /* a program grew past its jump table: brig's own bug */
  p->fix_at[p->n_fix] = p->n;
  p->fix_label[p->n_fix++] = label;
  emit (p, code, dst, src, 0, imm);
}

static void
jump (struct prog *p, uint8_t op, uint8_t dst, int32_t imm, int label)
{
  jump_insn (p, BPF_JMP | op | BPF_K, dst, 0, imm, label);
}

/* the same against a register (imm would be sign-extended to 64 bits) */
static void
jump_reg (struct prog *p, uint8_t op, uint8_t dst, uint8_t src, int label)
{
  jump_insn (p, BPF_JMP | op | BPF_X, dst, src, 0, label);
}

static void
label (struct prog *p, int l)
{
  p->label_at[l] = p->n;
}

static void
ld_map (struct prog *p, uint8_t dst, int fd)
{
  emit (p, BPF_LD | BPF_DW | BPF_IMM, dst, BPF_PSEUDO_MAP_FD, 0, fd);
  emit (p, 0, 0, 0, 0, 0);
}

#define MOV_REG(p, d, s) emit (p, BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define MOV_IMM(p, d, i) emit (p, BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, i)
#define MOV32_IMM(p, d, i) emit (p, BPF_ALU | BPF_MOV | BPF_K, d, 0, 0, i)
#define ALU_IMM(p, op, d, i) emit (p, BPF_ALU64 | (op) | BPF_K, d, 0, 0, i)
#define LDX(p, sz, d, s, off) emit (p, BPF_LDX | (sz) | BPF_MEM, d, s, off, 0)
#define STX(p, sz, d, s, off) emit (p, BPF_STX | (sz) | BPF_MEM, d, s, off, 0)
#define ST(p, sz, d, off, i) emit (p, BPF_ST | (sz) | BPF_MEM, d, 0, off, i)
#define CALL(p, f) emit (p, BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define RET(p, v) (MOV_IMM (p, BPF_REG_0, v), emit (p, BPF_JMP | BPF_EXIT, 0, 0, 0, 0))

/* stack (r10-relative) */
enum { KEY4 = -8, KEY6 = -32, CKEY = -56, CVAL = -64, HDR = -112, PBUF = -120 };

/* r6 ctx, port (network order) in register port, keys on the stack; the
 * verdict in r1 at label decided. */
static void
decide (struct prog *p, int family, int decided, uint8_t port)
{
  ld_map (p, BPF_REG_1, family == 4 ? p->map4 : p->map6);
  MOV_REG (p, BPF_REG_2, BPF_REG_10);
  ALU_IMM (p, BPF_ADD, BPF_REG_2, family == 4 ? KEY4 : KEY6);
  CALL (p, BPF_FUNC_map_lookup_elem);
  MOV_IMM (p, BPF_REG_1, 0);
  jump (p, BPF_JEQ, BPF_REG_0, 0, decided);
  LDX (p, BPF_W, BPF_REG_1, BPF_REG_0, 0);
  for (int i = 0; i < NPORTS; i++)
    {
      LDX (p, BPF_W, BPF_REG_2, BPF_REG_0, (int16_t) (4 + 4 * i));
      emit (p, BPF_JMP | BPF_JNE | BPF_X, BPF_REG_2, port, 2, 0);
      LDX (p, BPF_W, BPF_REG_1, BPF_REG_0, (int16_t) (4 + 4 * NPORTS + 4 * i));
      jump (p, BPF_JA, 0, 0, decided);
    }
  label (p, decided);
}

/* Four bytes of an address, network order, as a W load reads them. */
static int32_t
word (uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
  const uint8_t w[4] = { a, b, c, d };
  uint32_t v;
  memcpy (&v, w, sizeof v);
  return (int32_t) v;
}

/* The IPv6 destination at KEY6 (r7 its port): a form that carries an
 * IPv4 address (the tests of egress_addr.c's table) is decided as that
 * address in the IPv4 trie, with r9 as the port (0 for 6to4 and Teredo),
 * anything else in the IPv6 trie (::/96 and the rest of 64:ff9b::/32 are
 * denied there). Ends at L_COUNT with the verdict in r1. */
static void
decide6 (struct prog *p)
{
  const int16_t a = KEY6 + 4;

  MOV_REG (p, BPF_REG_9, BPF_REG_7);
  for (int i = 0; i < 4; i++)
    LDX (p, BPF_W, (uint8_t) (BPF_REG_2 + i), BPF_REG_10, (int16_t) (a + 4 * i));
  /* r2..r5: the address's four words. 64:ff9b::/96 */
  MOV32_IMM (p, BPF_REG_1, word (0x00, 0x64, 0xff, 0x9b));
  jump_reg (p, BPF_JNE, BPF_REG_2, BPF_REG_1, L_W_ZERO);
  jump (p, BPF_JNE, BPF_REG_3, 0, L_NATIVE6);
  jump (p, BPF_JEQ, BPF_REG_4, 0, L_WRAPPED);
  jump (p, BPF_JA, 0, 0, L_NATIVE6);
  /* ::ffff:0:0/96 (mapped) and ::ffff:0:0:0/96 (SIIT) */
  label (p, L_W_ZERO);
  jump (p, BPF_JNE, BPF_REG_2, 0, L_W_TEREDO);
  jump (p, BPF_JNE, BPF_REG_3, 0, L_NATIVE6);
  MOV32_IMM (p, BPF_REG_1, word (0, 0, 0xff, 0xff));
  jump_reg (p, BPF_JEQ, BPF_REG_4, BPF_REG_1, L_MAPPED);
  MOV32_IMM (p, BPF_REG_1, word (0xff, 0xff, 0, 0));
  jump_reg (p, BPF_JEQ, BPF_REG_4, BPF_REG_1, L_WRAPPED);
  jump (p, BPF_JA, 0, 0, L_NATIVE6);
  /* 2001:0::/32: the client's address, every bit inverted */
  label (p, L_W_TEREDO);
  MOV32_IMM (p, BPF_REG_1, word (0x20, 0x01, 0, 0));
  jump_reg (p, BPF_JNE, BPF_REG_2, BPF_REG_1, L_W_6TO4);
  emit (p, BPF_ALU | BPF_XOR | BPF_K, BPF_REG_5, 0, 0, -1);
  MOV_IMM (p, BPF_REG_9, 0);
  jump (p, BPF_JA, 0, 0, L_WRAPPED);
  /* 2002::/16: the address in bytes 2-5 */
  label (p, L_W_6TO4);
  emit (p, BPF_ALU | BPF_AND | BPF_K, BPF_REG_2, 0, 0, word (0xff, 0xff, 0, 0));
  MOV32_IMM (p, BPF_REG_1, word (0x20, 0x02, 0, 0));
  jump_reg (p, BPF_JNE, BPF_REG_2, BPF_REG_1, L_NATIVE6);
  for (int i = 0; i < 4; i++)
    {
      LDX (p, BPF_B, BPF_REG_1, BPF_REG_10, (int16_t) (a + 2 + i));
      STX (p, BPF_B, BPF_REG_10, BPF_REG_1, (int16_t) (KEY4 + 4 + i));
    }
  MOV_IMM (p, BPF_REG_9, 0);
  jump (p, BPF_JA, 0, 0, L_WRAPPED_KEY);

  label (p, L_NATIVE6);
  decide (p, 6, L_DECIDED6, BPF_REG_7);
  jump (p, BPF_JA, 0, 0, L_COUNT);
  /* a mapped address is sent as IPv4 by the socket itself: 127/8 there is
   * the loopback the rules speak of */
  label (p, L_MAPPED);
  STX (p, BPF_W, BPF_REG_10, BPF_REG_5, KEY4 + 4);
  jump (p, BPF_JA, 0, 0, L_LOOKUP4);
  label (p, L_WRAPPED);
  STX (p, BPF_W, BPF_REG_10, BPF_REG_5, KEY4 + 4);
  /* the other forms leave the network namespace for a translator or a
   * relay: their 127/8 is never the container's own loopback */
  label (p, L_WRAPPED_KEY);
  LDX (p, BPF_B, BPF_REG_1, BPF_REG_10, KEY4 + 4);
  jump (p, BPF_JNE, BPF_REG_1, 127, L_LOOKUP4);
  MOV_IMM (p, BPF_REG_1, 0);
  jump (p, BPF_JA, 0, 0, L_COUNT);
  label (p, L_LOOKUP4);
  ST (p, BPF_W, BPF_REG_10, KEY4, 32);
  decide (p, 4, L_DECIDED_W, BPF_REG_9);
  label (p, L_COUNT);
}

/* After decide() or decide6(): r1 is the verdict. */
static void
count_and_return (struct prog *p)
{
  jump (p, BPF_JNE, BPF_REG_1, 0, L_ALLOW);
  STX (p, BPF_H, BPF_REG_10, BPF_REG_7, CKEY + 16);
  STX (p, BPF_B, BPF_REG_10, BPF_REG_8, CKEY + 18);
  ld_map (p, BPF_REG_1, p->cnt);
  MOV_REG (p, BPF_REG_2, BPF_REG_10);
  ALU_IMM (p, BPF_ADD, BPF_REG_2, CKEY);
  CALL (p, BPF_FUNC_map_lookup_elem);
  jump (p, BPF_JEQ, BPF_REG_0, 0, L_INSERT);
  MOV_IMM (p, BPF_REG_1, 1);
  emit (p, BPF_STX | BPF_DW | BPF_XADD, BPF_REG_0, BPF_REG_1, 0, 0);
  jump (p, BPF_JA, 0, 0, L_DENY);
  label (p, L_INSERT);
  ST (p, BPF_DW, BPF_REG_10, CVAL, 1);
  ld_map (p, BPF_REG_1, p->cnt);
  MOV_REG (p, BPF_REG_2, BPF_REG_10);
  ALU_IMM (p, BPF_ADD, BPF_REG_2, CKEY);
  MOV_REG (p, BPF_REG_3, BPF_REG_10);
  ALU_IMM (p, BPF_ADD, BPF_REG_3, CVAL);
  MOV_IMM (p, BPF_REG_4, BPF_NOEXIST);
  CALL (p, BPF_FUNC_map_update_elem);
  label (p, L_DENY);
  RET (p, 0);
  label (p, L_ALLOW);
  RET (p, 1);
}

static void
zero_ckey (struct prog *p)
{
  ST (p, BPF_DW, BPF_REG_10, CKEY, 0);
  ST (p, BPF_DW, BPF_REG_10, CKEY + 8, 0);
  ST (p, BPF_DW, BPF_REG_10, CKEY + 16, 0);
}

/* connect4/sendmsg4 (v6 false) or connect6/sendmsg6 (v6 true) */
static void
gen_sock_addr (struct prog *p, bool v6)
{
  MOV_REG (p, BPF_REG_6, BPF_REG_1);
  zero_ckey (p);
  LDX (p, BPF_W, BPF_REG_7, BPF_REG_6, offsetof (struct bpf_sock_addr, user_port));
  LDX (p, BPF_W, BPF_REG_8, BPF_REG_6, offsetof (struct bpf_sock_addr, protocol));
  if (!v6)
    {
      LDX (p, BPF_W, BPF_REG_2, BPF_REG_6, offsetof (struct bpf_sock_addr, user_ip4));
      STX (p, BPF_W, BPF_REG_10, BPF_REG_2, KEY4 + 4);
      STX (p, BPF_W, BPF_REG_10, BPF_REG_2, CKEY);
      ST (p, BPF_W, BPF_REG_10, KEY4, 32);
      ST (p, BPF_B, BPF_REG_10, CKEY + 19, 4);
      decide (p, 4, L_DECIDED4, BPF_REG_7);
      count_and_return (p);
      return;
    }
  for (int i = 0; i < 4; i++)
    {
      LDX (p, BPF_W, BPF_REG_2, BPF_REG_6,
           (int16_t) (offsetof (struct bpf_sock_addr, user_ip6) + 4 * i));
      STX (p, BPF_W, BPF_REG_10, BPF_REG_2, (int16_t) (KEY6 + 4 + 4 * i));
      STX (p, BPF_W, BPF_REG_10, BPF_REG_2, (int16_t) (CKEY + 4 * i));
    }
  ST (p, BPF_W, BPF_REG_10, KEY6, 128);
  ST (p, BPF_B, BPF_REG_10, CKEY + 19, 6);
  decide6 (p);
  count_and_return (p);
}

/* r1 = ctx, r2 = offset, r3 = buffer, r4 = len: bpf_skb_load_bytes */
static void
load_bytes (struct prog *p, int off_reg_or_imm, bool imm, int buf, int len)
{
  MOV_REG (p, BPF_REG_1, BPF_REG_6);
  if (imm)
    MOV_IMM (p, BPF_REG_2, off_reg_or_imm);
  MOV_REG (p, BPF_REG_3, BPF_REG_10);
  ALU_IMM (p, BPF_ADD, BPF_REG_3, buf);
  MOV_IMM (p, BPF_REG_4, len);
  CALL (p, BPF_FUNC_skb_load_bytes);
}

static void
gen_skb (struct prog *p)
{
  MOV_REG (p, BPF_REG_6, BPF_REG_1);
  zero_ckey (p);
  MOV_IMM (p, BPF_REG_7, 0);
  LDX (p, BPF_W, BPF_REG_2, BPF_REG_6, offsetof (struct __sk_buff, protocol));
  jump (p, BPF_JEQ, BPF_REG_2, htons (0x0800), L_V4);
  jump (p, BPF_JEQ, BPF_REG_2, htons (0x86dd), L_V6);
  RET (p, 1);  /* not IP: nothing the policy speaks of */
  label (p, L_DROP);
  RET (p, 0);

  label (p, L_V4);
  load_bytes (p, 0, true, HDR, 20);
  jump (p, BPF_JNE, BPF_REG_0, 0, L_DROP);
  LDX (p, BPF_B, BPF_REG_8, BPF_REG_10, HDR + 9);
  LDX (p, BPF_W, BPF_REG_2, BPF_REG_10, HDR + 16);
  STX (p, BPF_W, BPF_REG_10, BPF_REG_2, KEY4 + 4);
  STX (p, BPF_W, BPF_REG_10, BPF_REG_2, CKEY);
  ST (p, BPF_W, BPF_REG_10, KEY4, 32);
  ST (p, BPF_B, BPF_REG_10, CKEY + 19, 4);
  jump (p, BPF_JEQ, BPF_REG_8, IPPROTO_TCP, L_P4);
  jump (p, BPF_JEQ, BPF_REG_8, IPPROTO_UDP, L_P4);
  jump (p, BPF_JA, 0, 0, L_D4);
  label (p, L_P4);
  /* a later fragment has no port: judged as portless */
  LDX (p, BPF_H, BPF_REG_2, BPF_REG_10, HDR + 6);
  ALU_IMM (p, BPF_AND, BPF_REG_2, htons (0x1fff));
  jump (p, BPF_JNE, BPF_REG_2, 0, L_D4);
  LDX (p, BPF_B, BPF_REG_2, BPF_REG_10, HDR);
  ALU_IMM (p, BPF_AND, BPF_REG_2, 0xf);
  ALU_IMM (p, BPF_LSH, BPF_REG_2, 2);
  ALU_IMM (p, BPF_ADD, BPF_REG_2, 2);
  load_bytes (p, 0, false, PBUF, 2);
  jump (p, BPF_JNE, BPF_REG_0, 0, L_D4);
  LDX (p, BPF_H, BPF_REG_7, BPF_REG_10, PBUF);
  label (p, L_D4);
  decide (p, 4, L_DECIDED4, BPF_REG_7);
  jump (p, BPF_JA, 0, 0, L_COUNT);

  label (p, L_V6);
  load_bytes (p, 0, true, HDR, 40);
  jump (p, BPF_JNE, BPF_REG_0, 0, L_DROP);
  LDX (p, BPF_B, BPF_REG_8, BPF_REG_10, HDR + 6);
  for (int i = 0; i < 4; i++)
    {
      LDX (p, BPF_W, BPF_REG_2, BPF_REG_10, (int16_t) (HDR + 24 + 4 * i));
      STX (p, BPF_W, BPF_REG_10, BPF_REG_2, (int16_t) (KEY6 + 4 + 4 * i));
      STX (p, BPF_W, BPF_REG_10, BPF_REG_2, (int16_t) (CKEY + 4 * i));
    }
  ST (p, BPF_W, BPF_REG_10, KEY6, 128);
  ST (p, BPF_B, BPF_REG_10, CKEY + 19, 6);
  jump (p, BPF_JEQ, BPF_REG_8, IPPROTO_TCP, L_P6);
  jump (p, BPF_JEQ, BPF_REG_8, IPPROTO_UDP, L_P6);
  jump (p, BPF_JEQ, BPF_REG_8, IPPROTO_ICMPV6, L_NDP);
  jump (p, BPF_JA, 0, 0, L_D6);
  label (p, L_NDP);
  /* neighbour discovery (types 133-137) keeps IPv6 working on the link;
   * it carries no payload to a service */
  load_bytes (p, 40, true, PBUF, 1);
  jump (p, BPF_JNE, BPF_REG_0, 0, L_D6);
  LDX (p, BPF_B, BPF_REG_2, BPF_REG_10, PBUF);
  jump (p, BPF_JLT, BPF_REG_2, 133, L_D6);
  jump (p, BPF_JGT, BPF_REG_2, 137, L_D6);
  RET (p, 1);
  label (p, L_P6);
  load_bytes (p, 42, true, PBUF, 2);
  jump (p, BPF_JNE, BPF_REG_0, 0, L_D6);
  LDX (p, BPF_H, BPF_REG_7, BPF_REG_10, PBUF);
  label (p, L_D6);
  decide6 (p);
  count_and_return (p);
}

/* Resolve the jumps (every label is defined once per program, after its
 * uses: all jumps go forward). */
static void
resolve (struct prog *p)
{
  for (size_t i = 0; i < p->n_fix; i++)
    p->v[p->fix_at[i]].off = (int16_t) ((long) p->label_at[p->fix_label[i]]
                                        - (long) p->fix_at[i] - 1);
}

static int
prog_load (struct prog *p, uint32_t type, uint32_t attach, const char *what, brig_error *err)
{
  char log[8192] = "";
  union bpf_attr a;
  int fd;

  resolve (p);
  memset (&a, 0, sizeof a);
  a.prog_type = type;
  a.expected_attach_type = attach;
  a.insns = (uint64_t) (uintptr_t) p->v;
  a.insn_cnt = (uint32_t) p->n;
  a.license = (uint64_t) (uintptr_t) "GPL";
  snprintf (a.prog_name, sizeof a.prog_name, "brig_eg_%s", what);
  /* without the verifier log first: writing it costs more than the check */
  fd = brig_bpf (BPF_PROG_LOAD, &a);
  if (fd < 0)
    {
      int e = errno;
      a.log_buf = (uint64_t) (uintptr_t) log;
      a.log_size = sizeof log;
      a.log_level = 1;
      int again = brig_bpf (BPF_PROG_LOAD, &a);
      if (again >= 0)
        close (again);
      if (again >= 0 || errno == ENOSPC)
        log[0] = '\0';
      brig_debug ("egress %s verifier: %s", what, log);
      return brig_error_set (err, e, "annotation " BRIG_EGRESS_KEY ": load the %s BPF program", what);
    }
  return fd;
}

/* ---- attach ---- */

struct attach_spec {
  const char *what;
  uint32_t type, attach;
};

static const struct attach_spec progs[] = {
  { "connect4", BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_INET4_CONNECT },
  { "connect6", BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_INET6_CONNECT },
  { "sendmsg4", BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_UDP4_SENDMSG },
  { "sendmsg6", BPF_PROG_TYPE_CGROUP_SOCK_ADDR, BPF_CGROUP_UDP6_SENDMSG },
  { "egress", BPF_PROG_TYPE_CGROUP_SKB, BPF_CGROUP_INET_EGRESS },
};

int
brig_egress_apply (const brig_egress_policy *pol, const char *dir, brig_error *err)
{
  _cleanup_close_ int map4 = -1, map6 = -1, cnt = -1, cgfd = -1;
  int r;

  if (dir == NULL)
    return brig_error_say (err, EOPNOTSUPP, "annotation " BRIG_EGRESS_KEY ": needs a cgroup v2 directory "
                           "for the container (no cgroup2 mounted here, or cgroups disabled)");
  cgfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (cgfd < 0)
    return brig_error_errno (err, "annotation " BRIG_EGRESS_KEY ": open %s", dir);
  if ((map4 = trie_create (pol, AF_INET, err)) < 0)
    return map4;
  if ((map6 = trie_create (pol, AF_INET6, err)) < 0)
    return map6;
  /* Not preallocated: 4096 entries are ~385 KiB per container (measured),
   * most of an idle pool member's memory, for counts most never make. An
   * entry is allocated at a destination's first denial; one the kernel
   * cannot allocate loses that count, never the denial. */
  cnt = map_create (BPF_MAP_TYPE_HASH, sizeof (struct cnt_key), sizeof (uint64_t), CNT_MAX,
                    BPF_F_NO_PREALLOC, BRIG_EGRESS_CNT_MAP_NAME, err);
  if (cnt < 0)
    return cnt;
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (progs); i++)
    {
      struct prog p = { .map4 = map4, .map6 = map6, .cnt = cnt };
      _cleanup_close_ int fd = -1;
      union bpf_attr a;

      if (progs[i].type == BPF_PROG_TYPE_CGROUP_SKB)
        gen_skb (&p);
      else
        gen_sock_addr (&p, progs[i].attach == BPF_CGROUP_INET6_CONNECT
                             || progs[i].attach == BPF_CGROUP_UDP6_SENDMSG);
      fd = prog_load (&p, progs[i].type, progs[i].attach, progs[i].what, err);
      free (p.v);
      if (fd < 0)
        return fd;
      /* see the top of this file for why ALLOW_MULTI */
      memset (&a, 0, sizeof a);
      a.target_fd = (uint32_t) cgfd;
      a.attach_bpf_fd = (uint32_t) fd;
      a.attach_type = progs[i].attach;
      a.attach_flags = BPF_F_ALLOW_MULTI;
      if (brig_bpf (BPF_PROG_ATTACH, &a) < 0)
        {
          r = brig_error_errno (err, "annotation " BRIG_EGRESS_KEY ": attach the %s BPF program to %s",
                                progs[i].what, dir);
          return r;
        }
    }
  return 0;
}
