/* Internals shared by the cgroup managers (cgroup*.c). Nothing outside
 * runtime/lib/cgroup*.c and the unit tests includes this. */
#ifndef BRIG_CGROUP_INTERNAL_H
#define BRIG_CGROUP_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "cgroup/cgroup.h"
#include "error.h"
#include "ocispec.h"

/* The host's cgroup layout. */
struct brig_cgroup_host {
  enum brig_cgroup_mode mode;
  struct brig_cgroup_hier *v1;
  size_t n_v1;
  char *unified;      /* cgroup2 mountpoint or NULL */
};

/* One directory of a container's cgroup: a v1 hierarchy or the v2 one. */
struct brig_cgroup_dir {
  char *controllers;  /* v1 controllers of the hierarchy; NULL for cgroup2 */
  char *mountpoint;   /* the hierarchy's mountpoint */
  char *path;         /* full path: mountpoint + cgroup path */
  bool made;          /* create made it (delete removes only those) */
  bool clone_children; /* the v1 mount has the clone_children option */
};

/* A process found in a shared cgroup at create: never signalled. */
struct brig_cgroup_proc {
  pid_t pid;
  unsigned long long start_time;  /* /proc/PID/stat field 22 */
};

struct brig_cgroup_ops {
  const char *name;
  /* Resolve the path and decide which directories to make (nothing is
   * made yet, so that the caller can record them first); make makes them. */
  int (*create) (brig_cgroup *cg, const struct brig_cgroup_config *cfg, brig_error *err);
  int (*make) (brig_cgroup *cg, const struct brig_cgroup_config *cfg, brig_error *err);
  int (*enter) (brig_cgroup *cg, pid_t pid, brig_error *err);
  int (*destroy) (brig_cgroup *cg, bool kill, brig_error *err);
  int (*freeze) (brig_cgroup *cg, bool freeze, brig_error *err);
  int (*is_frozen) (brig_cgroup *cg);
  int (*update) (brig_cgroup *cg, const oci_resources *res, brig_error *err);
  void (*free) (brig_cgroup *cg);
};

struct brig_cgroup {
  const struct brig_cgroup_ops *ops;
  enum brig_cgroup_mode mode;
  char *path;                    /* "/brig/ID": the same in every hierarchy */
  struct brig_cgroup_dir *dirs;  /* v1 hierarchies first, then cgroup2 */
  size_t n_dirs;
  /* Hierarchies the container is not in (cgroup/scope.c): create left them
   * out, update may move them into dirs. */
  struct brig_cgroup_dir *skipped;
  size_t n_skipped;
  const char *unified;           /* path of the cgroup2 dir (in dirs) or NULL */
  bool rootless;
  bool shared;                   /* run.brig.cgroup.shared: others' processes live here */
  struct brig_cgroup_proc *foreign; /* the processes found there at create */
  size_t n_foreign;
  /* The record says "marked": create made its directories with
   * BRIG_CGROUP_LEAF_MODE, so a "made" line of a create that never got to
   * its init line counts only for a directory carrying the mark. */
  bool marked;
  /* Loaded from such a record without its init line: a marked directory
   * may be another brig container's found at the same path (create was
   * killed before it could say so), so no process there is signalled,
   * and one still busy is left in place. */
  bool no_kill;
  int clone_fd;                  /* brig_cgroup_clone_fd, or -1 */
  bool self_join;                /* brig_cgroup_self_open: clone_fd on hybrid too */
  /* systemd manager state (cgroup/systemd.c). */
  char *unit;                    /* "brig-ID.scope" */
  char *slice;                   /* "system.slice" */
  oci_resources *pending;        /* resources to apply once the scope exists */
  const oci_map *annotations;    /* org.systemd.property.* (until enter) */
  void *bus;                     /* sd_bus, opened on first use */
};

extern const struct brig_cgroup_ops brig_cgroup_fs_ops;
extern const struct brig_cgroup_ops brig_cgroup_disabled_ops;
#ifdef HAVE_SYSTEMD
extern const struct brig_cgroup_ops brig_cgroup_systemd_ops;
#endif

