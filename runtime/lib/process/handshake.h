/* The handshake between brig and the processes it starts in a container:
 * create (or run, or reset's respawn) and the container init, exec and its
 * two children. Every message is here, and both sides of each exchange are
 * next to each other in handshake.c: the parent's part (brig_hs_parent_*),
 * the init's (brig_hs_init_*), exec's (brig_hs_exec_*). The transport, one
 * SOCK_SEQPACKET packet per message, and the error message that ends any
 * exchange are sync.h's.
 *
 * create and the init, in order (brackets: only when the config asks):
 *   [init USERNS -> parent writes the id maps -> USERNS_DONE]
 *   parent places the init in its cgroup [, moves netDevices] -> GO
 *   [init forks the real init: INIT_PID -> parent -> GO]
 *   [init NETDEV -> parent moves linux.netDevices -> NETDEV_DONE]
 *   [init LAYER_SEED (upper fd) -> parent fills it (brig fork) -> SEED_DONE]
 *   [init MOUNT_SOURCE i -> parent opens mounts[i].source -> MOUNT_SOURCE_FD]
 *   [init HOOKS -> parent runs prestart, createRuntime -> HOOKS_DONE (state)]
 *   parent records the init -> HANDOVER (unasked; taken wherever it arrives)
 *   [init SECCOMP (listener fd) -> parent takes it -> SECCOMP_DONE]
 *   init READY: set up, waiting for `start` (or execve for run).
 * exec: P -> GO -> C1 joins and forks C2 -> INIT_PID (C2's pid) [-> C2
 * JOINED its v1 cgroups] [-> SECCOMP] -> READY. */
#ifndef BRIG_PROCESS_HANDSHAKE_H
#define BRIG_PROCESS_HANDSHAKE_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "ocispec.h"
#include "process/netdev.h"
#include "seccomp/seccomp.h"
#include "sync.h"

enum brig_hs_type {
  BRIG_SYNC_USERNS = BRIG_SYNC_ERROR + 1, /* C->P: user ns unshared, write the id maps */
  BRIG_SYNC_USERNS_DONE,  /* P->C: maps written */
  BRIG_SYNC_INIT_PID,     /* C->P: the init was forked; data: its pid (host) */
  BRIG_SYNC_GO,           /* P->C: cgroup joined, maps written: go on (sent
                             once more to a forked init, once its pid is
                             known) */
  BRIG_SYNC_HOOKS,        /* C->P: rootfs prepared: run prestart/createRuntime */
  BRIG_SYNC_HOOKS_DONE,   /* P->C: data: the state JSON for createContainer */
  BRIG_SYNC_READY,        /* C->P: set up, waiting to exec */
  BRIG_SYNC_NETDEV,       /* C->P: network ns in place: move linux.netDevices */
  BRIG_SYNC_NETDEV_DONE,  /* P->C: moved */
  BRIG_SYNC_SECCOMP,      /* C->P: the seccomp listener fd, sent right after
                             the filter was loaded: fd in SCM_RIGHTS, or no
                             fd and code: its number (pidfd_getfd) */
  BRIG_SYNC_SECCOMP_DONE, /* P->C: the fd named by number was taken */
  BRIG_SYNC_MOUNT_SOURCE,    /* C->P: data: index of a mounts[] entry whose source the
                                init (in a user namespace) cannot reach: open it */
  BRIG_SYNC_MOUNT_SOURCE_FD, /* P->C: fd: O_PATH fd of that source; or code: errno,
                                data: message */
  BRIG_SYNC_JOINED,       /* C->P (exec's C1): C2 joined its v1 cgroups itself */
  BRIG_SYNC_HANDOVER,     /* P->C: the record names the init (its init line is
                             written): it may outlive the parent from now on */
  BRIG_SYNC_START,        /* start/claim -> init, first on the exec socket's
                             connection: data: "k=v\0k=v\0..." added to the
                             process's environment (empty: nothing) */
  BRIG_SYNC_LAYER_SEED,   /* C->P: fd: O_PATH fd of the root layer's upper
                             directory, made and not yet in use: fill it */
  BRIG_SYNC_SEED_DONE,    /* P->C: filled: mount the layer */
};

/* ---- the init's end ---- */

struct brig_hs_init {
  int sock;                    /* the init's end of the socketpair */
  unsigned long unshare_late;  /* namespaces unshared once placed (GO) */
  bool placed;                 /* GO received */
  bool handed_over;            /* HANDOVER received: may outlive the parent */
};

/* Until HANDOVER the kernel kills the init with its parent; armed again
 * after each fork and credential change (which clear it). Exits when the
 * parent is gone already. */
void brig_hs_init_arm_parent_death (struct brig_hs_init *h);

/* The user namespace is unshared: the parent writes the id maps. */
void brig_hs_init_userns (struct brig_hs_init *h, brig_error *err);

/* Wait for GO (placed in its cgroups), then unshare unshare_late. The
 * rootfs's cgroup barrier (brig_rootfs_opts.cgroup_barrier, arg: h). */
int brig_hs_init_placed (void *h, brig_error *err);

