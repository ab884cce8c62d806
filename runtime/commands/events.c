/* brig events [--stats] [--interval D] ID: the container's cgroup
 * statistics as JSON lines in runc's shape, {"type":"stats","id":..,
 * "data":{...}}, once (--stats) or every interval, plus {"type":"oom",..}
 * lines when the kernel OOM-kills a process of the container. The stream
 * ends when the container stops. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "container/cgroup_ops.h"
#include "commands.h"
#include "sandbox/egress.h"
#include "utils.h"

/* A Go-style duration: "5s", "100ms", "1m30s", "1.5s" -> milliseconds. */
static int
parse_duration (const char *s, long long *ms)
{
  static const struct { const char *unit; double ms; } units[] = {
    { "ns", 1e-6 }, { "us", 1e-3 }, { "µs", 1e-3 }, { "ms", 1 }, { "s", 1000 },
    { "m", 60000 }, { "h", 3600000 },
  };
  double total = 0;
  const char *p = s;
  if (*p == '\0')
    return -1;
  while (*p)
    {
      char *end;
      double v = strtod (p, &end);
      size_t best = 0;
      int which = -1;
      if (end == p || v < 0)
        return -1;
      for (int i = 0; i < (int) BRIG_ARRAY_SIZE (units); i++)
        {
          size_t n = strlen (units[i].unit);
          if (strncmp (end, units[i].unit, n) == 0 && n > best)
            best = n, which = i;
        }
      if (which < 0)
        return -1;
      total += v * units[which].ms;
      p = end + best;
    }
  *ms = (long long) total;
  return total >= 1 ? 0 : -1;
}

static void
entry (FILE *f, const char *name, uint64_t limit, uint64_t usage, uint64_t max, uint64_t failcnt)
{
  fprintf (f, "\"%s\":{\"limit\":%" PRIu64, name, limit);
  if (usage)
    fprintf (f, ",\"usage\":%" PRIu64, usage);
  if (max)
    fprintf (f, ",\"max\":%" PRIu64, max);
  fprintf (f, ",\"failcnt\":%" PRIu64 "}", failcnt);
}

static void
blkio_list (FILE *f, const char *name, const struct brig_cgroup_blkio_entry *e, size_t n,
            bool *first)
{
  if (n == 0)
    return;
  fprintf (f, "%s\"%s\":[", *first ? "" : ",", name);
  *first = false;
  for (size_t i = 0; i < n; i++)
    {
      bool any = false;
      fputs (i ? ",{" : "{", f);
      if (e[i].major)
        fprintf (f, "\"major\":%" PRIu64, e[i].major), any = true;
      if (e[i].minor)
        fprintf (f, "%s\"minor\":%" PRIu64, any ? "," : "", e[i].minor), any = true;
      if (e[i].op[0])
        fprintf (f, "%s\"op\":\"%s\"", any ? "," : "", e[i].op), any = true;
      if (e[i].value)
        fprintf (f, "%s\"value\":%" PRIu64, any ? "," : "", e[i].value);
      fputc ('}', f);
    }
  fputc (']', f);
}

/* brig's own field of the stats: the egress denials per destination, when
 * the container has a policy (addresses come from inet_ntop: no escaping). */
static char *
egress_json (brig_cgroup *cg)
{
  _cleanup_free_ struct brig_egress_denial *d = NULL;
  size_t n = 0;
  uint64_t total = 0;
  char *buf = NULL;
  size_t len = 0;
  FILE *f;

  if (brig_egress_denials (brig_cgroup_unified_dir (cg), &d, &n, NULL) <= 0)
    return NULL;
  f = open_memstream (&buf, &len);
  if (f == NULL)
    return NULL;
  fputs ("\"brig\":{\"egress\":{\"denied\":[", f);
  for (size_t i = 0; i < n; i++)
    {
      const char *proto = d[i].proto == 6 ? "tcp" : d[i].proto == 17 ? "udp"
                          : d[i].proto == 1 ? "icmp" : d[i].proto == 58 ? "icmpv6" : NULL;
      fprintf (f, "%s{\"destination\":\"%s\",\"port\":%u,", i ? "," : "", d[i].addr,
               (unsigned) d[i].port);
      if (proto)
        fprintf (f, "\"protocol\":\"%s\",", proto);
      else
        fprintf (f, "\"protocol\":\"%u\",", (unsigned) d[i].proto);
      fprintf (f, "\"count\":%" PRIu64 "}", d[i].count);
      total += d[i].count;
    }
  fprintf (f, "],\"deniedTotal\":%" PRIu64 "}}", total);
  fclose (f);
  return buf;
}

