/* Cgroup managers: cgroupfs v1, v2, hybrid, systemd and disabled, behind one
 * interface. The mode is detected from the host; the manager and path used
 * are recorded in the container's state so later commands (delete --force
 * without --systemd-cgroup) find the same cgroup. */
#ifndef BRIG_CGROUP_H
#define BRIG_CGROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "ocispec.h"

typedef struct brig_cgroup brig_cgroup;

/* How the host mounts cgroups. */
enum brig_cgroup_mode {
  BRIG_CGROUP_NONE,    /* no cgroup filesystem mounted */
  BRIG_CGROUP_V1,      /* v1 controllers only */
  BRIG_CGROUP_HYBRID,  /* v1 controllers plus a cgroup2 mount (e.g. /sys/fs/cgroup/unified) */
  BRIG_CGROUP_V2,      /* cgroup2 only (the unified hierarchy) */
};

struct brig_cgroup_config {
  const char *id;                   /* container id */
  const char *cgroups_path;         /* linux.cgroupsPath, may be NULL */
  const oci_resources *resources;   /* linux.resources, may be NULL */
  bool systemd;                     /* --systemd-cgroup */
  bool rootless;
  const oci_map *annotations;       /* config annotations (systemd props) */
  /* Optional: force a manager ("cgroupfs", "systemd", "disabled"); NULL
   * chooses from systemd above and the host. */
  const char *manager;
  /* run.brig.cgroup.shared=true: an existing cgroup with processes may be
   * used; they are never signalled, frozen or removed by brig. */
  bool shared;
  /* The config has no mount of type "cgroup" (v1 hierarchies: brig's
   * /sys/fs/cgroup): only then may a v1 hierarchy it does not use be left
   * out, since its mount would show brig's own cgroup tree (docs/cgroups.md,
   * "Which hierarchies"). false (the default) joins all. */
  bool no_cgroup_mount;
  /* process.scheduler.policy when it is SCHED_FIFO or SCHED_RR (else NULL):
   * on v1 with realtime group scheduling the container's cpu cgroup gets a
   * realtime budget (brig_cgroup_v1_rt_for_sched). */
  const char *realtime_policy;
  /* Called once the cgroup is planned and before anything is made, with
   * brig_cgroup_record() to write down (may be NULL). */
  int (*before_make) (const brig_cgroup *cg, void *data, brig_error *err);
  void *before_make_data;
};

/* The annotation that lets a container share an existing cgroup. */
#define BRIG_CGROUP_SHARED_ANNOTATION "run.brig.cgroup.shared"

/* The ownership record of cg, as text (malloc'd): manager, path, the
 * directories create makes, whether it is shared and the processes found
 * there. Written before create makes anything, so that delete can undo a
 * create killed at any moment and never removes what brig did not make. */
char *brig_cgroup_record (const brig_cgroup *cg);

/* The files of the container's state directory (container/state.h) the
 * record is read with: the record itself, and config.json, whose presence
 * says the record's `made` lines are final. */
#define BRIG_CGROUP_RECORD_FILE "made"
#define BRIG_CGROUP_SETTLED_FILE "config.json"

/* Rebuild a handle from brig_cgroup_record() text (lines it does not know
 * are skipped). The manager and path are checked as brig_cgroup_load does;
 * only directories both recorded and derived from the path count as made.
 * dirfd: the container's state directory (its config.json says whether a
 * record without an init line is final), or -1. */
int brig_cgroup_load_record (const char *text, int dirfd, brig_cgroup **out, brig_error *err);

/* For the delete at the end of `run`: cg, the handle its create made, when
 * the ownership record in dirfd (BRIG_STATE_RECORD) is still exactly what
 * create wrote plus its "init PID START" line: one fstatat instead of
 * reading and parsing it (an update that joined a hierarchy appends a
 * line). Otherwise the record is loaded as brig_container_cgroup does.
 * *out is cg (taken over: do not free it) or a new handle; on error cg is
 * freed. */
int brig_cgroup_for_delete (brig_cgroup *cg, int dirfd, pid_t init_pid,
                            unsigned long long init_start, brig_cgroup **out, brig_error *err);

/* True when the handle shares its cgroup with processes brig did not start. */
bool brig_cgroup_is_shared (const brig_cgroup *cg);

