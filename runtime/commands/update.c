/* brig update [flags] ID: change the cgroup limits of a container, with
 * runc's flags and `--resources FILE|-` (an OCI linux.resources object).
 * Flags override the values read from the file. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "container/cgroup_ops.h"
#include "commands.h"
#include "utils.h"

static void
update_usage (void)
{
  printf ("Usage: brig update [options] CONTAINER_ID\n"
          "\n"
          "Update the resource limits of a running (or created, or paused) container.\n"
          "Sizes take a unit suffix: 512m, 1g (powers of 1024).\n"
          "\n"
          "  --resources, -r FILE      linux.resources JSON from FILE, or '-' for stdin\n"
          "  --memory SIZE             memory limit (-1: none)\n"
          "  --memory-reservation SIZE soft memory limit\n"
          "  --memory-swap SIZE        memory+swap limit (-1: unlimited swap)\n"
          "  --kernel-memory SIZE      obsolete, ignored with a warning\n"
          "  --kernel-memory-tcp SIZE  kernel TCP buffer limit (cgroup v1)\n"
          "  --cpu-shares, --cpu-share N  relative CPU weight\n"
          "  --cpu-quota N             CFS quota in microseconds per period (-1: none)\n"
          "  --cpu-period N            CFS period in microseconds\n"
          "  --cpu-rt-runtime N        realtime runtime in microseconds (cgroup v1)\n"
          "  --cpu-rt-period N         realtime period in microseconds (cgroup v1)\n"
          "  --cpuset-cpus LIST        CPUs to run on (0-3,5)\n"
          "  --cpuset-mems LIST        memory nodes to use\n"
          "  --pids-limit N            maximum number of tasks (-1 or 0: none)\n"
          "  --blkio-weight N          block IO weight, 10 to 1000\n"
          "  --l3-cache-schema S       Intel RDT L3 schema (not supported)\n"
          "  --mem-bw-schema S         Intel RDT memory bandwidth schema (not supported)\n");
}

/* "512m", "1g", "1024", "-1": bytes (binary units, as runc's RAMInBytes). */
static int
parse_size (const char *flag, const char *s, int64_t *out)
{
  char *end;
  double v;
  int64_t mult = 1;

  errno = 0;
  v = strtod (s, &end);
  if (errno || end == s)
    goto bad;
  while (*end == ' ')
    end++;
  switch (tolower ((unsigned char) *end))
    {
    case '\0': break;
    case 'b': mult = 1; end++; break;
    case 'k': mult = 1LL << 10; end++; break;
    case 'm': mult = 1LL << 20; end++; break;
    case 'g': mult = 1LL << 30; end++; break;
    case 't': mult = 1LL << 40; end++; break;
    case 'p': mult = 1LL << 50; end++; break;
    default: goto bad;
    }
  if (mult > 1 && (*end == 'i' || *end == 'I'))
    end++;
  if (mult > 1 && (*end == 'b' || *end == 'B'))
    end++;
  if (*end != '\0')
    goto bad;
  if (v < 0)
    {
      if (v != -1 || mult != 1)
        goto bad;
      *out = -1;
      return 0;
    }
  if (v * (double) mult > 9.2e18)
    goto bad;
  *out = (int64_t) (v * (double) mult);
  return 0;
bad:
  cli_usage_error ("update", "%s: invalid size \"%s\"", flag, s);
  return -1;
}

static int
parse_int (const char *flag, const char *s, int64_t *out)
{
  char *end;
  errno = 0;
  *out = strtoll (s, &end, 10);
  if (errno || end == s || *end)
    {
      cli_usage_error ("update", "%s: invalid number \"%s\"", flag, s);
      return -1;
    }
  return 0;
}

static int
parse_uint (const char *flag, const char *s, uint64_t *out)
{
  int64_t v;
  if (parse_int (flag, s, &v) < 0)
    return -1;
  if (v < 0)
    {
      cli_usage_error ("update", "%s: must not be negative: \"%s\"", flag, s);
      return -1;
    }
  *out = (uint64_t) v;
  return 0;
}

