/* The systemd manager: the container's cgroup is a transient scope (or
 * slice) that systemd creates over D-Bus (StartTransientUnit) with
 * Delegate=yes and the main limits as unit properties, so a daemon-reload
 * keeps them. brig then joins every hierarchy and writes all resources
 * through cgroupfs, as for the cgroupfs manager. The bus is opened only
 * when this manager is used. */
#ifdef HAVE_SYSTEMD
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <systemd/sd-bus.h>
#include <time.h>

#include "cgroup/internal.h"
#include "log.h"
#include "utils.h"

#define SD_DEST "org.freedesktop.systemd1"
#define SD_PATH "/org/freedesktop/systemd1"
#define SD_MANAGER "org.freedesktop.systemd1.Manager"

static int
bus_get (brig_cgroup *cg, sd_bus **out, brig_error *err)
{
  sd_bus *bus = cg->bus;
  int r;
  if (bus == NULL)
    {
      r = cg->rootless ? sd_bus_open_user (&bus) : sd_bus_open_system (&bus);
      if (r < 0)
        return brig_error_set (err, -r, "systemd cgroup manager: connect to the %s bus",
                               cg->rootless ? "user" : "system");
      cg->bus = bus;
    }
  *out = bus;
  return 0;
}

static int
bus_fail (brig_error *err, sd_bus_error *e, int r, const char *what)
{
  int ret;
  if (sd_bus_error_is_set (e))
    ret = brig_error_set (err, -r, "systemd: %s: %s", what, e->message ? e->message : e->name);
  else
    ret = brig_error_set (err, -r, "systemd: %s", what);
  sd_bus_error_free (e);
  return ret;
}

/* ---- properties ---- */

/* "0-3,6" -> the little-endian byte mask systemd's AllowedCPUs takes. */
static int
cpu_mask (const char *list, uint8_t **mask, size_t *len)
{
  const char *p = list;
  uint8_t *m = NULL;
  size_t n = 0;
  while (*p)
    {
      char *end;
      unsigned long a = strtoul (p, &end, 10), b;
      if (end == p)
        return -EINVAL;
      b = a;
      if (*end == '-')
        {
          p = end + 1;
          b = strtoul (p, &end, 10);
          if (end == p || b < a)
            return -EINVAL;
        }
      if (b > 8191)
        return -EINVAL;
      if (b / 8 + 1 > n)
        {
          m = xrealloc (m, b / 8 + 1);
          memset (m + n, 0, b / 8 + 1 - n);
          n = b / 8 + 1;
        }
      for (unsigned long i = a; i <= b; i++)
        m[i / 8] |= (uint8_t) (1u << (i % 8));
      p = *end == ',' ? end + 1 : end;
      if (*end && *end != ',')
        return -EINVAL;
    }
  *mask = m;
  *len = n;
  return 0;
}

static int
append_u64 (sd_bus_message *m, const char *name, uint64_t v)
{
  return sd_bus_message_append (m, "(sv)", name, "t", v);
}

static int
append_mask (sd_bus_message *m, const char *name, const char *list)
{
  _cleanup_free_ uint8_t *mask = NULL;
  size_t len = 0;
  int r;
  if (cpu_mask (list, &mask, &len) < 0)
    return 0;  /* cgroupfs reports the bad value with its file name */
  if ((r = sd_bus_message_open_container (m, 'r', "sv")) < 0
      || (r = sd_bus_message_append (m, "s", name)) < 0
      || (r = sd_bus_message_open_container (m, 'v', "ay")) < 0
      || (r = sd_bus_message_append_array (m, 'y', mask, len)) < 0
      || (r = sd_bus_message_close_container (m)) < 0)
    return r;
  return sd_bus_message_close_container (m);
}

/* The limits systemd itself should know about (it rewrites its own
 * properties on reload); everything else goes through cgroupfs. */