/* Mark a handle loaded from the record as a rootless container's: what the
 * user may not write, or what create could not make, is skipped. */
void brig_cgroup_set_rootless (brig_cgroup *cg);

/* True when a process of the container (not a foreign one) is in any
 * hierarchy of the cgroup. */
bool brig_cgroup_busy (brig_cgroup *cg);

/* True when brig_cgroup_busy looks at something: the container's cgroup
 * directories are known and its processes its own (a create that did not
 * finish, or no directory at all, makes busy say false unseen). */
bool brig_cgroup_listable (const brig_cgroup *cg);

/* One rmdir per made cgroupfs directory and nothing else: true when every
 * one is gone (the usual delete, the pid namespace died with the init);
 * false when something is left (or another manager), for brig_cgroup_destroy. */
bool brig_cgroup_try_remove (brig_cgroup *cg);

/* Create the cgroup (all hierarchies) and apply resources. On failure
 * nothing is left behind. */
int brig_cgroup_create (const struct brig_cgroup_config *cfg, brig_cgroup **out,
                        brig_error *err);

/* An fd (O_RDONLY|O_DIRECTORY|O_CLOEXEC, owned by the handle: do not close
 * it; brig_cgroup_free does) of the v2 cgroup directory for clone3's
 * CLONE_INTO_CGROUP, or -1 when that cannot be used (v1, hybrid, systemd,
 * disabled); then call brig_cgroup_enter. */
int brig_cgroup_clone_fd (brig_cgroup *cg);

/* Move pid into the cgroup (every hierarchy). */
int brig_cgroup_enter (brig_cgroup *cg, pid_t pid, brig_error *err);

/* Move pid into the cgroup's memory accounting only (the v1 memory
 * hierarchy, else the v2 cgroup): for a short-lived helper whose writes the
 * container pays for (brig fork's copy). 0 without either. */
int brig_cgroup_enter_memory (brig_cgroup *cg, pid_t pid, brig_error *err);

/* A child joining its cgroup itself (cgroupfs manager, v1 or hybrid host,
 * not rootless): writing "0" to a v1 hierarchy's `tasks` file moves the
 * writing thread without the kernel's global cgroup_threadgroup_rwsem,
 * whose first write lock after an idle spell waits for an RCU grace period
 * (~10 ms here) that a `cgroup.procs` write pays; a child that is still
 * single-threaded moves whole. The cgroup2 hierarchy of a hybrid host is
 * joined with CLONE_INTO_CGROUP (brig_cgroup_clone_fd), which takes that
 * lock only for reading. docs/cgroups.md "Joining". */
#define BRIG_CGROUP_SELF_MAX 16
struct brig_cgroup_self {
  int fd[BRIG_CGROUP_SELF_MAX];            /* O_WRONLY|O_CLOEXEC `tasks` files; -1: the child opens */
  const char *dir[BRIG_CGROUP_SELF_MAX];   /* their directories (owned by the handle) */
  size_t n;
  /* brig_cgroup_self_prepare: the handle's cgroup2 directory fd
   * (brig_cgroup_clone_fd), which the child inherits and closes first */
  bool close_inherited;
  int inherited;
};

/* Open the `tasks` file of every v1 hierarchy the container is in and let
 * brig_cgroup_clone_fd return the cgroup2 directory of a hybrid host: true
 * when the child can join by itself (then use brig_cgroup_self_join in
 * it, after a clone into brig_cgroup_clone_fd when that is >= 0); false
 * (nothing open) when brig_cgroup_enter must place it. For a child that
 * cannot open them itself (a new user namespace, another mount namespace). */
bool brig_cgroup_self_open (brig_cgroup *cg, struct brig_cgroup_self *s);

/* brig_cgroup_self_open for the container init. With child_opens (the
 * child is cloned without a new user namespace) nothing is opened here:
 * the child opens each file itself in brig_cgroup_self_join. Either way
 * the child closes its copy of the cgroup2 directory fd there, first: a
 * host directory fd held until execve would let a process exec'd into a
 * created container walk from /proc/1/fd/N up to the host's root. */
bool brig_cgroup_self_prepare (brig_cgroup *cg, struct brig_cgroup_self *s, bool child_opens);

