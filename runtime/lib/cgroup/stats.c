/* Statistics of a container's cgroup for `brig events`, read from the v1
 * files (cpuacct, memory, pids, blkio, hugetlb) or the v2 ones (cpu.stat,
 * memory.*, io.stat, hugetlb.*), into the shape runc reports. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "cgroup/internal.h"
#include "utils.h"

static uint64_t
u64_of (const char *dir, const char *file)
{
  uint64_t v = 0;
  if (dir == NULL || brig_cgroup_read_u64 (dir, file, &v) < 0)
    return 0;
  return v == UINT64_MAX ? 0 : v;
}

/* A limit: "max" / huge values mean none; runc prints the raw maximum. */
static uint64_t
limit_of (const char *dir, const char *file)
{
  uint64_t v = 0;
  if (dir == NULL || brig_cgroup_read_u64 (dir, file, &v) < 0)
    return 0;
  return v;
}

static void
read_keyed_all (const char *dir, const char *file, struct brig_cgroup_stats *st)
{
  _cleanup_free_ char *text = NULL;
  char *save = NULL, *line;
  if (dir == NULL || brig_cgroup_read (dir, file, &text) < 0)
    return;
  for (line = strtok_r (text, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      char *sp = strchr (line, ' ');
      if (sp == NULL)
        continue;
      *sp = '\0';
      st->memory.stat_keys = xrealloc (st->memory.stat_keys,
                                       (st->memory.n_stat + 1) * sizeof (char *));
      st->memory.stat_values = xrealloc (st->memory.stat_values,
                                         (st->memory.n_stat + 1) * sizeof (uint64_t));
      st->memory.stat_keys[st->memory.n_stat] = xstrdup (line);
      st->memory.stat_values[st->memory.n_stat] = strtoull (sp + 1, NULL, 10);
      st->memory.n_stat++;
    }
}

static uint64_t
stat_value (const struct brig_cgroup_stats *st, const char *key)
{
  for (size_t i = 0; i < st->memory.n_stat; i++)
    if (strcmp (st->memory.stat_keys[i], key) == 0)
      return st->memory.stat_values[i];
  return 0;
}

static void
push_io (struct brig_cgroup_blkio_entry **v, size_t *n, uint64_t major, uint64_t minor,
         const char *op, uint64_t value)
{
  *v = xrealloc (*v, (*n + 1) * sizeof **v);
  (*v)[*n].major = major;
  (*v)[*n].minor = minor;
  snprintf ((*v)[*n].op, sizeof (*v)[*n].op, "%s", op);
  (*v)[*n].value = value;
  (*n)++;
}

/* v1 blkio: "8:0 Read 4096" lines (and a final "Total N"). */
static void
read_blkio_v1 (const char *dir, const char *file, struct brig_cgroup_blkio_entry **v, size_t *n)
{
  _cleanup_free_ char *text = NULL;
  char *save = NULL, *line;
  if (brig_cgroup_read (dir, file, &text) < 0)
    return;
  for (line = strtok_r (text, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      unsigned long long maj, min, val;
      char op[16];
      if (sscanf (line, "%llu:%llu %15s %llu", &maj, &min, op, &val) == 4)
        push_io (v, n, maj, min, op, val);
    }
}

/* v2 io.stat: "8:0 rbytes=1 wbytes=2 rios=3 wios=4 dbytes=0 dios=0". */
static void
read_io_v2 (const char *dir, struct brig_cgroup_stats *st)
{
  _cleanup_free_ char *text = NULL;
  char *save = NULL, *line;
  if (brig_cgroup_read (dir, "io.stat", &text) < 0)
    return;
  for (line = strtok_r (text, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      unsigned long long maj, min;
      uint64_t rb = 0, wb = 0, ri = 0, wi = 0;
      char *tok, *s2 = NULL;
      if (sscanf (line, "%llu:%llu", &maj, &min) != 2)
        continue;
      for (tok = strtok_r (line, " ", &s2); tok; tok = strtok_r (NULL, " ", &s2))
        {
          if (strncmp (tok, "rbytes=", 7) == 0) rb = strtoull (tok + 7, NULL, 10);
          else if (strncmp (tok, "wbytes=", 7) == 0) wb = strtoull (tok + 7, NULL, 10);
          else if (strncmp (tok, "rios=", 5) == 0) ri = strtoull (tok + 5, NULL, 10);
          else if (strncmp (tok, "wios=", 5) == 0) wi = strtoull (tok + 5, NULL, 10);
        }
      push_io (&st->io_bytes, &st->n_io_bytes, maj, min, "Read", rb);
      push_io (&st->io_bytes, &st->n_io_bytes, maj, min, "Write", wb);
      push_io (&st->io_bytes, &st->n_io_bytes, maj, min, "Total", rb + wb);
      push_io (&st->io_ops, &st->n_io_ops, maj, min, "Read", ri);
      push_io (&st->io_ops, &st->n_io_ops, maj, min, "Write", wi);
      push_io (&st->io_ops, &st->n_io_ops, maj, min, "Total", ri + wi);
    }
}

/* Hugepage sizes from /sys/kernel/mm/hugepages ("hugepages-2048kB" -> "2MB"). */
static void
read_hugetlb (const char *dir, bool v2, struct brig_cgroup_stats *st)
{
  _cleanup_closedir_ DIR *d = opendir ("/sys/kernel/mm/hugepages");
  struct dirent *de;
  if (d == NULL || dir == NULL)
    return;
  while ((de = readdir (d)))
    {
      unsigned long long kb;
      char name[32];
      _cleanup_free_ char *usage = NULL, *max = NULL, *fail = NULL;
      struct brig_cgroup_hugetlb *h;
      if (sscanf (de->d_name, "hugepages-%llukB", &kb) != 1)
        continue;
      if (kb >= 1048576 && kb % 1048576 == 0)
        snprintf (name, sizeof name, "%lluGB", kb / 1048576);
      else if (kb >= 1024 && kb % 1024 == 0)
        snprintf (name, sizeof name, "%lluMB", kb / 1024);
      else
        snprintf (name, sizeof name, "%lluKB", kb);
      st->hugetlb = xrealloc (st->hugetlb, (st->n_hugetlb + 1) * sizeof *st->hugetlb);
      h = &st->hugetlb[st->n_hugetlb++];
      memset (h, 0, sizeof *h);
      snprintf (h->size, sizeof h->size, "%s", name);
      if (v2)
        {
          _cleanup_free_ char *events = NULL;
          usage = xasprintf ("hugetlb.%s.current", name);
          h->usage = u64_of (dir, usage);
          fail = xasprintf ("hugetlb.%s.events", name);
          if (brig_cgroup_read (dir, fail, &events) == 0)
            brig_cgroup_keyed_u64 (events, "max", &h->failcnt);
        }
      else
        {
          usage = xasprintf ("hugetlb.%s.usage_in_bytes", name);
          max = xasprintf ("hugetlb.%s.max_usage_in_bytes", name);
          fail = xasprintf ("hugetlb.%s.failcnt", name);
          h->usage = u64_of (dir, usage);
          h->max = u64_of (dir, max);
          h->failcnt = u64_of (dir, fail);
        }
    }
}

/* "0-2,5" -> {0,1,2,5} */
static void
read_list (const char *dir, const char *file, uint16_t **out, size_t *n)
{
  _cleanup_free_ char *text = NULL;
  char *p;
  if (dir == NULL || brig_cgroup_read (dir, file, &text) < 0)
    return;
  for (p = text; *p;)
    {
      char *end;
      unsigned long a = strtoul (p, &end, 10), b;
      if (end == p)
        break;
      b = a;
      if (*end == '-')
        b = strtoul (end + 1, &end, 10);
      for (unsigned long i = a; i <= b && i < 65536 && *n < 65536; i++)
        {
          *out = xrealloc (*out, (*n + 1) * sizeof **out);
          (*out)[(*n)++] = (uint16_t) i;
        }
      p = *end == ',' ? end + 1 : end;
      if (*end != ',')
        break;
    }
}

static void
read_cpuset (const char *dir, bool v2, struct brig_cgroup_stats *st)
{
  if (dir == NULL)
    return;
  read_list (dir, v2 ? "cpuset.cpus.effective" : "cpuset.cpus", &st->cpuset.cpus, &st->cpuset.n_cpus);
  read_list (dir, v2 ? "cpuset.mems.effective" : "cpuset.mems", &st->cpuset.mems, &st->cpuset.n_mems);
  if (v2)
    return;
  st->cpuset.has_flags = true;
  st->cpuset.cpu_exclusive = u64_of (dir, "cpuset.cpu_exclusive");
  st->cpuset.mem_hardwall = u64_of (dir, "cpuset.mem_hardwall");
  st->cpuset.mem_exclusive = u64_of (dir, "cpuset.mem_exclusive");
  st->cpuset.memory_migrate = u64_of (dir, "cpuset.memory_migrate");
  st->cpuset.memory_spread_page = u64_of (dir, "cpuset.memory_spread_page");
  st->cpuset.memory_spread_slab = u64_of (dir, "cpuset.memory_spread_slab");
  st->cpuset.memory_pressure = u64_of (dir, "cpuset.memory_pressure");
  st->cpuset.sched_load_balance = u64_of (dir, "cpuset.sched_load_balance");
  {
    _cleanup_free_ char *t = NULL;
    if (brig_cgroup_read (dir, "cpuset.sched_relax_domain_level", &t) == 0)
      st->cpuset.sched_relax_domain_level = strtoll (t, NULL, 10);
  }
}

static void
stats_v1 (brig_cgroup *cg, struct brig_cgroup_stats *st)
{
  const char *acct = brig_cgroup_v1_dir (cg, "cpuacct"), *cpu = brig_cgroup_v1_dir (cg, "cpu");
  const char *mem = brig_cgroup_v1_dir (cg, "memory"), *pids = brig_cgroup_v1_dir (cg, "pids");
  const char *blkio = brig_cgroup_v1_dir (cg, "blkio"), *huge = brig_cgroup_v1_dir (cg, "hugetlb");
  _cleanup_free_ char *text = NULL;
  long hz = sysconf (_SC_CLK_TCK);

  if (acct)
    {
      uint64_t v = 0;
      st->cpu.total = u64_of (acct, "cpuacct.usage");
      if (brig_cgroup_read (acct, "cpuacct.usage_percpu", &text) == 0)
        {
          char *p = text, *end;
          for (;;)
            {
              v = strtoull (p, &end, 10);
              if (end == p)
                break;
              st->cpu.percpu = xrealloc (st->cpu.percpu, (st->cpu.n_percpu + 1) * sizeof (uint64_t));
              st->cpu.percpu[st->cpu.n_percpu++] = v;
              p = end;
            }
          free (text);
          text = NULL;
        }
      if (brig_cgroup_read (acct, "cpuacct.stat", &text) == 0 && hz > 0)
        {
          if (brig_cgroup_keyed_u64 (text, "user", &v) == 0)
            st->cpu.user = v * (1000000000ULL / (uint64_t) hz);
          if (brig_cgroup_keyed_u64 (text, "system", &v) == 0)
            st->cpu.kernel = v * (1000000000ULL / (uint64_t) hz);
        }
      free (text);
      text = NULL;
    }
  if (cpu && brig_cgroup_read (cpu, "cpu.stat", &text) == 0)
    {
      brig_cgroup_keyed_u64 (text, "nr_periods", &st->cpu.periods);
      brig_cgroup_keyed_u64 (text, "nr_throttled", &st->cpu.throttled_periods);
      brig_cgroup_keyed_u64 (text, "throttled_time", &st->cpu.throttled_time);
    }
  if (mem)
    {
      st->memory.usage = u64_of (mem, "memory.usage_in_bytes");
      st->memory.max_usage = u64_of (mem, "memory.max_usage_in_bytes");
      st->memory.limit = limit_of (mem, "memory.limit_in_bytes");
      st->memory.failcnt = u64_of (mem, "memory.failcnt");
      st->memory.swap_usage = u64_of (mem, "memory.memsw.usage_in_bytes");
      st->memory.swap_max_usage = u64_of (mem, "memory.memsw.max_usage_in_bytes");
      st->memory.swap_limit = limit_of (mem, "memory.memsw.limit_in_bytes");
      st->memory.swap_failcnt = u64_of (mem, "memory.memsw.failcnt");
      st->memory.kernel_usage = u64_of (mem, "memory.kmem.usage_in_bytes");
      st->memory.kernel_limit = limit_of (mem, "memory.kmem.limit_in_bytes");
      st->memory.kernel_max_usage = u64_of (mem, "memory.kmem.max_usage_in_bytes");
      st->memory.kernel_failcnt = u64_of (mem, "memory.kmem.failcnt");
      st->memory.use_hierarchy = u64_of (mem, "memory.use_hierarchy") == 1;
      read_keyed_all (mem, "memory.stat", st);
      st->memory.cache = stat_value (st, "cache");
    }
  read_cpuset (brig_cgroup_v1_dir (cg, "cpuset"), false, st);
  st->pids.current = u64_of (pids, "pids.current");
  st->pids.limit = pids ? u64_of (pids, "pids.max") : 0;
  if (blkio)
    {
      read_blkio_v1 (blkio, "blkio.io_service_bytes_recursive", &st->io_bytes, &st->n_io_bytes);
      if (st->n_io_bytes == 0)
        read_blkio_v1 (blkio, "blkio.throttle.io_service_bytes_recursive", &st->io_bytes,
                       &st->n_io_bytes);
      read_blkio_v1 (blkio, "blkio.io_serviced_recursive", &st->io_ops, &st->n_io_ops);
      if (st->n_io_ops == 0)
        read_blkio_v1 (blkio, "blkio.throttle.io_serviced_recursive", &st->io_ops, &st->n_io_ops);
    }
  if (huge)
    read_hugetlb (huge, false, st);
  else if (cg->unified)
    read_hugetlb (cg->unified, true, st);
}

static void
stats_v2 (brig_cgroup *cg, struct brig_cgroup_stats *st)
{
  const char *dir = cg->unified;
  _cleanup_free_ char *text = NULL;
  uint64_t v;

  if (brig_cgroup_read (dir, "cpu.stat", &text) == 0)
    {
      if (brig_cgroup_keyed_u64 (text, "usage_usec", &v) == 0)
        st->cpu.total = v * 1000;
      if (brig_cgroup_keyed_u64 (text, "user_usec", &v) == 0)
        st->cpu.user = v * 1000;
      if (brig_cgroup_keyed_u64 (text, "system_usec", &v) == 0)
        st->cpu.kernel = v * 1000;
      brig_cgroup_keyed_u64 (text, "nr_periods", &st->cpu.periods);
      brig_cgroup_keyed_u64 (text, "nr_throttled", &st->cpu.throttled_periods);
      if (brig_cgroup_keyed_u64 (text, "throttled_usec", &v) == 0)
        st->cpu.throttled_time = v * 1000;
      free (text);
      text = NULL;
    }
  st->memory.usage = u64_of (dir, "memory.current");
  st->memory.max_usage = u64_of (dir, "memory.peak");
  st->memory.limit = limit_of (dir, "memory.max");
  if (brig_cgroup_read (dir, "memory.events", &text) == 0)
    brig_cgroup_keyed_u64 (text, "max", &st->memory.failcnt);
  /* runc reports swap as memory+swap, as v1 does */
  st->memory.swap_usage = u64_of (dir, "memory.swap.current") + st->memory.usage;
  st->memory.swap_limit = limit_of (dir, "memory.swap.max");
  st->memory.use_hierarchy = true;
  read_keyed_all (dir, "memory.stat", st);
  st->memory.cache = stat_value (st, "file");
  read_cpuset (dir, true, st);
  st->pids.current = u64_of (dir, "pids.current");
  st->pids.limit = u64_of (dir, "pids.max");
  read_io_v2 (dir, st);
  read_hugetlb (dir, true, st);
}

int
brig_cgroup_stats (brig_cgroup *cg, struct brig_cgroup_stats *st, brig_error *err)
{
  memset (st, 0, sizeof *st);
  if (cg->n_dirs == 0)
    return brig_error_set (err, 0, "stats: the container has no cgroup");
  if (access (cg->dirs[0].path, F_OK) < 0)
    return brig_error_errno (err, "stats: %s", cg->dirs[0].path);
  if (cg->mode == BRIG_CGROUP_V2)
    stats_v2 (cg, st);
  else
    stats_v1 (cg, st);
  brig_cgroup_oom_count (cg, &st->oom_kills);
  return 0;
}

void
brig_cgroup_stats_clear (struct brig_cgroup_stats *st)
{
  free (st->cpu.percpu);
  free (st->cpuset.cpus);
  free (st->cpuset.mems);
  for (size_t i = 0; i < st->memory.n_stat; i++)
    free (st->memory.stat_keys[i]);
  free (st->memory.stat_keys);
  free (st->memory.stat_values);
  free (st->io_bytes);
  free (st->io_ops);
  free (st->hugetlb);
  memset (st, 0, sizeof *st);
}

int
brig_cgroup_oom_count (brig_cgroup *cg, uint64_t *count)
{
  _cleanup_free_ char *text = NULL;
  const char *dir;
  int r;

  *count = 0;
  if (cg->mode == BRIG_CGROUP_V2)
    {
      if (cg->unified == NULL)
        return -ENOENT;
      r = brig_cgroup_read (cg->unified, "memory.events", &text);
    }
  else
    {
      if ((dir = brig_cgroup_v1_dir (cg, "memory")) == NULL)
        return -ENOENT;
      r = brig_cgroup_read (dir, "memory.oom_control", &text);
    }
  if (r < 0)
    return r;
  return brig_cgroup_keyed_u64 (text, "oom_kill", count);
}
