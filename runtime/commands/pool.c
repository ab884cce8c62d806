/* brig pool fill NAME --bundle DIR --size N | claim NAME | release ID |
 *           status NAME [--format table|json] | drain NAME */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commands.h"
#include "sandbox/claim.h"
#include "sandbox/keeper.h"
#include "sandbox/pool.h"
#include "container/state.h"
#include "utils.h"

static void
pool_usage (FILE *out)
{
  fprintf (out,
           "Usage: brig pool fill NAME --bundle DIR --size N\n"
           "       brig pool claim NAME [--annotation K=V]... [--env K=V]...\n"
           "                       [--mount SRC:DST[:ro]]... [--deadline SECONDS] [--label K=V]...\n"
           "       brig pool renew ID --deadline SECONDS\n"
           "       brig pool release ID [--generation GEN]\n"
           "       brig pool status NAME [--format table|json]\n"
           "       brig pool drain NAME\n"
           "\n"
           "Warm containers created ahead from one bundle (docs/sandbox.md \"Pools\").\n"
           "\n"
           "  fill     create members (ids NAME-<12 hex digits>) until N are available;\n"
           "           prints the new ids (--bundle only at the first fill)\n"
           "  claim    start an available member and print its id; exit 1 when empty;\n"
           "           its options are bound before the member's process runs: egress\n"
           "           annotations (run.brig.egress, .allow, .deny), env (also of every\n"
           "           exec), host directories (:ro read-only), a deadline (a lease: the\n"
           "           member is killed and released then), labels\n"
           "  renew    move the deadline of a claimed member's lease\n"
           "  release  reset a claimed member (prints the checks as `brig reset`) and\n"
           "           make it available again; a failed reset deletes it (exit 1);\n"
           "           --generation: only while its tenancy is GEN (the lease keeper's)\n"
           "  status   the members, their pool state and container status, counts\n"
           "  drain    delete every member (force) and the pool; prints how many\n");
}

/* release --generation GEN (the keeper's): only that tenancy. */
static const char *release_gen;

