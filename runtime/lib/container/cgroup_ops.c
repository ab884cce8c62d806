/* pause, resume, update and the events view: the state store gives the
 * cgroup manager and path recorded at create; the manager does the rest. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "container/cgroup_ops.h"
#include "container/resources_record.h"
#include "container/extension.h"
#include "container/state.h"
#include "utils.h"

struct brig_events {
  brig_container *c;
  brig_cgroup *cg;
};

static int
load_cgroup (brig_container *c, brig_cgroup **cg, brig_error *err)
{
  int r = brig_container_cgroup (c, cg, err);
  if (r == 0 && *cg == NULL)
    return brig_error_set (err, 0, "container \"%s\" has no cgroup", c->id);
  return r;
}

static int
set_frozen (const struct brig_context *ctx, const char *id, bool freeze, brig_error *err)
{
  _cleanup_container_ brig_container *c = NULL;
  brig_cgroup *cg = NULL;
  int r = brig_container_load (ctx, id, BRIG_LOCK_EXCLUSIVE, &c, err);
  if (r < 0)
    return r;
  if (freeze && c->status != BRIG_STATUS_RUNNING && c->status != BRIG_STATUS_CREATED)
    return brig_error_set (err, 0, "container \"%s\" is not running (%s)", id,
                           brig_status_name (c->status));
  if (!freeze && c->status != BRIG_STATUS_PAUSED)
    return brig_error_set (err, 0, "container \"%s\" is not paused (%s)", id,
                           brig_status_name (c->status));
  r = load_cgroup (c, &cg, err);
  if (r < 0)
    return r;
  /* Freezing a shared cgroup would stop processes that are not the
   * container's (and resume would thaw what someone else froze). */
  if (brig_cgroup_is_shared (cg))
    {
      brig_cgroup_free (cg);
      return brig_error_set (err, 0, "%s container \"%s\": its cgroup is shared "
                             "(annotation " BRIG_CGROUP_SHARED_ANNOTATION "): freezing it "
                             "would stop processes that are not the container's",
                             freeze ? "pause" : "resume", id);
    }
  r = brig_cgroup_freeze (cg, freeze, err);
  brig_cgroup_free (cg);
  if (r < 0)
    return brig_error_wrap (err, "%s container \"%s\"", freeze ? "pause" : "resume", id);
  return 0;
}

int
brig_container_pause (const struct brig_context *ctx, const char *id, brig_error *err)
{
  return set_frozen (ctx, id, true, err);
}

int
brig_container_resume (const struct brig_context *ctx, const char *id, brig_error *err)
{
  return set_frozen (ctx, id, false, err);
}

/* The ownership record learns of a directory update is about to make. */
static int
record_made (const char *dir, void *data, brig_error *err)
{
  brig_container *c = data;
  _cleanup_free_ char *line = xasprintf ("made %s\n", dir);
  _cleanup_close_ int fd = openat (c->dirfd, BRIG_STATE_RECORD, O_WRONLY | O_APPEND | O_CLOEXEC);
  int r;

  if (fd < 0)
    return brig_error_errno (err, "open %s", BRIG_STATE_RECORD);
  r = brig_write_all (fd, line, strlen (line));
  if (r < 0)
    return brig_error_set (err, -r, "write %s", BRIG_STATE_RECORD);
  return 0;
}

static int
update_policy (const struct brig_context *ctx, const brig_container *c, const oci_resources *res,
               brig_error *err)
{
  oci_config *cfg = NULL;
  int r;

  if (BRIG_EXT_HOOK (update_check) == NULL)
    return 0;
  r = brig_container_config (c, &cfg, err);
  if (r < 0)
    return r;
  r = brig_ext->update_check (ctx, cfg, res, err);
  oci_config_free (cfg);
  return r;
}

/* runc's rule: a memory limit lifted (-1) without a swap value lifts the
 * memory+swap limit too. On v1 the kernel refuses a memory limit above
 * memory.memsw.limit_in_bytes, so -1 alone could never be written while a
 * memory+swap limit is set; on v2 swap alone would stay limited. NULL when
 * res does not lift the limit that way, else a copy with swap -1. */
static oci_resources *
lift_swap_with_memory (const oci_resources *res)
{
  const oci_memory *m = res ? res->memory : NULL;
  oci_resources *own;

  if (m == NULL || !m->has_limit || m->limit != -1 || (m->has_swap && m->swap != 0))
    return NULL;
  own = oci_copy (&oci_resources_type, res);
  own->memory->swap = -1;
  own->memory->has_swap = true;
  return own;
}

static int
update (const struct brig_context *ctx, const char *id, const oci_resources *res,
        brig_error *err)
{
  _cleanup_container_ brig_container *c = NULL;
  brig_cgroup *cg = NULL;
  int r = brig_container_load (ctx, id, BRIG_LOCK_EXCLUSIVE, &c, err);
  if (r < 0)
    return r;
  if (c->status == BRIG_STATUS_STOPPED || c->status == BRIG_STATUS_CREATING)
    return brig_error_set (err, 0, "container \"%s\" is not running (%s)", id,
                           brig_status_name (c->status));
  /* An extension (the node policy) judges the limits as they would be
   * after the update, as exec is judged: before the cgroup is touched. */
  r = update_policy (ctx, c, res, err);
  if (r < 0)
    return r;
  r = load_cgroup (c, &cg, err);
  if (r < 0)
    return r;
  /* a hierarchy create left out is made (and recorded) when res needs it */
  r = brig_cgroup_update_grow (cg, res, record_made, c, err);
  brig_cgroup_free (cg);
  if (r < 0)
    return brig_error_wrap (err, "update container \"%s\"", id);
  /* The limits in force, for the next reader (still under the lock). */
  return brig_container_record_resources (c, res, err);
}

int
brig_container_update (const struct brig_context *ctx, const char *id,
                       const oci_resources *res, brig_error *err)
{
  oci_resources *lifted = lift_swap_with_memory (res);
  int r = update (ctx, id, lifted ? lifted : res, err);

  if (lifted)
    oci_free (&oci_resources_type, lifted);
  return r;
}

int
brig_events_open (const struct brig_context *ctx, const char *id, brig_events **out,
                  brig_error *err)
{
  brig_events *ev = xmalloc0 (sizeof *ev);
  int r = brig_container_load_visible (ctx, id, &ev->c, err);
  if (r == 0 && ev->c->status == BRIG_STATUS_STOPPED)
    r = brig_error_set (err, 0, "container \"%s\" is not running", id);
  if (r == 0)
    r = load_cgroup (ev->c, &ev->cg, err);
  if (r < 0)
    {
      brig_events_close (ev);
      *out = NULL;
      return r;
    }
  *out = ev;
  return 0;
}

bool
brig_events_running (brig_events *ev)
{
  brig_container_refresh (ev->c);
  return ev->c->status != BRIG_STATUS_STOPPED;
}

brig_cgroup *
brig_events_cgroup (brig_events *ev)
{
  return ev->cg;
}

void
brig_events_close (brig_events *ev)
{
  if (ev == NULL)
    return;
  brig_cgroup_free (ev->cg);
  brig_container_free (ev->c);
  free (ev);
}