/* In the child, single-threaded: write "0" to each file (opening those
 * brig_cgroup_self_prepare left), then close them all; 0 or -errno with
 * the directory named in err. */
int brig_cgroup_self_join (struct brig_cgroup_self *s, brig_error *err);

/* In the child after brig_cgroup_self_join: true when it joined the v1
 * hierarchy mounted at mountpoint, with *rel its cgroup there (from the
 * mountpoint, as in the host's mount table): what /proc/self/cgroup would
 * say, without reading it. */
bool brig_cgroup_self_joined (const char *mountpoint, const char **rel);

/* Close what brig_cgroup_self_open opened (the parent, or the child once
 * it has joined), and stop brig_cgroup_clone_fd returning a hybrid
 * host's cgroup2 directory. */
void brig_cgroup_self_close (brig_cgroup *cg, struct brig_cgroup_self *s);

/* The manager name ("cgroupfs", "systemd", "disabled") and path to record in
 * the state; brig_cgroup_load rebuilds a handle from them. */
const char *brig_cgroup_manager_name (const brig_cgroup *cg);
const char *brig_cgroup_path (const brig_cgroup *cg);
/* The container's cgroup v2 directory (v2, or the unified hierarchy of a
 * hybrid host), or NULL without one (cgroup BPF programs attach there). */
const char *brig_cgroup_unified_dir (const brig_cgroup *cg);
/* The file that says whether the cgroup is frozen ("FROZEN" in a v1
 * freezer.state, "1" in a v2 cgroup.freeze), or NULL without one. */
char *brig_cgroup_freeze_file (brig_cgroup *cg);
/* 1 when that file says frozen, 0 when it does not or is gone, or -errno. */
int brig_cgroup_freeze_file_frozen (const char *file);
int brig_cgroup_load (const char *manager, const char *path, brig_cgroup **out,
                      brig_error *err);

/* Remove the cgroup: thaw, kill leftovers when kill is true (in every
 * hierarchy, never a foreign process) and wait for them, then remove the
 * directories create made (a handle from brig_cgroup_load: all of them),
 * retrying EBUSY. */
int brig_cgroup_destroy (brig_cgroup *cg, bool kill, brig_error *err);

/* Free the handle (does not touch the cgroup). */
void brig_cgroup_free (brig_cgroup *cg);

/* Every pid in the cgroup (host pids) but the foreign ones, malloc'd array. */
int brig_cgroup_pids (brig_cgroup *cg, pid_t **pids, size_t *n, brig_error *err);

/* Signal every process in the cgroup, in every hierarchy (cgroup.kill on
 * v2 for SIGKILL, freeze-signal-thaw otherwise); a shared cgroup is neither
 * frozen nor cgroup.kill'ed, and its foreign processes are skipped. */
int brig_cgroup_kill_all (brig_cgroup *cg, int sig, brig_error *err);

/* Freeze (true) or thaw (false), waiting until the state is reached. */
int brig_cgroup_freeze (brig_cgroup *cg, bool freeze, brig_error *err);

/* 1 when frozen, 0 when not, negative errno on error. */
int brig_cgroup_is_frozen (brig_cgroup *cg);

/* Apply new resources to an existing cgroup (brig update). */
int brig_cgroup_update (brig_cgroup *cg, const oci_resources *res, brig_error *err);

/* brig_cgroup_update for a container whose create left hierarchies out:
 * one that res needs is made (record is called with its directory first,
 * for the ownership record) and every process of the container moved into
 * it, then res is applied. */
int brig_cgroup_update_grow (brig_cgroup *cg, const oci_resources *res,
                             int (*record) (const char *dir, void *data, brig_error *err),
                             void *data, brig_error *err);

/* True when the container is in the hierarchy with this v1 controller (or,
 * with NULL, the cgroup2 one); false when create left it out. */
bool brig_cgroup_joined (const brig_cgroup *cg, const char *controller);

/* One v1 hierarchy as found in /proc/self/mountinfo. */
struct brig_cgroup_hier {
  char *mountpoint;   /* /sys/fs/cgroup/memory */
  char *controllers;  /* "memory", "cpu,cpuacct" or "name=systemd" */
  char *root;         /* the mount's root within the hierarchy, usually "/" */
  bool clone_children; /* mounted with clone_children: new cpusets get their parent's
                          cpus and mems from the kernel (the flag is inherited) */
};