static oci_resources *
read_resources (const char *path, brig_error *err)
{
  _cleanup_free_ char *buf = NULL;
  size_t len = 0;
  oci_error oe = { 0 };
  oci_resources *res;
  int r;

  if (strcmp (path, "-") == 0)
    r = brig_read_fd (STDIN_FILENO, &buf, &len, err);
  else
    r = brig_read_file_at (AT_FDCWD, path, &buf, &len, err);
  if (r < 0)
    {
      brig_error_wrap (err, "update: --resources");
      return NULL;
    }
  res = oci_parse_data (&oci_resources_type, buf, len,
                        strcmp (path, "-") == 0 ? "stdin" : path, &oe);
  if (res == NULL)
    {
      brig_error_set (err, 0, "update: --resources: %s", oe.msg ? oe.msg : "cannot parse");
      free (oe.msg);
    }
  return res;
}

enum {
  OPT_MEMORY = 256, OPT_MEMORY_RES, OPT_MEMORY_SWAP, OPT_KMEM, OPT_KMEM_TCP, OPT_CPU_SHARES,
  OPT_CPU_QUOTA, OPT_CPU_PERIOD, OPT_RT_RUNTIME, OPT_RT_PERIOD, OPT_CPUS, OPT_MEMS, OPT_PIDS,
  OPT_BLKIO, OPT_L3, OPT_MEMBW,
};

/* The flags' values, applied over the file's. */
struct update_flags {
  struct { bool set; int64_t v; } mem, memres, swap, kmem, kmemtcp, quota, rtrun, pids;
  struct { bool set; uint64_t v; } shares, period, rtper, blkio;
  const char *cpus, *mems;
};

/* One flag into f: 0, 1 (stop: the error is printed) or 2 (--help). */
static int
update_flag (int c, struct update_flags *f)
{
  switch (c)
    {
    case OPT_MEMORY: if (parse_size ("--memory", optarg, &f->mem.v) < 0) return 1; f->mem.set = true; break;
    case OPT_MEMORY_RES: if (parse_size ("--memory-reservation", optarg, &f->memres.v) < 0) return 1; f->memres.set = true; break;
    case OPT_MEMORY_SWAP: if (parse_size ("--memory-swap", optarg, &f->swap.v) < 0) return 1; f->swap.set = true; break;
    case OPT_KMEM: if (parse_size ("--kernel-memory", optarg, &f->kmem.v) < 0) return 1; f->kmem.set = true; break;
    case OPT_KMEM_TCP: if (parse_size ("--kernel-memory-tcp", optarg, &f->kmemtcp.v) < 0) return 1; f->kmemtcp.set = true; break;
    case OPT_CPU_SHARES: if (parse_uint ("--cpu-shares", optarg, &f->shares.v) < 0) return 1; f->shares.set = true; break;
    case OPT_CPU_QUOTA: if (parse_int ("--cpu-quota", optarg, &f->quota.v) < 0) return 1; f->quota.set = true; break;
    case OPT_CPU_PERIOD: if (parse_uint ("--cpu-period", optarg, &f->period.v) < 0) return 1; f->period.set = true; break;
    case OPT_RT_RUNTIME: if (parse_int ("--cpu-rt-runtime", optarg, &f->rtrun.v) < 0) return 1; f->rtrun.set = true; break;
    case OPT_RT_PERIOD: if (parse_uint ("--cpu-rt-period", optarg, &f->rtper.v) < 0) return 1; f->rtper.set = true; break;
    case OPT_CPUS: f->cpus = optarg; break;
    case OPT_MEMS: f->mems = optarg; break;
    case OPT_PIDS: if (parse_int ("--pids-limit", optarg, &f->pids.v) < 0) return 1; f->pids.set = true; break;
    case OPT_BLKIO:
      if (parse_uint ("--blkio-weight", optarg, &f->blkio.v) < 0)
        return 1;
      if (f->blkio.v != 0 && (f->blkio.v < 10 || f->blkio.v > 1000))
        return cli_usage_error ("update", "--blkio-weight: %s is outside 10..1000", optarg);
      f->blkio.set = true;
      break;
    case OPT_L3:
    case OPT_MEMBW:
      return cli_usage_error ("update", "--%s: Intel RDT is not supported by brig",
                              c == OPT_L3 ? "l3-cache-schema" : "mem-bw-schema");
    case 'h': update_usage (); return 2;
    default: return 1;
    }
  return 0;
}

