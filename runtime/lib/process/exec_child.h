/* exec's children inside the container: C1 (joins the namespaces, forks)
 * and C2 (the process). brig's side is container/exec.c. */
#ifndef BRIG_PROCESS_EXEC_CHILD_H
#define BRIG_PROCESS_EXEC_CHILD_H

#include <stdbool.h>
#include <sys/types.h>

#include "cgroup/cgroup.h"
#include "ocispec.h"
#include "seccomp/seccomp.h"

/* What C1 and C2 are given, prepared by brig before the fork. */
struct brig_exec_child {
  const char *id;        /* the container's, for messages */
  pid_t init_pid;        /* the container's init, and its pidfd */
  int init_pidfd;
  bool created;          /* the container waits for start (not yet running) */
  bool shared_keyring;   /* --no-new-keyring at create: keep the caller's */
  const char *keyring;   /* the init's session keyring, joined by name; NULL: a
                            new anonymous one (a container from before) */
  int state_dirfd;       /* the locked state directory: closed first */
  const oci_config *cfg;
  const oci_process *p;
  brig_seccomp *seccomp;
  int sync;              /* child end of the sync socketpair */
  int console;           /* console socket (or socketpair end) when tty, else -1 */
  const oci_console_size *size; /* the pty's initial size or NULL */
  bool proxied;          /* the pty comes back to brig (no console socket) */
  int preserve_fds;
  bool keep_groups;      /* run.oci.keep_original_groups (groups.h) */
  struct brig_cgroup_self *cg_self; /* v1 `tasks` fds C2 writes "0" to, or NULL */
  int cgfd;              /* cgroup2 directory C2 is cloned into, or -1 */
  int joined[2];         /* C2 -> C1: errno of its self-join */
};

/* C1, in the child of fork: never returns. */
void brig_exec_child_main (struct brig_exec_child *x) __attribute__ ((noreturn));

#endif