/* The mode of the container's own cgroup directory (the leaf brig makes):
 * the sticky bit marks it as brig's. The record of a create lists every
 * directory as made before the first mkdir (no stat per hierarchy: mkdir's
 * EEXIST tells a found one, and the record is rewritten at once); a create
 * killed in between leaves "made" lines for directories it may have found,
 * and delete then removes only those with the mark (cgroup/owner.c). The
 * bit means nothing else to cgroupfs, and to root nothing at all. */
#define BRIG_CGROUP_LEAF_MODE (S_ISVTX | 0755)

/* ---- host detection (cgroup/host.c) ---- */

/* The host's layout, detected once from /proc/self/mountinfo. */
const struct brig_cgroup_host *brig_cgroup_host_get (void);

/* Parse mountinfo text into h (pure; unit-tested). */
int brig_cgroup_parse_mountinfo (const char *text, struct brig_cgroup_host *h);
void brig_cgroup_host_clear (struct brig_cgroup_host *h);

/* Own cgroup of this process, from /proc/self/cgroup text: the cgroup2 line
 * ("0::/x") when present, else the name=systemd line, else the first one.
 * Returns a malloc'd path or NULL. */
char *brig_cgroup_own_path (const char *proc_self_cgroup);

/* The cgroupfs path for cgroupsPath: "/a/b" stays, "a/b" goes below own
 * (the runtime's own cgroup), empty gives "/brig/ID". Rejects "..". */
int brig_cgroup_resolve_path (const char *cgroups_path, const char *own, const char *id,
                              char **out, brig_error *err);

/* Fill cg->dirs from the host layout for cg->path. */
void brig_cgroup_fill_dirs (brig_cgroup *cg, const struct brig_cgroup_host *h);

/* The directory of the v1 hierarchy carrying controller, or NULL. */
const char *brig_cgroup_v1_dir (const brig_cgroup *cg, const char *controller);

/* True when the comma-separated list has the item. */
bool brig_cgroup_list_has (const char *list, const char *item);

/* ---- file helpers (cgroup.c) ---- */

/* Write value to dir/file; the error reads: write memory.max = "abc": Invalid argument. */
int brig_cgroup_write (const char *dir, const char *file, const char *value, brig_error *err);
int brig_cgroup_writef (const char *dir, const char *file, brig_error *err, const char *fmt, ...)
  __attribute__ ((format (printf, 4, 5)));

/* Read dir/file (malloc'd, trailing newline removed); 0 or -errno (no message). */
int brig_cgroup_read (const char *dir, const char *file, char **out);

/* Read an unsigned number from dir/file; "max" reads as UINT64_MAX. */
int brig_cgroup_read_u64 (const char *dir, const char *file, uint64_t *out);

/* Value of "key N" in a flat keyed file (cpu.stat, memory.stat, cgroup.events). */
int brig_cgroup_keyed_u64 (const char *text, const char *key, uint64_t *out);

/* Every pid in dir and its descendants (cgroup.procs). */
int brig_cgroup_read_pids (const char *dir, pid_t **pids, size_t *n, brig_error *err);

/* rmdir dir and its descendants, depth first; retries EBUSY for a bounded
 * time, calling again(cg) between tries when given. 0, or -errno. */
int brig_cgroup_rmdir_tree (const char *dir, brig_error *err);
/* rmdir dir alone (never a child cgroup), retrying EBUSY as above. */
int brig_cgroup_rmdir_leaf (const char *dir, brig_error *err);

/* brig_cgroup_freeze_file of a cgroup with a backend: the v1 freezer.state,
 * else the v2 cgroup.freeze, or NULL (malloc'd). */
char *brig_cgroup_dirs_freeze_file (const brig_cgroup *cg);

/* ---- ownership (cgroup/owner.c) ---- */

/* Fill cg->dirs for cg->path and mark every directory as one create makes
 * (no stat: brig_cgroup_found corrects it when mkdir finds one). */
int brig_cgroup_plan (brig_cgroup *cg, const struct brig_cgroup_config *cfg, brig_error *err);