/* The real init was forked (pid, host's view): tell the parent, whose GO
 * follows. Called in the process that forked it, which exits next. */
void brig_hs_init_forked (struct brig_hs_init *h, pid_t pid);

/* After the fork: wait for the parent's second GO. */
void brig_hs_init_await_go (struct brig_hs_init *h, brig_error *err);

/* The network namespace is in place: the parent moves linux.netDevices. */
void brig_hs_init_netdev (struct brig_hs_init *h, brig_error *err);

/* rootfs_prepare's open_source (arg: h): the parent opens mounts[i].source
 * with brig's rights. The fd (O_CLOEXEC), or -errno with err set. */
int brig_hs_init_mount_source (void *h, size_t i, brig_error *err);

/* brig_layer_seed's fill (arg: h): placed first (GO), then the upper
 * directory goes to the parent, which fills it (brig fork's copy) before
 * SEED_DONE. 0, or exits when the parent gave up. */
int brig_hs_init_layer_seed (void *h, int upper, brig_error *err);

/* The rootfs is prepared: the parent runs prestart and createRuntime; the
 * state while creating (*creating) and once created (*created, inside the
 * same allocation) come back for the init's own hooks. */
void brig_hs_init_hooks (struct brig_hs_init *h, char **creating, const char **created,
                         brig_error *err);

/* Before the init becomes the process: wait for HANDOVER (unless taken). */
void brig_hs_init_await_handover (struct brig_hs_init *h, brig_error *err);

/* Set up: tell the parent (exits when it is gone). */
void brig_hs_init_ready (struct brig_hs_init *h);

/* ---- the parent's end (create, run, reset) ---- */

/* [USERNS] the id maps of child written (asked: the init unshared its user
 * namespace itself and waits for them). */
int brig_hs_parent_userns (int sock, bool asked, pid_t child, const oci_linux *lx,
                           brig_error *err);

/* GO: placed, go on. 0 or -errno. */
int brig_hs_parent_go (int sock);

/* [INIT_PID] the real init's pid, from the process that forked it. */
int brig_hs_parent_forked (int sock, pid_t *pid, brig_error *err);

/* [NETDEV] move linux.netDevices into the namespace of pid when asked. */
int brig_hs_parent_netdev (int sock, const oci_linux *lx, pid_t pid, brig_netdevs **moved,
                           brig_error *err);

/* Wait for type from the init, opening the mount sources it asks for
 * meanwhile (rootfs/source.c). */
int brig_hs_parent_expect (int sock, uint32_t type, const oci_config *cfg, const char *bundle,
                           pid_t pid, brig_error *err);

/* [LAYER_SEED] take the init's upper directory, call fill (arg) on it and
 * answer SEED_DONE; a failed fill is returned (the init is killed by the
 * caller's cleanup). */
int brig_hs_parent_layer_seed (int sock, int (*fill) (void *arg, int upper, brig_error *err),
                               void *arg, brig_error *err);

/* [HOOKS] the hooks ran: hand the init the state while creating and once
 * created. */
void brig_hs_parent_hooks_done (int sock, const char *creating, const char *created);

/* HANDOVER: the record names the init; not awaited. */
void brig_hs_parent_handover (int sock);

/* [SECCOMP] take the listener fd the init sends right after its filter
 * (the fd itself, or by number with pidfd_getfd); mount sources served
 * until then. */
int brig_hs_parent_seccomp (int sock, const oci_config *cfg, const char *bundle, pid_t pid,
                            int *fd, brig_error *err);

/* READY came: the init is about to execve (run): EOF on the socket
 * (close-on-exec) once it has, or the error of its last steps. */
int brig_hs_parent_await_exec (int sock, brig_error *err);

/* ---- both: the seccomp listener from the process that loaded the filter ---- */

/* In the process: send the listener fd (closed here) the moment the filter
 * is loaded; when sendmsg itself is notified, only its number, and wait
 * until brig took it. */
int brig_hs_seccomp_send (const brig_seccomp *sc, int sock, int notify_fd);

/* In brig: receive what brig_hs_seccomp_send sent from process pid. */
int brig_hs_seccomp_receive (int sock, pid_t pid, int *fd, brig_error *err);

/* ---- exec: brig (P), C1 (joins, forks), C2 (the process) ---- */

/* C1 -> P: C2's pid; joined: C2 joins its v1 cgroups itself (JOINED follows). */
int brig_hs_exec_forked (int sock, pid_t pid, bool joined);
/* C2 -> P: joined its v1 cgroups (e: 0 or the errno of the failure). */
int brig_hs_exec_joined (int sock, int e);
/* P: C2's pid from C1, and (joined) C2's word that it is in its cgroups. */
int brig_hs_exec_await_forked (int sock, pid_t *pid, bool *joined, brig_error *err);
int brig_hs_exec_await_joined (int sock, brig_error *err);
/* C2: wait for P's GO (placed); tell P it is set up (READY). */
int brig_hs_exec_await_go (int sock, brig_error *err);
int brig_hs_exec_ready (int sock);
/* P: C2's READY. */
int brig_hs_exec_await_ready (int sock, brig_error *err);

#endif
