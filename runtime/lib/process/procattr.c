/* Process attributes the init applies before exec: personality, scheduler,
 * I/O priority, CPU affinity, memory policy. Every name is checked in the
 * parent (brig_procattr_validate) so a typo fails `create` before any
 * process exists; the init then only makes the syscalls. */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "log.h"
#include "process/procattr.h"
#include "utils.h"

/* struct sched_attr of sched_setattr(2), SCHED_ATTR_SIZE_VER1; glibc 2.36
 * has no wrapper and no declaration. */
struct brig_sched_attr {
  uint32_t size;
  uint32_t sched_policy;
  uint64_t sched_flags;
  int32_t sched_nice;
  uint32_t sched_priority;
  uint64_t sched_runtime;
  uint64_t sched_deadline;
  uint64_t sched_period;
  uint32_t sched_util_min;
  uint32_t sched_util_max;
};

struct name_value {
  const char *name;
  unsigned long value;
};

static const struct name_value sched_policies[] = {
  { "SCHED_OTHER", 0 }, { "SCHED_FIFO", 1 }, { "SCHED_RR", 2 }, { "SCHED_BATCH", 3 },
  { "SCHED_ISO", 4 },   { "SCHED_IDLE", 5 }, { "SCHED_DEADLINE", 6 },
};

static const struct name_value sched_flags[] = {
  { "SCHED_FLAG_RESET_ON_FORK", 0x01 }, { "SCHED_FLAG_RECLAIM", 0x02 },
  { "SCHED_FLAG_DL_OVERRUN", 0x04 },    { "SCHED_FLAG_KEEP_POLICY", 0x08 },
  { "SCHED_FLAG_KEEP_PARAMS", 0x10 },   { "SCHED_FLAG_UTIL_CLAMP_MIN", 0x20 },
  { "SCHED_FLAG_UTIL_CLAMP_MAX", 0x40 },
};

static const struct name_value io_classes[] = {
  { "IOPRIO_CLASS_RT", 1 }, { "IOPRIO_CLASS_BE", 2 }, { "IOPRIO_CLASS_IDLE", 3 },
};

static const struct name_value personality_domains[] = {
  { "LINUX", PER_LINUX }, { "LINUX32", PER_LINUX32 },
};

enum { MPOL_NODES_NONE, MPOL_NODES_OPTIONAL, MPOL_NODES_REQUIRED };

static const struct {
  const char *name;
  int mode;
  int nodes;
} mpol_modes[] = {
  { "MPOL_DEFAULT", 0, MPOL_NODES_NONE },
  { "MPOL_PREFERRED", 1, MPOL_NODES_OPTIONAL },
  { "MPOL_BIND", 2, MPOL_NODES_REQUIRED },
  { "MPOL_INTERLEAVE", 3, MPOL_NODES_REQUIRED },
  { "MPOL_LOCAL", 4, MPOL_NODES_NONE },
  { "MPOL_PREFERRED_MANY", 5, MPOL_NODES_REQUIRED },
  { "MPOL_WEIGHTED_INTERLEAVE", 6, MPOL_NODES_REQUIRED },
};

static const struct name_value mpol_flags[] = {
  { "MPOL_F_NUMA_BALANCING", 1 << 13 },
  { "MPOL_F_RELATIVE_NODES", 1 << 14 },
  { "MPOL_F_STATIC_NODES", 1 << 15 },
};

static int
lookup (const struct name_value *t, size_t n, const char *name, const char *path, const char *what,
        unsigned long *out, brig_error *err)
{
  for (size_t i = 0; i < n; i++)
    if (strcmp (t[i].name, name) == 0)
      {
        *out = t[i].value;
        return 0;
      }
  return brig_error_set (err, 0, "%s: unknown %s \"%s\"", path, what, name);
}

/* Parse a kernel list ("0-3,8,10-11") into a bitmap of at most max bits;
 * *nbits receives one past the highest bit set. */
