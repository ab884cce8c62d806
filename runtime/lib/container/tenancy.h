/* A container's tenancy: which user of a reusable container (brig reset,
 * pools) a command acts for, and what the execs of that tenancy were given
 * beyond the config (docs/sandbox.md "Tenancy").
 *
 *   ROOT/ID/tenancy      "GENERATION STATE\n", written (write + rename)
 *                        under the state lock by reset (resetting at its
 *                        start, before anything is killed; tenant or vacant
 *                        once every check held), pool fill (vacant) and
 *                        claim (tenant). Absent: a container never reset
 *                        and never a pool member (generation 0, open).
 *   ROOT/ID/exec.grants  one line per exec that was given capabilities
 *                        the config's process lacks (--cap, --process),
 *                        appended under the state lock before the process
 *                        runs; removed by a reset that completed.
 *
 * An exec reads the tenancy before it waits for the lock and again once it
 * holds it: a reset in between (a new generation) or a member that is
 * vacant or resetting refuses it, so no command of one tenant runs in the
 * next one's container. */
#ifndef BRIG_TENANCY_H
#define BRIG_TENANCY_H

#include <stdbool.h>
#include <stddef.h>

#include "context.h"
#include "error.h"
#include "ocispec.h"

#define BRIG_TENANCY_FILE "tenancy"
#define BRIG_EXEC_GRANTS_FILE "exec.grants"

enum brig_tenancy_state {
  BRIG_TENANCY_OPEN,       /* no record: anyone who can run brig on it */
  BRIG_TENANCY_TENANT,     /* claimed, or reset and handed back */
  BRIG_TENANCY_VACANT,     /* an available pool member: nobody's yet */
  BRIG_TENANCY_RESETTING,  /* a reset runs, or was killed before it finished */
};

struct brig_tenancy {
  unsigned long long gen;
  enum brig_tenancy_state state;
};

/* "open", "tenant", "vacant", "resetting". */
const char *brig_tenancy_state_name (enum brig_tenancy_state s);

/* The record in the state directory dirfd; no record is {0, open}. A
 * record that cannot be read or parsed counts as resetting (fail closed).
 * 0, or -errno when the file exists but cannot be read. */
int brig_tenancy_read (int dirfd, struct brig_tenancy *t);

/* The same without opening or locking the container: by path, for exec
 * before it waits for the lock. */
int brig_tenancy_peek (const struct brig_context *ctx, const char *id, struct brig_tenancy *t);

/* Write the record (write + rename); the caller holds the lock. */
int brig_tenancy_write (int dirfd, unsigned long long gen, enum brig_tenancy_state s,
                        brig_error *err);

/* Refuse (err names the container and why) to add a process by what
 * ("exec in", "start") to a container whose tenancy t is vacant or
 * resetting; 0 otherwise. dirfd: its state directory, where a reset that
 * failed left its reason (reset.failed), or -1. */
int brig_tenancy_refuse (int dirfd, const char *id, const struct brig_tenancy *t,
                         const char *what, brig_error *err);

/* The capability names of p's five sets, canonical ("CAP_NET_ADMIN"),
 * space-separated (malloc'd; "" for none). */
char *brig_exec_caps_of (const oci_process *p);

/* Record what the exec'd process p holds beyond had (brig_exec_caps_of of
 * the config's process): one line of the names none of had's sets has.
 * Nothing is written when there are none. */
int brig_exec_grants_note (int dirfd, const char *had, const oci_process *p, brig_error *err);

/* Whether any exec of the current tenancy was given capability name
 * ("CAP_NET_ADMIN"); true also when the record cannot be read. */
bool brig_exec_grants_have (int dirfd, const char *name);

/* Forget the grants (a reset that completed). */
void brig_exec_grants_clear (int dirfd);

#endif