/* mkdir found dirs[i]: brig did not make it. It must not be frozen, and
 * must hold no process unless shared (whose processes are then noted as
 * foreign). The caller rewrites the record before anything else. */
int brig_cgroup_found (brig_cgroup *cg, size_t i, bool shared, brig_error *err);

/* Every live process of the cgroup in any of its hierarchies, without the
 * foreign ones; sorted, malloc'd. */
int brig_cgroup_own_pids (brig_cgroup *cg, pid_t **pids, size_t *n, brig_error *err);

/* brig_cgroup_kill_all for a cgroup with a backend (the backends' destroy
 * uses it; the dispatcher adds the check for the disabled manager). */
int brig_cgroup_signal_own (brig_cgroup *cg, int sig, brig_error *err);

/* ---- which hierarchies a container is in (cgroup/scope.c) ---- */

/* True when a hierarchy with these v1 controllers may be left out of a
 * container that does not use it (NULL, the cgroup2 hierarchy of a hybrid
 * host, never is: only a record of an older brig leaves it out). Pure;
 * unit-tested. */
bool brig_cgroup_dir_optional (const char *controllers);

/* True when res sets a value of a hierarchy with these controllers (NULL:
 * the cgroup2 one of a hybrid host, whose v1 side has hugetlb or not).
 * Pure; unit-tested. */
bool brig_cgroup_dir_used (const char *controllers, const oci_resources *res, bool v1_hugetlb);

/* Move the optional hierarchies cfg does not need from cg->dirs to
 * cg->skipped (cgroupfs manager, v1 and hybrid hosts). */
void brig_cgroup_scope (brig_cgroup *cg, const struct brig_cgroup_config *cfg);

/* Move skipped[k] into dirs (v1 ones before the cgroup2 one). */
void brig_cgroup_unskip (brig_cgroup *cg, size_t k);

/* Move dirs[i] to skipped. */
void brig_cgroup_skip (brig_cgroup *cg, size_t i);

/* ---- the cgroupfs manager (cgroup/fs.c); the systemd one builds on it ---- */

/* mkdir cg->path in every hierarchy and apply res (NULL: defaults only),
 * which the caller has validated; on failure removes what it created.
 * With cfg (the cgroupfs manager's create) a directory mkdir finds is
 * checked (brig_cgroup_found) and the record rewritten (cfg->before_make). */
int brig_cgroup_fs_setup (brig_cgroup *cg, const oci_resources *res,
                          const struct brig_cgroup_config *cfg, brig_error *err);
int brig_cgroup_fs_apply (brig_cgroup *cg, const oci_resources *res, bool update, brig_error *err);
int brig_cgroup_fs_enter (brig_cgroup *cg, pid_t pid, brig_error *err);
int brig_cgroup_fs_destroy (brig_cgroup *cg, bool kill, brig_error *err);
/* After the directories are removed: take back what brig gave their
 * ancestors for the container (a hybrid host's cgroup2 controllers, v1
 * realtime budgets); a few getxattr calls when it gave nothing. */
void brig_cgroup_fs_release (brig_cgroup *cg);
int brig_cgroup_fs_freeze (brig_cgroup *cg, bool freeze, brig_error *err);
int brig_cgroup_fs_is_frozen (brig_cgroup *cg);

/* ---- cgroupfs v1 / v2 (cgroup/v1.c, cgroup/v2.c) ---- */

/* The usual case of brig_cgroup_v1_mkdir: one mkdir makes the cgroup
 * because its parent exists (cpuset: and has its cpus and mems, which are
 * copied down; by the kernel when the hierarchy is mounted with
 * clone_children). 1 when it did (*created: the new dir), 0 when the
 * caller must take the slow path, or -errno (*created may be set: remove
 * it). */
int brig_cgroup_v1_mkdir_leaf (const char *mountpoint, const char *controllers, const char *path,
                               bool clone_children, char **created, brig_error *err);
/* mkdir the cgroup in one v1 hierarchy (copying cpuset.cpus/mems down). */
int brig_cgroup_v1_mkdir (const char *mountpoint, const char *controllers, const char *path,
                          brig_error *err);