static int
parse_list (const char *s, const char *path, unsigned long **bits, size_t *nbits, brig_error *err)
{
  const size_t max = 1 << 16;
  const size_t word = sizeof (unsigned long) * CHAR_BIT;
  unsigned long *map = NULL;
  size_t top = 0;
  const char *p = s;

  if (*p == '\0')
    return brig_error_set (err, 0, "%s: empty list", path);
  while (*p)
    {
      char *end;
      unsigned long lo, hi;

      errno = 0;
      lo = strtoul (p, &end, 10);
      if (end == p || errno != 0 || *p == '-' || *p == '+')
        goto bad;
      hi = lo;
      if (*end == '-')
        {
          p = end + 1;
          hi = strtoul (p, &end, 10);
          if (end == p || errno != 0 || *p == '-' || *p == '+' || hi < lo)
            goto bad;
        }
      if (hi >= max)
        goto bad;
      if (hi + 1 > top)
        {
          size_t oldw = (top + word - 1) / word, neww = (hi + 1 + word - 1) / word;
          map = xrealloc (map, neww * sizeof *map);
          memset (map + oldw, 0, (neww - oldw) * sizeof *map);
          top = hi + 1;
        }
      for (unsigned long b = lo; b <= hi; b++)
        map[b / word] |= 1UL << (b % word);
      if (*end == ',')
        end++;
      else if (*end != '\0')
        goto bad;
      p = end;
    }
  *bits = map;
  *nbits = top;
  return 0;
bad:
  free (map);
  return brig_error_set (err, 0, "%s: invalid list \"%s\"", path, s);
}

static int
check_scheduler (const oci_scheduler *s, struct brig_sched_attr *attr, brig_error *err)
{
  unsigned long policy = 0, flag = 0;
  int r;

  memset (attr, 0, sizeof *attr);
  r = lookup (sched_policies, BRIG_ARRAY_SIZE (sched_policies), s->policy,
              "process.scheduler.policy", "policy", &policy, err);
  if (r < 0)
    return r;
  for (size_t i = 0; i < s->flags_len; i++)
    {
      char path[64];
      snprintf (path, sizeof path, "process.scheduler.flags[%zu]", i);
      r = lookup (sched_flags, BRIG_ARRAY_SIZE (sched_flags), s->flags[i], path, "flag", &flag, err);
      if (r < 0)
        return r;
      attr->sched_flags |= flag;
    }
  if (s->has_nice && (s->nice < -20 || s->nice > 19))
    return brig_error_set (err, 0, "process.scheduler.nice: %d is out of range (-20..19)", s->nice);
  if (policy == 1 || policy == 2)
    {
      if (!s->has_priority || s->priority < 1 || s->priority > 99)
        return brig_error_set (err, 0, "process.scheduler.priority: %s needs a priority in 1..99",
                               s->policy);
    }
  else if (s->has_priority && s->priority != 0)
    return brig_error_set (err, 0, "process.scheduler.priority: must be 0 for %s", s->policy);
  if (policy == 6)
    {
      if (!s->has_runtime || s->runtime == 0)
        return brig_error_set (err, 0, "process.scheduler.runtime: required for SCHED_DEADLINE");
      if (s->has_deadline && s->deadline < s->runtime)
        return brig_error_set (err, 0, "process.scheduler.deadline: must not be less than runtime");
      if (s->has_period && s->period < (s->has_deadline ? s->deadline : s->runtime))
        return brig_error_set (err, 0, "process.scheduler.period: must not be less than deadline");
    }
  attr->size = sizeof *attr;
  attr->sched_policy = (uint32_t) policy;
  attr->sched_nice = s->has_nice ? s->nice : 0;
  attr->sched_priority = s->has_priority ? (uint32_t) s->priority : 0;
  attr->sched_runtime = s->has_runtime ? s->runtime : 0;
  attr->sched_deadline = s->has_deadline ? s->deadline : 0;
  attr->sched_period = s->has_period ? s->period : 0;
  return 0;
}