/* The flags' values over res (the file's, or empty). */
static void
apply_flags (oci_resources *res, const struct update_flags *f)
{
  if (f->mem.set || f->memres.set || f->swap.set || f->kmem.set || f->kmemtcp.set)
    {
      oci_memory *m = res->memory ? res->memory : (res->memory = xmalloc0 (sizeof *m));
      if (f->mem.set) m->limit = f->mem.v, m->has_limit = true;
      if (f->memres.set) m->reservation = f->memres.v, m->has_reservation = true;
      if (f->swap.set) m->swap = f->swap.v, m->has_swap = true;
      if (f->kmem.set) m->kernel = f->kmem.v, m->has_kernel = true;
      if (f->kmemtcp.set) m->kernel_tcp = f->kmemtcp.v, m->has_kernel_tcp = true;
    }
  if (f->shares.set || f->quota.set || f->period.set || f->rtrun.set || f->rtper.set || f->cpus
      || f->mems)
    {
      oci_cpu *p = res->cpu ? res->cpu : (res->cpu = xmalloc0 (sizeof *p));
      if (f->shares.set) p->shares = f->shares.v, p->has_shares = true;
      if (f->quota.set) p->quota = f->quota.v, p->has_quota = true;
      if (f->period.set) p->period = f->period.v, p->has_period = true;
      if (f->rtrun.set) p->realtime_runtime = f->rtrun.v, p->has_realtime_runtime = true;
      if (f->rtper.set) p->realtime_period = f->rtper.v, p->has_realtime_period = true;
      if (f->cpus) free (p->cpus), p->cpus = xstrdup (f->cpus);
      if (f->mems) free (p->mems), p->mems = xstrdup (f->mems);
    }
  if (f->pids.set)
    {
      if (res->pids == NULL)
        res->pids = xmalloc0 (sizeof *res->pids);
      res->pids->limit = f->pids.v;
      res->pids->has_limit = true;
    }
  if (f->blkio.set)
    {
      if (res->block_io == NULL)
        res->block_io = xmalloc0 (sizeof *res->block_io);
      res->block_io->weight = (uint32_t) f->blkio.v;
      res->block_io->has_weight = true;
    }
}

int
cmd_update (struct brig_globals *g, int argc, char **argv)
{
  static const struct option opts[] = {
    { "resources", required_argument, NULL, 'r' },
    { "memory", required_argument, NULL, OPT_MEMORY },
    { "memory-reservation", required_argument, NULL, OPT_MEMORY_RES },
    { "memory-swap", required_argument, NULL, OPT_MEMORY_SWAP },
    { "kernel-memory", required_argument, NULL, OPT_KMEM },
    { "kernel-memory-tcp", required_argument, NULL, OPT_KMEM_TCP },
    { "cpu-shares", required_argument, NULL, OPT_CPU_SHARES },
    { "cpu-share", required_argument, NULL, OPT_CPU_SHARES },
    { "cpu-quota", required_argument, NULL, OPT_CPU_QUOTA },
    { "cpu-period", required_argument, NULL, OPT_CPU_PERIOD },
    { "cpu-rt-runtime", required_argument, NULL, OPT_RT_RUNTIME },
    { "cpu-rt-period", required_argument, NULL, OPT_RT_PERIOD },
    { "cpuset-cpus", required_argument, NULL, OPT_CPUS },
    { "cpuset-mems", required_argument, NULL, OPT_MEMS },
    { "pids-limit", required_argument, NULL, OPT_PIDS },
    { "blkio-weight", required_argument, NULL, OPT_BLKIO },
    { "l3-cache-schema", required_argument, NULL, OPT_L3 },
    { "mem-bw-schema", required_argument, NULL, OPT_MEMBW },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  struct brig_context ctx = cli_context (g, CLI_POLICY);
  struct update_flags f = { 0 };
  brig_error err = { 0 };
  const char *file = NULL;
  oci_resources *res = NULL;
  int c, rc = 1;

  while ((c = getopt_long_only (argc, argv, "r:h", opts, NULL)) != -1)
    {
      if (c == 'r')
        file = optarg;
      else if ((rc = update_flag (c, &f)) != 0)
        return rc == 2 ? 0 : rc;
    }
  if (cli_require_args ("update", argc, argv, optind, 1) < 0)
    return 1;
  if (file)
    {
      res = read_resources (file, &err);
      if (res == NULL)
        return cli_fail (&err);
    }
  else
    res = xmalloc0 (sizeof *res);
  apply_flags (res, &f);
  if (brig_container_update (&ctx, argv[optind], res, &err) < 0)
    rc = cli_fail (&err);
  else
    rc = 0;
  oci_free (&oci_resources_type, res);
  return rc;
}