/* brig_cgroup_v1_mkdir, noting the first level it made (*created, or NULL
 * when every level existed): what a failed create removes again. */
int brig_cgroup_v1_mkdir_walk (const char *mountpoint, const char *controllers, const char *path,
                               char **created, brig_error *err);
int brig_cgroup_v1_freeze (const char *freezer_dir, bool freeze, brig_error *err);

/* mkdir the cgroup in the v2 hierarchy, enabling controllers in the
 * ancestors' cgroup.subtree_control (all available ones when all is true,
 * else only those listed in want, comma separated). */
int brig_cgroup_v2_mkdir (const char *mountpoint, const char *path, bool all, const char *want,
                          brig_error *err);
/* brig_cgroup_v2_mkdir, noting the first level it made (*created, or NULL). */
int brig_cgroup_v2_mkdir_walk (const char *mountpoint, const char *path, bool all, const char *want,
                               char **created, brig_error *err);
int brig_cgroup_v2_enable (const char *mountpoint, const char *path, const char *want,
                           brig_error *err);
int brig_cgroup_v2_freeze (const char *dir, bool freeze, brig_error *err);

/* ---- a hybrid host's cgroup2 controllers (cgroup/delegate.c) ---- */

/* flock (exclusive) the hierarchy at mountpoint against another brig
 * enabling or taking back controllers, waiting BRIG_CGROUP_V2_LOCK_MS at
 * most: the fd to close, or -errno (-EWOULDBLOCK: held by someone else). */
#define BRIG_CGROUP_V2_LOCK_MS 5000
int brig_cgroup_v2_lock (const char *mountpoint);
/* "+ctl" in dir's cgroup.subtree_control, noting on dir that brig did. */
int brig_cgroup_v2_enable_marked (const char *dir, const char *ctl, brig_error *err);
/* Mark a container's leaf as needing ctl from its ancestors. */
void brig_cgroup_v2_need (const char *leaf, const char *ctl);
/* Once the container's leaf at path is gone (or left as found): take back
 * what brig enabled in its ancestors and nothing below them needs. */
void brig_cgroup_v2_release (const char *mountpoint, const char *path);
/* Write cgroup.kill; -ENOENT when the kernel lacks it. */
int brig_cgroup_v2_kill (const char *dir, brig_error *err);

/* ---- resources ---- */

/* Check the resources against the mode before touching anything. */
int brig_cgroup_resources_validate (const brig_cgroup *cg, const oci_resources *r,
                                    brig_error *err);
int brig_cgroup_v1_apply (brig_cgroup *cg, const oci_resources *r, bool update, brig_error *err);
/* The share of its period (percent) a container's v1 cpu cgroup gets as its
 * realtime budget when process.scheduler asks for SCHED_FIFO or SCHED_RR
 * and linux.resources.cpu gives no realtimeRuntime. */
#define BRIG_CGROUP_SCHED_RT_SHARE 10
/* ---- v1 realtime budgets (cgroup/rt.c) ---- */

/* Give the ancestors of d (below the hierarchy's root) room for a container
 * budget of runtime per want_period (0: d's period): a budget where there
 * is none, or more for one brig gave (force: on top of its whole budget,
 * after the container's write was refused); what names the request in
 * errors, *blocker_out the nearest ancestor with a budget of its own (or
 * the root). */
int brig_cgroup_v1_rt_give (const struct brig_cgroup_dir *d, int64_t runtime, uint64_t want_period,
                            bool force, const char *what, char **blocker_out, brig_error *err);
/* With realtime group scheduling (v1 cpu.rt_runtime_us), the kernel lets
 * no SCHED_FIFO/SCHED_RR task into a cgroup without a realtime budget: give
 * the container's one BRIG_CGROUP_SCHED_RT_SHARE of its period, from its
 * parents as for realtimeRuntime, unless res gives one (policy names the
 * policy in errors). 0 when there is nothing to do. */
int brig_cgroup_v1_rt_for_sched (brig_cgroup *cg, const oci_resources *res, const char *policy,
                                 brig_error *err);