/* Options of one subcommand: only --help, or fill's, or status's. */
static int
parse (const char *sub, int argc, char **argv, const char **bundle, const char **size,
       int *json, bool *help)
{
  static const struct option opts[] = {
    { "bundle", required_argument, NULL, 'b' },
    { "size", required_argument, NULL, 'n' },
    { "format", required_argument, NULL, 'f' },
    { "generation", required_argument, NULL, 'g' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  int c;

  optind = 0;
  *help = false;
  while ((c = getopt_long_only (argc, argv, "b:n:f:g:h", opts, NULL)) != -1)
    switch (c)
      {
      case 'g':
        if (strcmp (sub, "pool release") != 0)
          return cli_usage_error (sub, "--generation is an option of release only") ? -1 : -1;
        release_gen = optarg;
        break;
      case 'b':
      case 'n':
        if (bundle == NULL)
          return cli_usage_error (sub, "--bundle and --size are options of fill only") ? -1 : -1;
        if (c == 'b')
          *bundle = optarg;
        else
          *size = optarg;
        break;
      case 'f':
        if (json == NULL)
          return cli_usage_error (sub, "--format is an option of status only") ? -1 : -1;
        if ((*json = cli_parse_format (sub, optarg)) < 0)
          return -1;
        break;
      case 'h': *help = true; return 0;
      default: return -1;
      }
  return cli_require_args (sub, argc, argv, optind, 1);
}

static int
pool_fill (struct brig_globals *g, int argc, char **argv)
{
  struct brig_context ctx;
  _cleanup_strv_ char **made = NULL;
  const char *bundle = NULL, *size = NULL;
  brig_error err = { 0 };
  char *end;
  unsigned long n;
  bool help;
  int r;

  if (parse ("pool fill", argc, argv, &bundle, &size, NULL, &help) < 0)
    return 1;
  if (help)
    return pool_usage (stdout), 0;
  if (size == NULL)
    return cli_usage_error ("pool fill", "--size N is required");
  n = strtoul (size, &end, 10);
  if (*size < '0' || *size > '9' || *end != '\0' || n > 4096)
    return cli_usage_error ("pool fill", "invalid --size \"%s\": expected 0..4096", size);
  ctx = cli_context (g, CLI_POLICY | CLI_USERNS_RANGE);
  r = brig_pool_fill (&ctx, argv[optind], bundle, n, &made, &err);
  for (char **id = made; id && *id; id++)
    printf ("%s\n", *id);
  fflush (stdout);
  return r < 0 ? cli_fail (&err) : 0;
}

static void
strv_push (char ***v, size_t *n, char *s)
{
  *v = xrealloc (*v, (*n + 2) * sizeof (char *));
  (*v)[(*n)++] = s;
  (*v)[*n] = NULL;
}

/* claim's and renew's options: lists of borrowed argv strings. */
static int
parse_claim (const char *sub, int argc, char **argv, struct brig_claim_opts *o, bool *help)
{
  static const struct option opts[] = {
    { "annotation", required_argument, NULL, 'a' },
    { "env", required_argument, NULL, 'e' },
    { "mount", required_argument, NULL, 'm' },
    { "deadline", required_argument, NULL, 'd' },
    { "label", required_argument, NULL, 'l' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  size_t na = 0, ne = 0, nm = 0, nl = 0;
  bool renew = strcmp (sub, "pool renew") == 0;
  int c;

  optind = 0;
  *help = false;
  while ((c = getopt_long_only (argc, argv, "a:e:m:d:l:h", opts, NULL)) != -1)
    {
      if (renew && c != 'd' && c != 'h' && c != '?')
        return cli_usage_error (sub, "only --deadline can be renewed") ? -1 : -1;
      switch (c)
        {
        case 'a': strv_push (&o->annotations, &na, optarg); break;
        case 'e': strv_push (&o->env, &ne, optarg); break;
        case 'm': strv_push (&o->mounts, &nm, optarg); break;
        case 'l': strv_push (&o->labels, &nl, optarg); break;
        case 'd':
          if (o->deadline)
            return cli_usage_error (sub, "--deadline given twice") ? -1 : -1;
          o->deadline = optarg;
          break;
        case 'h': *help = true; return 0;
        default: return -1;
        }
    }
  return cli_require_args (sub, argc, argv, optind, 1);
}

static void
claim_opts_free (struct brig_claim_opts *o)
{
  free (o->annotations);
  free (o->env);
  free (o->mounts);
  free (o->labels);
}

static int
pool_renew (struct brig_globals *g, int argc, char **argv)
{
  struct brig_context ctx;
  struct brig_claim_opts o = { 0 };
  brig_error err = { 0 };
  bool help;
  int r;

  r = parse_claim ("pool renew", argc, argv, &o, &help);
  claim_opts_free (&o);
  if (r < 0)
    return 1;
  if (help)
    return pool_usage (stdout), 0;
  ctx = cli_context (g, CLI_POLICY | CLI_USERNS_RANGE);
  if (brig_pool_renew (&ctx, argv[optind], o.deadline, &err) < 0)
    return cli_fail (&err);
  return 0;
}

static int
pool_claim (struct brig_globals *g, int argc, char **argv)
{
  struct brig_context ctx;
  struct brig_claim_opts o = { 0 };
  _cleanup_free_ char *id = NULL;
  brig_error err = { 0 };
  bool help;
  int r;

  if (parse_claim ("pool claim", argc, argv, &o, &help) < 0)
    {
      claim_opts_free (&o);
      return 1;
    }
  if (help)
    return claim_opts_free (&o), pool_usage (stdout), 0;
  ctx = cli_context (g, CLI_POLICY | CLI_USERNS_RANGE);
  r = brig_pool_claim (&ctx, argv[optind], &o, &id, &err);
  claim_opts_free (&o);
  if (r < 0)
    return cli_fail (&err);
  printf ("%s\n", id);
  return fflush (stdout) == 0 ? 0 : 1;
}

static int
pool_release (struct brig_globals *g, int argc, char **argv)
{
  struct brig_context ctx;
  struct brig_reset_report rep = { 0 };
  unsigned long long gen = 0;
  struct timespec t0, t1;
  brig_error err = { 0 };
  bool help;
  int r;

  if (parse ("pool release", argc, argv, NULL, NULL, NULL, &help) < 0)
    return 1;
  if (help)
    return pool_usage (stdout), 0;
  if (release_gen)
    {
      char *end;
      gen = strtoull (release_gen, &end, 10);
      if (*release_gen < '1' || *release_gen > '9' || *end != '\0')
        return cli_usage_error ("pool release", "invalid --generation \"%s\"", release_gen);
    }
  ctx = cli_context (g, CLI_POLICY | CLI_USERNS_RANGE);
  clock_gettime (CLOCK_MONOTONIC, &t0);
  r = brig_pool_release_gen (&ctx, argv[optind], gen, &rep, &err);
  clock_gettime (CLOCK_MONOTONIC, &t1);
  /* the keeper's release of a tenancy that ended already: nothing to do */
  if (release_gen && r < 0 && rep.n == 0 && (err.code == ESTALE || err.code == ENOENT))
    return 0;
  /* Only a reset that ran has checks to show. */
  if (r == 0 || rep.n > 0)
    cli_print_reset_report (argv[optind], &rep, r == 0,
                  (double) (t1.tv_sec - t0.tv_sec) * 1e3 + (double) (t1.tv_nsec - t0.tv_nsec) / 1e6);
  brig_reset_report_free (&rep);
  return r < 0 ? cli_fail (&err) : 0;
}

/* A claim's labels, lease and time in status's JSON (after "pid"). */
static void
print_claim_json (const oci_claim *cl)
{
  if (cl == NULL)
    return;
  fputs (",\"labels\":{", stdout);
  for (size_t i = 0; cl->labels && i < cl->labels->len; i++)
    {
      fputs (i ? "," : "", stdout);
      brig_json_write_string (stdout, cl->labels->keys[i]);
      fputc (':', stdout);
      brig_json_write_string (stdout, cl->labels->values[i]);
    }
  fputs ("},\"lease\":", stdout);
  if (cl->deadline)
    brig_json_write_string (stdout, cl->deadline);
  else
    fputs ("null", stdout);
  fputs (",\"claimedAt\":", stdout);
  if (cl->claimed_at)
    brig_json_write_string (stdout, cl->claimed_at);
  else
    fputs ("null", stdout);
}

/* One row of status's table: LABELS as k=v,... cut at 40 characters. */
static void
print_claim_row (const char *id, const char *pool, const char *status, long long pid,
                 const oci_claim *cl)
{
  char labels[41] = "";
  size_t len = 0;

  for (size_t i = 0; cl && cl->labels && i < cl->labels->len && len < 40; i++)
    len += (size_t) snprintf (labels + len, sizeof labels - len, "%s%s=%s", i ? "," : "",
                              cl->labels->keys[i], cl->labels->values[i]);
  printf ("%-30s %-10s %-9s %-8lld %-25s %s\n", id, pool, status, pid,
          cl && cl->deadline ? cl->deadline : "-", labels);
}

static int
pool_status (struct brig_globals *g, int argc, char **argv)
{
  struct brig_context ctx;
  struct brig_pool_info info;
  brig_error err = { 0 };
  int json = 0;
  bool help;

  if (parse ("pool status", argc, argv, NULL, NULL, &json, &help) < 0)
    return 1;
  if (help)
    return pool_usage (stdout), 0;
  ctx = cli_context (g, CLI_POLICY | CLI_USERNS_RANGE);
  if (brig_pool_status (&ctx, argv[optind], &info, &err) < 0)
    return cli_fail (&err);

  if (json)
    {
      fputs ("{\"pool\":", stdout);
      brig_json_write_string (stdout, argv[optind]);
      fputs (",\"bundle\":", stdout);
      if (info.bundle)
        brig_json_write_string (stdout, info.bundle);
      else
        fputs ("null", stdout);
      fputs (",\"members\":[", stdout);
    }
  else
    printf ("%-30s %-10s %-9s %-8s %-25s %s\n", "ID", "POOL", "STATUS", "PID", "LEASE", "LABELS");
  for (size_t i = 0; i < info.n; i++)
    {
      const struct brig_pool_member *m = &info.members[i];
      brig_container *c = NULL;
      const char *status = "missing";
      long long pid = 0;
      oci_claim *cl = NULL;
      /* The container's own status from live facts, as list shows it. */
      if (brig_container_load_any (&ctx, m->id, BRIG_LOCK_NONE, &c, NULL) == 0)
        {
          status = c->status == BRIG_STATUS_UNKNOWN ? "unknown" : brig_status_name (c->status);
          if (c->status != BRIG_STATUS_STOPPED)
            pid = c->st.pid;
          if (m->state == BRIG_POOL_CLAIMED)
            cl = brig_claim_read (c->dirfd);
        }
      if (json)
        {
          fputs (i ? ",{\"id\":" : "{\"id\":", stdout);
          brig_json_write_string (stdout, m->id);
          printf (",\"pool\":\"%s\",\"status\":\"%s\",\"pid\":%lld",
                  brig_pool_state_name (m->state), status, pid);
          print_claim_json (cl);
          fputs ("}", stdout);
        }
      else
        print_claim_row (m->id, brig_pool_state_name (m->state), status, pid, cl);
      if (cl)
        oci_free (&oci_claim_type, cl);
      brig_container_free (c);
    }
  if (json)
    {
      fputs ("],\"counts\":{", stdout);
      for (int s = 0; s < BRIG_POOL_NSTATES; s++)
        printf ("\"%s\":%zu,", brig_pool_state_name ((enum brig_pool_state) s), info.count[s]);
      const char *l = info.last_failure;
      size_t ll = l ? strlen (l) : 0;
      printf ("\"total\":%zu},\"keeper\":%d,\"failures\":{\"count\":%zu,\"last\":", info.n,
              (int) brig_keeper_pid (&ctx, argv[optind]), info.failures);
      /* the log's own JSON line; anything else (a damaged log) as a string */
      if (l == NULL)
        fputs ("null", stdout);
      else if (l[0] == '{' && l[ll - 1] == '}')
        fputs (l, stdout);
      else
        brig_json_write_string (stdout, l);
      fputs ("}}\n", stdout);
    }
  else
    {
      printf ("%zu member%s:", info.n, info.n == 1 ? "" : "s");
      for (int s = 0; s < BRIG_POOL_NSTATES; s++)
        printf (" %zu %s%s", info.count[s], brig_pool_state_name ((enum brig_pool_state) s),
                s + 1 < BRIG_POOL_NSTATES ? "," : "\n");
      pid_t k = brig_keeper_pid (&ctx, argv[optind]);
      if (k > 0)
        printf ("lease keeper: pid %d\n", (int) k);
      else
        printf ("lease keeper: not running (leases are enforced at the next pool command)\n");
      if (info.failures)
        printf ("failures: %zu (last: %s)\n", info.failures, info.last_failure);
    }
  brig_pool_info_clear (&info);
  return fflush (stdout) == 0 ? 0 : 1;
}

static int
pool_drain (struct brig_globals *g, int argc, char **argv)
{
  struct brig_context ctx;
  brig_error err = { 0 };
  size_t deleted;
  bool help;

  if (parse ("pool drain", argc, argv, NULL, NULL, NULL, &help) < 0)
    return 1;
  if (help)
    return pool_usage (stdout), 0;
  ctx = cli_context (g, CLI_POLICY | CLI_USERNS_RANGE);
  if (brig_pool_drain (&ctx, argv[optind], &deleted, &err) < 0)
    return cli_fail (&err);
  /* Say what was done: a silent drain reads as one that did nothing. */
  printf ("pool \"%s\" drained: %zu member%s deleted, the pool removed\n", argv[optind],
          deleted, deleted == 1 ? "" : "s");
  return fflush (stdout) == 0 ? 0 : 1;
}

int
cmd_pool (struct brig_globals *g, int argc, char **argv)
{
  static const struct {
    const char *name;
    int (*run) (struct brig_globals *g, int argc, char **argv);
  } subs[] = {
    { "fill", pool_fill }, { "claim", pool_claim }, { "release", pool_release },
    { "status", pool_status }, { "drain", pool_drain }, { "renew", pool_renew },
  };

  if (argc < 2 || strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0
      || strcmp (argv[1], "help") == 0)
    {
      pool_usage (argc < 2 ? stderr : stdout);
      return argc < 2 ? 1 : 0;
    }
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (subs); i++)
    if (strcmp (argv[1], subs[i].name) == 0)
      return subs[i].run (g, argc - 1, argv + 1);
  return cli_usage_error ("pool", "unknown subcommand \"%s\" (fill, claim, release, status, "
                          "drain, renew)", argv[1]);
}