/* The id is a checked container id ([A-Za-z0-9_+.-]); no escaping needed. */
static void
print_stats (const char *id, const struct brig_cgroup_stats *st, brig_cgroup *cg)
{
  _cleanup_free_ char *brig = egress_json (cg);
  FILE *f = stdout;
  bool first = true;

  fprintf (f, "{\"type\":\"stats\",\"id\":\"%s\",\"data\":{", id);
  /* cpu */
  fputs ("\"cpu\":{\"usage\":{", f);
  if (st->cpu.total)
    fprintf (f, "\"total\":%" PRIu64 ",", st->cpu.total);
  if (st->cpu.n_percpu)
    {
      fputs ("\"percpu\":[", f);
      for (size_t i = 0; i < st->cpu.n_percpu; i++)
        fprintf (f, "%s%" PRIu64, i ? "," : "", st->cpu.percpu[i]);
      fputs ("],", f);
    }
  fprintf (f, "\"kernel\":%" PRIu64 ",\"user\":%" PRIu64 "},\"throttling\":{", st->cpu.kernel,
           st->cpu.user);
  if (st->cpu.periods)
    fprintf (f, "\"periods\":%" PRIu64, st->cpu.periods), first = false;
  if (st->cpu.throttled_periods)
    fprintf (f, "%s\"throttled_periods\":%" PRIu64, first ? "" : ",", st->cpu.throttled_periods),
      first = false;
  if (st->cpu.throttled_time)
    fprintf (f, "%s\"throttled_time\":%" PRIu64, first ? "" : ",", st->cpu.throttled_time);
  fputs ("}},", f);
  /* cpuset */
  fputs ("\"cpuset\":{", f);
  first = true;
  if (st->cpuset.n_cpus)
    {
      fputs ("\"cpus\":[", f);
      for (size_t i = 0; i < st->cpuset.n_cpus; i++)
        fprintf (f, "%s%u", i ? "," : "", (unsigned) st->cpuset.cpus[i]);
      fputc (']', f);
      first = false;
    }
  if (st->cpuset.has_flags)
    fprintf (f, "%s\"cpu_exclusive\":%" PRIu64, first ? "" : ",", st->cpuset.cpu_exclusive), first = false;
  if (st->cpuset.n_mems)
    {
      fprintf (f, "%s\"mems\":[", first ? "" : ",");
      for (size_t i = 0; i < st->cpuset.n_mems; i++)
        fprintf (f, "%s%u", i ? "," : "", (unsigned) st->cpuset.mems[i]);
      fputc (']', f);
      first = false;
    }
  if (st->cpuset.has_flags)
    fprintf (f, "%s\"mem_hardwall\":%" PRIu64 ",\"mem_exclusive\":%" PRIu64
             ",\"memory_migrate\":%" PRIu64 ",\"memory_spread_page\":%" PRIu64
             ",\"memory_spread_slab\":%" PRIu64 ",\"memory_pressure\":%" PRIu64
             ",\"sched_load_balance\":%" PRIu64 ",\"sched_relax_domain_level\":%" PRId64,
             first ? "" : ",", st->cpuset.mem_hardwall, st->cpuset.mem_exclusive,
             st->cpuset.memory_migrate, st->cpuset.memory_spread_page,
             st->cpuset.memory_spread_slab, st->cpuset.memory_pressure,
             st->cpuset.sched_load_balance, st->cpuset.sched_relax_domain_level);
  fputs ("},", f);
  /* memory */
  fputs ("\"memory\":{", f);
  if (st->memory.cache)
    fprintf (f, "\"cache\":%" PRIu64 ",", st->memory.cache);
  entry (f, "usage", st->memory.limit, st->memory.usage, st->memory.max_usage, st->memory.failcnt);
  fputc (',', f);
  entry (f, "swap", st->memory.swap_limit, st->memory.swap_usage, st->memory.swap_max_usage,
         st->memory.swap_failcnt);
  fputc (',', f);
  entry (f, "kernel", st->memory.kernel_limit, st->memory.kernel_usage,
         st->memory.kernel_max_usage, st->memory.kernel_failcnt);
  fputs (",\"kernelTCP\":{\"limit\":0,\"failcnt\":0}", f);
  if (st->memory.n_stat)
    {
      fputs (",\"raw\":{", f);
      for (size_t i = 0; i < st->memory.n_stat; i++)
        fprintf (f, "%s\"%s\":%" PRIu64, i ? "," : "", st->memory.stat_keys[i],
                 st->memory.stat_values[i]);
      fputc ('}', f);
    }
  fputs ("},", f);
  /* pids */
  fputs ("\"pids\":{", f);
  first = true;
  if (st->pids.current)
    fprintf (f, "\"current\":%" PRIu64, st->pids.current), first = false;
  if (st->pids.limit)
    fprintf (f, "%s\"limit\":%" PRIu64, first ? "" : ",", st->pids.limit);
  fputs ("},", f);
  /* blkio */
  fputs ("\"blkio\":{", f);
  first = true;
  blkio_list (f, "ioServiceBytesRecursive", st->io_bytes, st->n_io_bytes, &first);
  blkio_list (f, "ioServicedRecursive", st->io_ops, st->n_io_ops, &first);
  fputs ("},", f);
  /* hugetlb */
  fputs ("\"hugetlb\":{", f);
  for (size_t i = 0; i < st->n_hugetlb; i++)
    {
      const struct brig_cgroup_hugetlb *h = &st->hugetlb[i];
      fprintf (f, "%s\"%s\":{", i ? "," : "", h->size);
      if (h->usage)
        fprintf (f, "\"usage\":%" PRIu64 ",", h->usage);
      if (h->max)
        fprintf (f, "\"max\":%" PRIu64 ",", h->max);
      fprintf (f, "\"failcnt\":%" PRIu64 "}", h->failcnt);
    }
  fputc ('}', f);
  if (brig)
    fprintf (f, ",%s", brig);
  fputs ("}}\n", f);
  fflush (f);
}

