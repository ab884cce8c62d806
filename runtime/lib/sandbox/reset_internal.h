/* Shared by brig reset's files (reset.c, reset_pin.c, reset_verify.c) and
 * create, which pins what a later reset reuses. Not part of libbrig's
 * interface. */
#ifndef BRIG_SANDBOX_RESET_INTERNAL_H
#define BRIG_SANDBOX_RESET_INTERNAL_H

#include <stdbool.h>
#include <sys/types.h>

#include "cgroup/cgroup.h"
#include "error.h"
#include "namespaces.h"
#include "ocispec.h"
#include "sandbox/reset.h"

/* The opt-in annotation: create pins what reset may reuse. */
#define BRIG_RESET_KEY "run.brig.reset"
/* In the state directory: the pinned network namespace (a bind mount of
 * /proc/PID/ns/net on a file) and the namespaces of the current init. */
#define BRIG_RESET_NETNS "netns"
#define BRIG_RESET_NSREC "reset.ns"
/* In the state directory: the pinned network namespace's description
 * (reset_netns_describe) taken when it was fresh. */
#define BRIG_RESET_NETNS_FRESH "netns.fresh"
/* The bound on memory usage right after a reset (the new init and the
 * kernel objects of its namespaces). */
#define BRIG_RESET_MEMORY_BOUND (UINT64_C (16) << 20)

/* In the state directory: killed inits not reaped yet ("PID START" lines),
 * the zombies pids.usage counts without scanning /proc (reset_zombies.c). */
#define BRIG_RESET_ZOMBIES "reset.zombies"
#define BRIG_RESET_ZOMBIES_MAX 64

/* Zombies charged to a container's cgroup, as the kernel shows them now. */
struct reset_zombies {
  size_t n;      /* how many there are (a scan may count more than z holds) */
  bool changed;  /* whether reset.zombies must be written again */
  struct {
    pid_t pid;
    unsigned long long start;
  } z[BRIG_RESET_ZOMBIES_MAX];
};

/* The zombies of reset.zombies and the old init that still are zombies
 * with their start time, charged to cgpath. */
void reset_zombies_load (int dirfd, const char *cgpath, pid_t old_pid,
                         unsigned long long old_start, struct reset_zombies *zs);

/* Every zombie on the host charged to cgpath (a /proc scan). */
void reset_zombies_scan (const char *cgpath, pid_t old_pid, unsigned long long old_start,
                         struct reset_zombies *zs);

/* Write reset.zombies for the next reset when it changed (best effort). */
void reset_zombies_save (int dirfd, const struct reset_zombies *zs);

/* One namespace of an init: its type and the nsfs device and inode. */
struct reset_ns {
  enum brig_ns_type type;
  dev_t dev;
  ino_t ino;
};

/* run.brig.reset: "true" or "false" (anything else refused by name);
 * *want is true also for any run.brig.rootfs.ephemeral, run.brig.egress or
 * run.brig.sandbox key. One pass over the annotations. */
int brig_reset_opt_in (const oci_map *a, bool *want, brig_error *err);

/* Whether a network namespace brig made for this config can be reused by
 * a reset: the tenant could not change it (docs/sandbox.md "Reset").
 * grants: the state directory whose exec grants count too (tenancy.h), or
 * -1 for none (create, and a reset after it cleared them). */
bool brig_reset_netns_reusable (const oci_config *cfg, const struct brig_ns_plan *ns,
                                int grants);

/* After the init exists (create, and reset for the new init): record the
 * namespaces brig made for it (ns->new_flags) and, with pin_netns and when
 * reusable, pin its network namespace in the state directory (kept when
 * one is pinned already). Failures only cost the reuse. */
void brig_reset_pin (int dirfd, const oci_config *cfg, const struct brig_ns_plan *ns,
                     pid_t pid, bool pin_netns);

/* The namespaces recorded by brig_reset_pin (malloc'd array). */
int brig_reset_ns_load (int dirfd, struct reset_ns **ns, size_t *n);

/* The namespaces of new_flags that pid is in (malloc'd array). */
int brig_reset_ns_of (pid_t pid, unsigned long new_flags, struct reset_ns **ns, size_t *n);

/* Append a check to rep (detail is taken, NULL when it held). */
void reset_check_add (struct brig_reset_report *rep, const char *name, bool ok, char *detail);

/* Sockets left in a network namespace, read from dir (".../net"); 0 with
 * *detail NULL when there is none. */
int reset_sockets (const char *dir, char **detail);

/* Entries in the TCP metrics cache of the calling thread's network
 * namespace (reset_netns.c); 0 or -errno. */
int reset_tcp_metrics (size_t *count);

/* IPv6 flow labels in the calling thread's network namespace (lingering
 * ones included); 0 or -errno. */
int reset_flowlabels (size_t *count);

/* The traffic counters of the calling thread's network namespace (its
 * interfaces' in /proc/net/dev, the SNMP ones in snmp, netstat, snmp6):
 * *detail names the first that is not 0 (NULL: none moved); 0 or -errno. */
int reset_netns_counters (char **detail);

/* The configuration of the calling thread's network namespace, one
 * sorted line per object (reset_netstate.c; malloc'd); 0 or -errno. */
int reset_netns_describe (char **text);

/* The first line fresh and now do not share, described (malloc'd), or
 * NULL when they are the same. */
char *reset_netns_diff (const char *fresh, const char *now);

/* Every check of a new init pid (after the respawn): mounts, layer,
 * tmpfs, ipc, mqueue, sockets, uts, rlimits, seccomp, usage. new_flags:
 * the namespaces that are brig's own (made new, or the pinned network
 * namespace); dirfd: the state directory (the disk layer); old_pid and
 * old_start: the old init (a zombie until its parent reaps it). */
void reset_verify_init (const oci_config *cfg, unsigned long new_flags, pid_t pid, int dirfd,
                        brig_cgroup *cg, pid_t old_pid, unsigned long long old_start,
                        struct brig_reset_report *rep);

#endif