static int
check_ioprio (const oci_io_priority *io, int *value, brig_error *err)
{
  unsigned long cls = 0;
  int r = lookup (io_classes, BRIG_ARRAY_SIZE (io_classes), io->class_, "process.ioPriority.class",
                  "class", &cls, err);
  int prio = io->has_priority ? io->priority : 0;

  if (r < 0)
    return r;
  if (prio < 0 || prio > 7)
    return brig_error_set (err, 0, "process.ioPriority.priority: %d is out of range (0..7)", prio);
  *value = (int) (cls << 13) | prio;
  return 0;
}

static int
check_personality (const oci_personality *p, unsigned long *value, brig_error *err)
{
  int r = lookup (personality_domains, BRIG_ARRAY_SIZE (personality_domains), p->domain,
                  "linux.personality.domain", "domain", value, err);
  if (r < 0)
    return r;
  if (p->flags_len > 0)
    return brig_error_set (err, 0, "linux.personality.flags[0]: unsupported flag \"%s\" "
                                   "(the spec defines none)", p->flags[0]);
  return 0;
}

static int
check_mempolicy (const oci_memory_policy *m, int *mode, unsigned long **nodes, size_t *nbits,
                 brig_error *err)
{
  int need = -1;
  int r;

  *nodes = NULL;
  *nbits = 0;
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (mpol_modes); i++)
    if (strcmp (mpol_modes[i].name, m->mode) == 0)
      {
        *mode = mpol_modes[i].mode;
        need = mpol_modes[i].nodes;
      }
  if (need < 0)
    return brig_error_set (err, 0, "linux.memoryPolicy.mode: unknown mode \"%s\"", m->mode);
  for (size_t i = 0; i < m->flags_len; i++)
    {
      char path[64];
      unsigned long f = 0;
      snprintf (path, sizeof path, "linux.memoryPolicy.flags[%zu]", i);
      r = lookup (mpol_flags, BRIG_ARRAY_SIZE (mpol_flags), m->flags[i], path, "flag", &f, err);
      if (r < 0)
        return r;
      *mode |= (int) f;
    }
  if (m->nodes != NULL && *m->nodes != '\0')
    {
      if (need == MPOL_NODES_NONE)
        return brig_error_set (err, 0, "linux.memoryPolicy.nodes: must be empty for %s", m->mode);
      return parse_list (m->nodes, "linux.memoryPolicy.nodes", nodes, nbits, err);
    }
  if (need == MPOL_NODES_REQUIRED)
    return brig_error_set (err, 0, "linux.memoryPolicy.nodes: required for %s", m->mode);
  return 0;
}

int
brig_procattr_validate (const oci_config *cfg, const oci_process *proc, brig_error *err)
{
  const oci_linux *l = cfg ? cfg->linux : NULL;
  int r;

  if (proc != NULL && proc->scheduler != NULL)
    {
      struct brig_sched_attr attr;
      r = check_scheduler (proc->scheduler, &attr, err);
      if (r < 0)
        return r;
    }
  if (proc != NULL && proc->io_priority != NULL)
    {
      int v;
      r = check_ioprio (proc->io_priority, &v, err);
      if (r < 0)
        return r;
    }
  if (proc != NULL && proc->exec_cpu_affinity != NULL)
    {
      const oci_cpu_affinity *a = proc->exec_cpu_affinity;
      _cleanup_free_ unsigned long *b1 = NULL, *b2 = NULL;
      size_t n;
      if (a->initial && (r = parse_list (a->initial, "process.execCPUAffinity.initial", &b1, &n, err)) < 0)
        return r;
      if (a->final && (r = parse_list (a->final, "process.execCPUAffinity.final", &b2, &n, err)) < 0)
        return r;
    }
  if (l != NULL && l->personality != NULL)
    {
      unsigned long v;
      r = check_personality (l->personality, &v, err);
      if (r < 0)
        return r;
    }
  if (l != NULL && l->memory_policy != NULL)
    {
      _cleanup_free_ unsigned long *nodes = NULL;
      size_t n;
      int mode;
      r = check_mempolicy (l->memory_policy, &mode, &nodes, &n, err);
      if (r < 0)
        return r;
    }
  return 0;
}