int
cmd_events (struct brig_globals *g, int argc, char **argv)
{
  static const struct option opts[] = {
    { "stats", no_argument, NULL, 's' },
    { "interval", required_argument, NULL, 'i' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  struct brig_context ctx = cli_context (g, 0);
  brig_error err = { 0 };
  brig_events *ev = NULL;
  struct brig_cgroup_stats st;
  long long interval = 5000, next;
  uint64_t ooms = 0, cur;
  bool once = false;
  const char *id;
  int c;

  while ((c = getopt_long_only (argc, argv, "h", opts, NULL)) != -1)
    switch (c)
      {
      case 's': once = true; break;
      case 'i':
        if (parse_duration (optarg, &interval) < 0)
          return cli_usage_error ("events", "--interval: invalid duration \"%s\" (e.g. 5s, 500ms)",
                                  optarg);
        break;
      case 'h':
        printf ("Usage: brig events [--stats] [--interval DURATION] CONTAINER_ID\n\n"
                "Print the container's resource statistics as JSON lines every DURATION\n"
                "(default 5s), and an {\"type\":\"oom\"} line on every OOM kill, until the\n"
                "container stops. --stats prints the statistics once and exits.\n");
        return 0;
      default: return 1;
      }
  if (cli_require_args ("events", argc, argv, optind, 1) < 0)
    return 1;
  id = argv[optind];
  if (brig_events_open (&ctx, id, &ev, &err) < 0)
    return cli_fail (&err);

  if (once)
    {
      int r = brig_cgroup_stats (brig_events_cgroup (ev), &st, &err);
      if (r == 0)
        {
          print_stats (id, &st, brig_events_cgroup (ev));
          brig_cgroup_stats_clear (&st);
        }
      brig_events_close (ev);
      return r < 0 ? cli_fail (&err) : 0;
    }

  brig_cgroup_oom_count (brig_events_cgroup (ev), &ooms);
  next = brig_mono_ms ();
  /* OOM kills are checked every 100 ms, the statistics every interval. */
  while (brig_events_running (ev))
    {
      if (brig_cgroup_oom_count (brig_events_cgroup (ev), &cur) == 0 && cur > ooms)
        {
          for (; ooms < cur; ooms++)
            printf ("{\"type\":\"oom\",\"id\":\"%s\"}\n", id);
          fflush (stdout);
        }
      if (brig_mono_ms () >= next)
        {
          if (brig_cgroup_stats (brig_events_cgroup (ev), &st, NULL) == 0)
            {
              print_stats (id, &st, brig_events_cgroup (ev));
              brig_cgroup_stats_clear (&st);
            }
          next += interval;
        }
      brig_sleep_ms (next - brig_mono_ms () < 100 ? (next - brig_mono_ms () > 0 ? next - brig_mono_ms () : 1) : 100);
    }
  brig_events_close (ev);
  return 0;
}