/* The host's visible v1 hierarchies (one per set of controllers), parsed
 * once per process from /proc/self/mountinfo: a clone of brig (the init)
 * has them without reading it again. n gets their number. */
const struct brig_cgroup_hier *brig_cgroup_host_v1 (size_t *n);

/* The host's cgroup2 mountpoint, or NULL (same source). */
const char *brig_cgroup_host_unified (void);

/* The host's cgroup mode, detected once from /proc/self/mountinfo. */
enum brig_cgroup_mode brig_cgroup_host_mode (void);

/* "v1", "hybrid", "v2" or "none". */
const char *brig_cgroup_mode_name (enum brig_cgroup_mode mode);

/* The mode the handle works in. */
enum brig_cgroup_mode brig_cgroup_mode (const brig_cgroup *cg);

/* brig reset, on an emptied cgroup: drop the page cache its processes
 * left and the peaks they reached, where the kernel lets a runtime (v1
 * memory.force_empty and the max_usage files, v2 memory.reclaim).
 * The page cache only when more than RECLAIM_OVER bytes are charged.
 * Best effort: what the host lacks is skipped. */
void brig_cgroup_reset_counters (brig_cgroup *cg, uint64_t reclaim_over);

/* Memory in use (v1 memory.usage_in_bytes, v2 memory.current) and the
 * number of processes (pids.current); -ENOENT for a controller the cgroup
 * lacks, in which case that value is UINT64_MAX. A controller the cgroup
 * has whose value cannot be read gives BRIG_CGROUP_UNREADABLE. */
#define BRIG_CGROUP_UNREADABLE (UINT64_MAX - 1)
int brig_cgroup_usage (brig_cgroup *cg, uint64_t *memory, uint64_t *pids);

/* Statistics for `brig events`, in runc's shape. Fields the host lacks stay 0. */
struct brig_cgroup_stats {
  struct {
    uint64_t total, kernel, user;          /* ns */
    uint64_t *percpu;                      /* ns per cpu, malloc'd, may be NULL */
    size_t n_percpu;
    uint64_t periods, throttled_periods, throttled_time;
  } cpu;
  struct {
    uint64_t usage, max_usage, limit, failcnt;
    uint64_t swap_usage, swap_max_usage, swap_limit, swap_failcnt;
    uint64_t kernel_usage, kernel_max_usage, kernel_limit, kernel_failcnt;
    uint64_t cache;
    char **stat_keys;                      /* memory.stat, malloc'd */
    uint64_t *stat_values;
    size_t n_stat;
    bool use_hierarchy;
  } memory;
  struct {
    uint16_t *cpus, *mems;                 /* effective lists, malloc'd */
    size_t n_cpus, n_mems;
    bool has_flags;                        /* v1: the flag files below */
    uint64_t cpu_exclusive, mem_hardwall, mem_exclusive, memory_migrate, memory_spread_page,
      memory_spread_slab, memory_pressure, sched_load_balance;
    int64_t sched_relax_domain_level;
  } cpuset;
  struct { uint64_t current, limit; } pids;
  /* blkio: io_service_bytes_recursive / io_serviced_recursive entries */
  struct brig_cgroup_blkio_entry {
    uint64_t major, minor;
    char op[16];
    uint64_t value;
  } *io_bytes, *io_ops;
  size_t n_io_bytes, n_io_ops;
  struct brig_cgroup_hugetlb {
    char size[32];
    uint64_t usage, max, failcnt;
  } *hugetlb;
  size_t n_hugetlb;
  /* OOM kills so far (memory.events oom_kill on v2, memory.oom_control oom_kill on v1) */
  uint64_t oom_kills;
};

/* Read the statistics of the cgroup. */
int brig_cgroup_stats (brig_cgroup *cg, struct brig_cgroup_stats *st, brig_error *err);

/* Release what brig_cgroup_stats allocated. */
void brig_cgroup_stats_clear (struct brig_cgroup_stats *st);

/* The number of OOM kills in the cgroup so far (for OOM events); negative errno on error. */
int brig_cgroup_oom_count (brig_cgroup *cg, uint64_t *count);

#endif