static int
set_affinity (const char *list, const char *path, brig_error *err)
{
  _cleanup_free_ unsigned long *bits = NULL;
  size_t nbits = 0;
  int r = parse_list (list, path, &bits, &nbits, err);

  if (r < 0)
    return r;
  /* The bitmap has the layout of cpu_set_t, in whole longs. */
  size_t bytes = (nbits + sizeof (unsigned long) * CHAR_BIT - 1) / (sizeof (unsigned long) * CHAR_BIT)
                 * sizeof (unsigned long);
  if (sched_setaffinity (0, bytes, (cpu_set_t *) bits) < 0)
    return brig_error_errno (err, "%s: sched_setaffinity %s", path, list);
  return 0;
}

const char *
brig_procattr_realtime_policy (const oci_process *proc)
{
  const char *p = proc && proc->scheduler ? proc->scheduler->policy : NULL;
  return p && (strcmp (p, "SCHED_FIFO") == 0 || strcmp (p, "SCHED_RR") == 0) ? p : NULL;
}

int
brig_procattr_affinity_initial (const oci_process *proc, brig_error *err)
{
  if (proc == NULL || proc->exec_cpu_affinity == NULL || proc->exec_cpu_affinity->initial == NULL)
    return 0;
  return set_affinity (proc->exec_cpu_affinity->initial, "process.execCPUAffinity.initial", err);
}

int
brig_procattr_apply (const oci_config *cfg, const oci_process *proc, brig_error *err)
{
  const oci_linux *l = cfg ? cfg->linux : NULL;
  int r;

  if (l != NULL && l->personality != NULL)
    {
      unsigned long v = 0;
      r = check_personality (l->personality, &v, err);
      if (r < 0)
        return r;
      if (personality (v) < 0)
        return brig_error_errno (err, "personality %s", l->personality->domain);
    }
  if (l != NULL && l->memory_policy != NULL)
    {
      _cleanup_free_ unsigned long *nodes = NULL;
      size_t nbits = 0;
      int mode = 0;
      r = check_mempolicy (l->memory_policy, &mode, &nodes, &nbits, err);
      if (r < 0)
        return r;
      /* maxnode counts bits, and the kernel ignores the last one. */
      if (syscall (SYS_set_mempolicy, mode, nodes, nodes ? nbits + 1 : 0) < 0)
        return brig_error_errno (err, "set_mempolicy %s", l->memory_policy->mode);
    }
  if (proc == NULL)
    return 0;
  if (proc->scheduler != NULL)
    {
      struct brig_sched_attr attr;
      r = check_scheduler (proc->scheduler, &attr, err);
      if (r < 0)
        return r;
      if (syscall (SYS_sched_setattr, 0, &attr, 0) < 0)
        {
          /* the kernel says only EPERM: name what a realtime policy needs */
          if (errno == EPERM && brig_procattr_realtime_policy (proc))
            return brig_error_errno (err, "sched_setattr %s (a realtime policy needs "
                                     "CAP_SYS_NICE in the initial user namespace and, with "
                                     "realtime group scheduling, a realtime budget in the "
                                     "cpu cgroup: linux.resources.cpu.realtimeRuntime)",
                                     proc->scheduler->policy);
          return brig_error_errno (err, "sched_setattr %s", proc->scheduler->policy);
        }
    }
  if (proc->io_priority != NULL)
    {
      int v = 0;
      r = check_ioprio (proc->io_priority, &v, err);
      if (r < 0)
        return r;
      /* IOPRIO_WHO_PROCESS = 1, who = 0: the calling process. */
      if (syscall (SYS_ioprio_set, 1, 0, v) < 0)
        return brig_error_errno (err, "ioprio_set %s", proc->io_priority->class_);
    }
  if (proc->exec_cpu_affinity != NULL && proc->exec_cpu_affinity->final != NULL)
    {
      r = set_affinity (proc->exec_cpu_affinity->final, "process.execCPUAffinity.final", err);
      if (r < 0)
        return r;
    }
  return 0;
}