static int
append_resources (sd_bus_message *m, bool v2, const oci_resources *res)
{
  int r = 0;
  if (res == NULL)
    return 0;
  if (res->memory && res->memory->has_limit && res->memory->limit != 0)
    r = append_u64 (m, v2 ? "MemoryMax" : "MemoryLimit",
                    res->memory->limit < 0 ? UINT64_MAX : (uint64_t) res->memory->limit);
  if (r >= 0 && v2 && res->memory && res->memory->has_reservation && res->memory->reservation > 0)
    r = append_u64 (m, "MemoryLow", (uint64_t) res->memory->reservation);
  if (r >= 0 && res->cpu && res->cpu->has_shares && res->cpu->shares)
    r = v2 ? append_u64 (m, "CPUWeight", brig_cgroup_shares_to_weight (res->cpu->shares))
           : append_u64 (m, "CPUShares", res->cpu->shares);
  if (r >= 0 && res->cpu && res->cpu->has_quota && res->cpu->quota > 0)
    {
      uint64_t period = res->cpu->has_period && res->cpu->period ? res->cpu->period : 100000;
      /* systemd keeps 1% steps (10ms per second): round up, never tighter */
      uint64_t per_sec = (uint64_t) res->cpu->quota * 1000000 / period;
      per_sec = (per_sec + 9999) / 10000 * 10000;
      r = append_u64 (m, "CPUQuotaPerSecUSec", per_sec);
      if (r >= 0 && res->cpu->has_period && res->cpu->period)
        r = append_u64 (m, "CPUQuotaPeriodUSec", res->cpu->period);
    }
  if (r >= 0 && v2 && res->cpu && res->cpu->cpus && *res->cpu->cpus)
    r = append_mask (m, "AllowedCPUs", res->cpu->cpus);
  if (r >= 0 && v2 && res->cpu && res->cpu->mems && *res->cpu->mems)
    r = append_mask (m, "AllowedMemoryNodes", res->cpu->mems);
  if (r >= 0 && res->pids && res->pids->has_limit)
    r = append_u64 (m, "TasksMax", res->pids->limit <= 0 ? UINT64_MAX : (uint64_t) res->pids->limit);
  if (r >= 0 && res->block_io && res->block_io->has_weight && res->block_io->weight)
    r = v2 ? append_u64 (m, "IOWeight", brig_cgroup_blkio_to_io_weight (res->block_io->weight))
           : append_u64 (m, "BlockIOWeight", res->block_io->weight);
  return r;
}

/* Annotations "org.systemd.property.NAME" set unit properties: "true" /
 * "false", a number, "uint32 N" / "int64 N" style, or a quoted string. */
static int
append_annotations (sd_bus_message *m, const oci_map *ann)
{
  static const char prefix[] = "org.systemd.property.";
  for (size_t i = 0; ann && i < ann->len; i++)
    {
      const char *k = ann->keys[i], *v = ann->values[i];
      char *end;
      int r;
      if (strncmp (k, prefix, sizeof prefix - 1) != 0 || !k[sizeof prefix - 1])
        continue;
      k += sizeof prefix - 1;
      if (strcmp (v, "true") == 0 || strcmp (v, "false") == 0)
        r = sd_bus_message_append (m, "(sv)", k, "b", (int) (v[0] == 't'));
      else if (strncmp (v, "uint32 ", 7) == 0)
        r = sd_bus_message_append (m, "(sv)", k, "u", (uint32_t) strtoul (v + 7, NULL, 10));
      else if (strncmp (v, "int64 ", 6) == 0)
        r = sd_bus_message_append (m, "(sv)", k, "x", (int64_t) strtoll (v + 6, NULL, 10));
      else if (strncmp (v, "uint64 ", 7) == 0)
        r = sd_bus_message_append (m, "(sv)", k, "t", (uint64_t) strtoull (v + 7, NULL, 10));
      else if (v[0] == '"' || v[0] == '\'')
        {
          _cleanup_free_ char *s = xstrdup (v + 1);
          size_t n = strlen (s);
          if (n && s[n - 1] == v[0])
            s[n - 1] = '\0';
          r = sd_bus_message_append (m, "(sv)", k, "s", s);
        }
      else if (strtoull (v, &end, 10), *v && *end == '\0')
        r = sd_bus_message_append (m, "(sv)", k, "t", (uint64_t) strtoull (v, NULL, 10));
      else
        {
          brig_warn ("annotation org.systemd.property.%s: cannot read value \"%s\"; ignored", k, v);
          continue;
        }
      if (r < 0)
        return r;
    }
  return 0;
}

/* ---- jobs ---- */

struct job_wait {
  const char *path;
  char *result;
};

static int
on_job_removed (sd_bus_message *m, void *userdata, sd_bus_error *e)
{
  struct job_wait *w = userdata;
  const char *path = NULL, *unit = NULL, *result = NULL;
  uint32_t id;
  if (sd_bus_message_read (m, "uoss", &id, &path, &unit, &result) < 0)
    return 0;
  if (w->path && path && strcmp (w->path, path) == 0 && w->result == NULL)
    w->result = xstrdup (result);
  return 0;
}

