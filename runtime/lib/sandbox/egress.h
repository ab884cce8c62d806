/* The egress policy of a container (run.brig.egress annotations): which
 * destinations its sockets may reach, enforced by cgroup BPF programs on
 * its cgroup v2 directory (docs/sandbox.md). Parsed and resolved before
 * create touches the system; applied before the init is cloned into the
 * cgroup; read back by `state` and `events --stats`. */
#ifndef BRIG_SANDBOX_EGRESS_H
#define BRIG_SANDBOX_EGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "ocispec.h"

#define BRIG_EGRESS_KEY "run.brig.egress"
#define BRIG_EGRESS_ALLOW_KEY "run.brig.egress.allow"
#define BRIG_EGRESS_DENY_KEY "run.brig.egress.deny"
#define BRIG_EGRESS_HOSTNET_KEY "run.brig.egress.host-network"

enum brig_egress_mode { BRIG_EGRESS_NONE, BRIG_EGRESS_PUBLIC, BRIG_EGRESS_ALLOWLIST };

/* Who asked for a rule; on equal prefix length the higher rank wins. */
enum brig_egress_source { BRIG_EGRESS_BUILTIN = 1, BRIG_EGRESS_USER_ALLOW, BRIG_EGRESS_USER_DENY };

struct brig_egress_rule {
  int family;              /* AF_INET or AF_INET6 */
  uint8_t addr[16];        /* network order, host bits cleared */
  unsigned prefix;         /* bits */
  uint16_t port;           /* 0: every port (and ICMP/raw) */
  bool allow;
  enum brig_egress_source source;
};

/* One address entry as written: family, address (network order), prefix,
 * port (0: every port). */
struct brig_egress_cidr {
  int family;
  uint8_t addr[16];
  unsigned prefix;
  uint16_t port;
};

/* Parse one entry of key (run.brig.egress.allow or .deny, or a policy's
 * list): CIDR, CIDR:port or [IPv6-CIDR]:port fills *c and returns 0;
 * hostname[:port] (allow only) returns 1 with the name in host (size
 * bytes) and its port in c->port; anything else -EINVAL naming key. */
int brig_egress_entry_parse (const char *key, const char *entry, bool allow,
                             struct brig_egress_cidr *c, char *host, size_t size,
                             brig_error *err);

typedef struct brig_egress_policy {
  enum brig_egress_mode mode;
  bool own_netns;                   /* 127/8 and ::1 are the container's own */
  struct brig_egress_rule *rules;   /* as configured (IPv4 not yet mapped) */
  size_t n_rules;
  oci_map *pinned;                  /* hostname -> "addr,addr" resolved at create */
  int64_t dns_deadline;             /* when every DNS lookup of the policy must end
                                       (0: none made yet; dns.h) */
  const oci_map *use_pinned;        /* brig_egress_parse_pinned: names found here */
} brig_egress_policy;

/* True when annotations hold any run.brig.egress key (one pass, no
 * allocation: the plain create path pays only this). */
bool brig_egress_requested (const oci_map *annotations);

/* Parse and check the run.brig.egress* annotations, resolving hostnames
 * from /etc/hosts, then DNS (dns.h); own_netns says whether the network
 * namespace is the container's own (false: the host's, refused unless
 * run.brig.egress.host-network=true). Entries and answers in a translated
 * IPv6 form (egress_addr.h) become rules for the IPv4 they stand for.
 * Errors name the annotation. */
int brig_egress_parse (const oci_map *annotations, bool own_netns, brig_egress_policy **out,
                       brig_error *err);

/* brig_egress_parse with every hostname taken from pinned (name ->
 * "addr,addr", as state.json's egress.pinned), nothing resolved: the
 * policy as create applied it (reset). A name pinned does not hold is an
 * error. */
int brig_egress_parse_pinned (const oci_map *annotations, bool own_netns, const oci_map *pinned,
                              brig_egress_policy **out, brig_error *err);

/* The largest trie a container's programs take (per family): a pool claim
 * may give a member a policy larger than the pool's (egress_swap.c). */
#define BRIG_EGRESS_TRIE_MAX 1024

/* Replace the rules in the tries of the programs attached to the cgroup v2
 * directory dir with p's (pool claim: nothing of the container runs yet).
 * -ENOENT naming dir when no programs are attached there. */
int brig_egress_swap (const char *dir, const brig_egress_policy *p, brig_error *err);

/* Whether the tries attached to dir hold exactly p's rules: 1 yes, 0 no
 * (*detail says what differs), -errno when they could not be read
 * (*detail says why). */
int brig_egress_verify (const char *dir, const brig_egress_policy *p, char **detail);

/* The namespaces the capability judgement needs (egress_caps.c). */
struct brig_egress_ns {
  bool own_userns;   /* a user namespace that is not the host's (by inode) */
  bool own_pidns;    /* a pid namespace brig made for the container */
  bool owns_netns;   /* its user namespace reaches its network namespace
                        (brig_egress_userns_owns) */
};

/* Refuse capabilities that could bypass or remove the policy: CAP_NET_RAW
 * always; CAP_NET_ADMIN, CAP_SYS_ADMIN, CAP_BPF, CAP_SYS_MODULE without a
 * user namespace of the container's own, CAP_NET_ADMIN also with one that
 * owns the network namespace; CAP_SYS_PTRACE without one or in a pid
 * namespace not its own. Every set counts; a name counts as the
 * capability it names. field says where they came from in errors
 * ("process.capabilities", "exec --cap"). The one judgement of create and
 * exec. */
int brig_egress_check_caps (const oci_capabilities *c, const struct brig_egress_ns *ns,
                            const char *field, brig_error *err);

/* exec into a container with a policy: brig_egress_check_caps on the new
 * process's capabilities, the user namespace judged by the init's (pid
 * init), the pid namespace by the state's new_pidns. */
int brig_egress_check_exec (pid_t init, bool new_pidns, const oci_capabilities *c,
                            const char *field, brig_error *err);

/* Whether the user namespace userns (an fd) owns the namespace ns (an fd),
 * or owns a user namespace that owns it, and so on: where its namespaced
 * capabilities hold. True when that cannot be told. */
bool brig_egress_userns_owns (int userns, int ns);

/* Empty the denial counters of the programs attached to dir (reset: the
 * next tenant starts from none). 0 when there is no policy there. */
int brig_egress_reset_counters (const char *dir, brig_error *err);

/* Load the programs and maps and attach them to the cgroup v2 directory
 * dir (must be empty of processes). NULL dir: no cgroup v2 here. */
int brig_egress_apply (const brig_egress_policy *p, const char *dir, brig_error *err);

/* What was applied, for state.json and `brig state` (caller frees with
 * oci_free (&oci_egress_state_type, ...)). */
oci_egress_state *brig_egress_state (const brig_egress_policy *p, const char *dir);

/* One counted denial: destination, port (0 for ICMP/raw), IP protocol. */
struct brig_egress_denial {
  char addr[64];
  uint16_t port;
  uint8_t proto;
  uint64_t count;
};

/* The denials counted so far by the programs attached to dir (malloc'd
 * array): 1 when a policy is attached, 0 when none is, or -errno. */
int brig_egress_denials (const char *dir, struct brig_egress_denial **out, size_t *n,
                         brig_error *err);

/* Free a policy. */
void brig_egress_policy_free (brig_egress_policy *p);

#endif