/* After delete: shrink the budgets brig gave the container's ancestors to
 * what their children still hold (one getxattr per ancestor otherwise). */
void brig_cgroup_v1_rt_release (brig_cgroup *cg);
int brig_cgroup_v2_apply (brig_cgroup *cg, const char *dir, const oci_resources *r, bool update,
                          brig_error *err);
/* rdma.max lines for resources.rdma (same format on v1 and v2). */
int brig_cgroup_apply_rdma (const char *dir, const oci_resources *r, brig_error *err);
/* hugetlb through cgroup2 on a hybrid host whose v1 lacks it. */
int brig_cgroup_v2_apply_hugetlb (const char *dir, const oci_resources *r, brig_error *err);

/* The eBPF device program for cgroup2 (cgroup/devices_bpf.c): build the
 * instructions for rules (pure; unit-tested), and load + attach them. */
struct bpf_insn;
struct brig_dev_rule;
int brig_cgroup_devices_program (const struct brig_dev_rule *rules, size_t n_rules,
                                 struct bpf_insn **out, size_t *count);
int brig_cgroup_v2_apply_devices (brig_cgroup *cg, const char *dir, const oci_resources *r,
                                  brig_error *err);

/* ---- conversions (cgroup/convert.c; pure, unit-tested) ---- */

/* cpu.shares [2, 262144] -> cpu.weight [1, 10000]; 0 means unset. */
uint64_t brig_cgroup_shares_to_weight (uint64_t shares);
/* blkio.weight [10, 1000] -> io.weight [1, 10000]; 0 means unset. */
uint64_t brig_cgroup_blkio_to_io_weight (uint64_t weight);

/* The v2 memory.swap.max value for OCI memory.limit/swap (swap is
 * memory+swap in OCI). Writes "max" or a number into buf. 0, or -EINVAL
 * with a message when swap < limit. */
int brig_cgroup_v2_swap_value (bool has_limit, int64_t limit, bool has_swap, int64_t swap,
                               char *buf, size_t len, brig_error *err);

/* A number for a v2 "max"-able file: -1 (or any negative) gives "max". */
void brig_cgroup_max_value (int64_t v, char *buf, size_t len);

/* One device rule in the effective list (user rules + implicit allows). */
struct brig_dev_rule {
  bool allow;
  char type;        /* 'a', 'c' or 'b' */
  int64_t major;    /* -1 = any */
  int64_t minor;    /* -1 = any */
  unsigned access;  /* BRIG_DEV_READ | WRITE | MKNOD */
};
enum { BRIG_DEV_READ = 1, BRIG_DEV_WRITE = 2, BRIG_DEV_MKNOD = 4 };

/* Build the effective device rules: deny all, the user's resources.devices,
 * then allow rules for the default devices (mknod, null, zero, full, tty,
 * random, urandom, ptmx, pts, tun), as runc does; linux.devices adds none. */
int brig_cgroup_device_rules (const oci_resources *r, struct brig_dev_rule **out, size_t *n,
                              brig_error *err);
/* Format a rule for devices.allow / devices.deny: "c 1:3 rwm", "a *:* rwm". */
void brig_cgroup_device_rule_v1 (const struct brig_dev_rule *rule, char *buf, size_t len);

/* Parse a hugepage size ("2MB", "1GB", "64KB") into the kernel's file name
 * part ("2MB"); -EINVAL on garbage. */
int brig_cgroup_hugepage_name (const char *page_size, char *buf, size_t len, brig_error *err);

/* ---- systemd (cgroup/systemd.c) ---- */

/* Split "slice:prefix:name" (with defaults for empty parts) into the slice
 * and unit names and the resulting cgroup path. Pure; unit-tested. */
int brig_cgroup_systemd_names (const char *cgroups_path, const char *id, char **slice,
                               char **unit, char **path, brig_error *err);
/* "a-b-c.slice" -> "/a.slice/a-b.slice/a-b-c.slice" ("-.slice" -> ""). */
int brig_cgroup_systemd_slice_path (const char *slice, char **out, brig_error *err);

#endif