/* Call Manager.METHOD(args...) that returns a job, and wait for the job. */
static int
run_job (sd_bus *bus, sd_bus_message *call, const char *what, brig_error *err)
{
  _cleanup_free_ char *path = NULL;
  sd_bus_error e = SD_BUS_ERROR_NULL;
  sd_bus_message *reply = NULL;
  sd_bus_slot *slot = NULL;
  struct job_wait w = { 0 };
  const char *job;
  struct timespec start, now;
  int r;

  r = sd_bus_match_signal (bus, &slot, SD_DEST, SD_PATH, SD_MANAGER, "JobRemoved",
                           on_job_removed, &w);
  if (r < 0)
    return brig_error_set (err, -r, "systemd: %s: watch JobRemoved", what);
  /* systemd sends job signals only to subscribed clients */
  sd_bus_call_method (bus, SD_DEST, SD_PATH, SD_MANAGER, "Subscribe", NULL, NULL, "");
  r = sd_bus_call (bus, call, 0, &e, &reply);
  if (r < 0)
    {
      sd_bus_slot_unref (slot);
      return bus_fail (err, &e, r, what);
    }
  r = sd_bus_message_read (reply, "o", &job);
  if (r < 0)
    {
      sd_bus_message_unref (reply);
      sd_bus_slot_unref (slot);
      return brig_error_set (err, -r, "systemd: %s: read the job", what);
    }
  path = xstrdup (job);
  sd_bus_message_unref (reply);
  w.path = path;
  clock_gettime (CLOCK_MONOTONIC, &start);
  while (w.result == NULL)
    {
      r = sd_bus_process (bus, NULL);
      if (r < 0)
        break;
      if (r > 0)
        continue;
      clock_gettime (CLOCK_MONOTONIC, &now);
      if (now.tv_sec - start.tv_sec > 30)
        {
          r = -ETIMEDOUT;
          break;
        }
      r = sd_bus_wait (bus, 500000);
      if (r < 0)
        break;
    }
  sd_bus_slot_unref (slot);
  if (w.result == NULL)
    return brig_error_set (err, r < 0 ? -r : ETIMEDOUT, "systemd: %s: waiting for job %s", what, path);
  if (strcmp (w.result, "done") != 0)
    {
      r = brig_error_say (err, EIO, "systemd: %s: job %s", what, w.result);
      free (w.result);
      return r;
    }
  free (w.result);
  return 0;
}

/* ---- the manager ---- */

static int
sd_create (brig_cgroup *cg, const struct brig_cgroup_config *cfg, brig_error *err)
{
  int r = brig_cgroup_systemd_names (cfg->cgroups_path, cfg->id, &cg->slice, &cg->unit,
                                     &cg->path, err);
  if (r < 0)
    return r;
  if (cfg->resources)
    {
      r = brig_cgroup_resources_validate (cg, cfg->resources, err);
      if (r < 0)
        return r;
      /* the scope exists only once there is a pid: keep a copy for enter */
      cg->pending = oci_copy (&oci_resources_type, cfg->resources);
      if (cg->pending == NULL)
        return brig_error_errno (err, "systemd: copy linux.resources");
    }
  cg->annotations = cfg->annotations;
  brig_cgroup_fill_dirs (cg, brig_cgroup_host_get ());
  /* The unit, named after the container, is brig's: so is its cgroup. */
  for (size_t i = 0; i < cg->n_dirs; i++)
    cg->dirs[i].made = true;
  return 0;
}

static int
sd_enter (brig_cgroup *cg, pid_t pid, brig_error *err)
{
  bool v2 = cg->mode == BRIG_CGROUP_V2;
  bool is_slice = strlen (cg->unit) > 6 && strcmp (cg->unit + strlen (cg->unit) - 6, ".slice") == 0;
  _cleanup_free_ char *desc = xasprintf ("brig container %s", cg->unit);
  sd_bus_message *m = NULL;
  sd_bus *bus;
  int r;

  r = bus_get (cg, &bus, err);
  if (r < 0)
    return r;
  r = sd_bus_message_new_method_call (bus, &m, SD_DEST, SD_PATH, SD_MANAGER, "StartTransientUnit");
  if (r >= 0)
    r = sd_bus_message_append (m, "ss", cg->unit, "replace");
  if (r >= 0)
    r = sd_bus_message_open_container (m, 'a', "(sv)");
  if (r >= 0)
    r = sd_bus_message_append (m, "(sv)(sv)(sv)(sv)(sv)(sv)", "Description", "s", desc,
                               "Slice", "s", cg->slice, "Delegate", "b", 1,
                               "MemoryAccounting", "b", 1, "CPUAccounting", "b", 1,
                               "TasksAccounting", "b", 1);
  if (r >= 0)
    r = sd_bus_message_append (m, "(sv)", v2 ? "IOAccounting" : "BlockIOAccounting", "b", 1);
  if (r >= 0 && !is_slice)
    r = sd_bus_message_append (m, "(sv)(sv)", "PIDs", "au", 1, (uint32_t) pid,
                               "DefaultDependencies", "b", 0);
  if (r >= 0)
    r = append_resources (m, v2, cg->pending);
  if (r >= 0)
    r = append_annotations (m, cg->annotations);
  if (r >= 0)
    r = sd_bus_message_close_container (m);
  if (r >= 0)
    r = sd_bus_message_append (m, "a(sa(sv))", 0);
  if (r < 0)
    {
      sd_bus_message_unref (m);
      return brig_error_set (err, -r, "systemd: build StartTransientUnit %s", cg->unit);
    }
  r = run_job (bus, m, cg->unit, err);
  sd_bus_message_unref (m);
  if (r < 0)
    return brig_error_wrap (err, "start unit");

  /* systemd made the unit's cgroup in the hierarchies it manages; brig
   * makes the rest, joins them all and writes every resource. */
  r = brig_cgroup_fs_setup (cg, cg->pending, NULL, err);
  if (r == 0)
    r = brig_cgroup_fs_enter (cg, pid, err);
  return r;
}

static int
stop_unit (brig_cgroup *cg, brig_error *err)
{
  sd_bus_message *m = NULL;
  sd_bus *bus;
  int r = bus_get (cg, &bus, err);
  if (r < 0)
    return r;
  r = sd_bus_message_new_method_call (bus, &m, SD_DEST, SD_PATH, SD_MANAGER, "StopUnit");
  if (r >= 0)
    r = sd_bus_message_append (m, "ss", cg->unit, "replace");
  if (r < 0)
    {
      sd_bus_message_unref (m);
      return brig_error_set (err, -r, "systemd: build StopUnit %s", cg->unit);
    }
  r = run_job (bus, m, cg->unit, err);
  sd_bus_message_unref (m);
  return r;
}

static int
sd_destroy (brig_cgroup *cg, bool kill, brig_error *err)
{
  brig_error tmp = { 0 };
  if (cg->unit && stop_unit (cg, &tmp) < 0)
    {
      /* a unit that is gone already (or a host without the bus) still
       * gets its directories removed below */
      brig_debug ("cgroup: %s", tmp.msg);
      brig_error_clear (&tmp);
    }
  return brig_cgroup_fs_destroy (cg, kill, err);
}

static int
sd_update (brig_cgroup *cg, const oci_resources *res, brig_error *err)
{
  bool v2 = cg->mode == BRIG_CGROUP_V2;
  sd_bus_error e = SD_BUS_ERROR_NULL;
  sd_bus_message *m = NULL;
  sd_bus *bus;
  int r = brig_cgroup_resources_validate (cg, res, err);
  if (r < 0)
    return r;
  r = bus_get (cg, &bus, err);
  if (r < 0)
    return r;
  r = sd_bus_message_new_method_call (bus, &m, SD_DEST, SD_PATH, SD_MANAGER, "SetUnitProperties");
  if (r >= 0)
    r = sd_bus_message_append (m, "sb", cg->unit, 1);
  if (r >= 0)
    r = sd_bus_message_open_container (m, 'a', "(sv)");
  if (r >= 0)
    r = append_resources (m, v2, res);
  if (r >= 0)
    r = sd_bus_message_close_container (m);
  if (r >= 0)
    r = sd_bus_call (bus, m, 0, &e, NULL);
  sd_bus_message_unref (m);
  if (r < 0)
    return bus_fail (err, &e, r, "SetUnitProperties");
  return brig_cgroup_fs_apply (cg, res, true, err);
}

static void
sd_free (brig_cgroup *cg)
{
  if (cg->bus)
    sd_bus_flush_close_unref (cg->bus);
  cg->bus = NULL;
}

const struct brig_cgroup_ops brig_cgroup_systemd_ops = {
  .name = "systemd",
  .create = sd_create,
  .enter = sd_enter,
  .destroy = sd_destroy,
  .freeze = brig_cgroup_fs_freeze,
  .is_frozen = brig_cgroup_fs_is_frozen,
  .update = sd_update,
  .free = sd_free,
};
#endif
