/* brig pool claim's options (claim.h): checked before a member is taken,
 * judged and bound with the member locked and vacant, before its process
 * runs; read by exec and state; undone by reset. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "container/state.h"
#include "container/tenancy.h"
#include "log.h"
#include "process/capnames.h"
#include "sandbox/check.h"
#include "sandbox/claim.h"
#include "sandbox/egress.h"
#include "sandbox/extension.h"
#include "sandbox/keeper.h"
#include "sandbox/reset_internal.h"
#include "paths.h"
#include "utils.h"

#define CLAIM_ENV_MAX 256
#define CLAIM_ENV_BYTES (128 * 1024)
#define CLAIM_LABELS_MAX 64
#define CLAIM_LABEL_VALUE_MAX 1024
#define CLAIM_MOUNTS_MAX 16
#define CLAIM_DEADLINE_MIN 0.1
#define CLAIM_DEADLINE_MAX (30.0 * 86400)

static void
map_free (oci_map *m)
{
  for (size_t i = 0; m && i < m->len; i++)
    {
      free (m->keys[i]);
      free (m->values[i]);
    }
  if (m)
    {
      free (m->keys);
      free (m->values);
      free (m);
    }
}

/* ---- prepare: every option checked, nothing of a member touched ---- */

static int
opt_kv (const char *opt, const char *s, const char **eq, brig_error *err)
{
  *eq = strchr (s, '=');
  if (*eq == NULL || *eq == s)
    return brig_error_say (err, EINVAL, "%s \"%.64s\": expected KEY=VALUE", opt, s);
  return 0;
}

/* --annotation: only the three egress keys; their values checked as far as
 * that is possible without the member (names are resolved at bind). */
static int
prepare_annotations (char **v, struct brig_claim *cl, brig_error *err)
{
  for (size_t i = 0; v && v[i]; i++)
    {
      const char *eq;
      _cleanup_free_ char *key = NULL;
      int r = opt_kv ("--annotation", v[i], &eq, err);
      if (r < 0)
        return r;
      key = xasprintf ("%.*s", (int) (eq - v[i]), v[i]);
      if (strcmp (key, BRIG_EGRESS_KEY) != 0 && strcmp (key, BRIG_EGRESS_ALLOW_KEY) != 0
          && strcmp (key, BRIG_EGRESS_DENY_KEY) != 0)
        return brig_error_say (err, EINVAL, "--annotation %s: only " BRIG_EGRESS_KEY ", "
                               BRIG_EGRESS_ALLOW_KEY " and " BRIG_EGRESS_DENY_KEY
                               " can be set at claim", key);
      if (strcmp (key, BRIG_EGRESS_KEY) == 0 && strcmp (eq + 1, "none") != 0
          && strcmp (eq + 1, "public") != 0 && strcmp (eq + 1, "allowlist") != 0)
        return brig_error_say (err, EINVAL, "--annotation " BRIG_EGRESS_KEY ": \"%s\" is not "
                               "none, public or allowlist", eq + 1);
      if (strcmp (key, BRIG_EGRESS_KEY) != 0)
        {
          _cleanup_free_ char *copy = xstrdup (eq + 1);
          char *save = NULL;
          bool allow = strcmp (key, BRIG_EGRESS_ALLOW_KEY) == 0;
          for (char *t = strtok_r (copy, ",", &save); t; t = strtok_r (NULL, ",", &save))
            {
              struct brig_egress_cidr c;
              char host[300];
              while (isspace ((unsigned char) *t))
                t++;
              for (char *e = t + strlen (t); e > t && isspace ((unsigned char) e[-1]);)
                *--e = '\0';
              if (*t && brig_egress_entry_parse (key, t, allow, &c, host, sizeof host, err) < 0)
                return brig_error_wrap (err, "--annotation");
            }
        }
      if (oci_map_set (&cl->egress, key, eq + 1) < 0)
        return brig_error_set (err, ENOMEM, "--annotation");
    }
  return 0;
}

static int
prepare_env (char **v, struct brig_claim *cl, brig_error *err)
{
  size_t n = 0, bytes = 0;

  for (; v && v[n]; n++)
    {
      const char *eq;
      int r = opt_kv ("--env", v[n], &eq, err);
      if (r < 0)
        return r;
      bytes += strlen (v[n]) + 1;
    }
  if (n > CLAIM_ENV_MAX || bytes > CLAIM_ENV_BYTES)
    return brig_error_say (err, E2BIG, "--env: %zu entries of %zu bytes: at most %d entries "
                           "and %d bytes", n, bytes, CLAIM_ENV_MAX, CLAIM_ENV_BYTES);
  cl->env = xmalloc0 ((n + 1) * sizeof *cl->env);
  for (size_t i = 0; i < n; i++)
    cl->env[i] = xstrdup (v[i]);
  return 0;
}

static int
label_key_ok (const char *k, size_t len)
{
  if (len == 0 || len > 63)
    return 0;
  for (size_t i = 0; i < len; i++)
    if (!isalnum ((unsigned char) k[i]) && k[i] != '_' && k[i] != '.' && k[i] != '-')
      return 0;
  return 1;
}

static int
prepare_labels (char **v, struct brig_claim *cl, brig_error *err)
{
  size_t n = 0;

  for (; v && v[n]; n++)
    {
      const char *eq;
      _cleanup_free_ char *key = NULL;
      int r = opt_kv ("--label", v[n], &eq, err);
      if (r < 0)
        return r;
      if (!label_key_ok (v[n], (size_t) (eq - v[n])))
        return brig_error_say (err, EINVAL, "--label \"%.64s\": the key must be 1-63 of "
                               "[A-Za-z0-9_.-]", v[n]);
      if (strlen (eq + 1) > CLAIM_LABEL_VALUE_MAX)
        return brig_error_say (err, EINVAL, "--label %.*s: the value is longer than %d bytes",
                               (int) (eq - v[n]), v[n], CLAIM_LABEL_VALUE_MAX);
      for (const char *c = eq + 1; *c; c++)
        if ((unsigned char) *c < 0x20 || *c == 0x7f)
          return brig_error_say (err, EINVAL, "--label %.*s: the value has a control character",
                                 (int) (eq - v[n]), v[n]);
      key = xasprintf ("%.*s", (int) (eq - v[n]), v[n]);
      oci_map_set (&cl->labels, key, eq + 1);
    }
  if (n > CLAIM_LABELS_MAX)
    return brig_error_say (err, E2BIG, "--label: %zu labels, at most %d", n, CLAIM_LABELS_MAX);
  return 0;
}

/* SRC opened without following any symlink: what is checked is what is
 * bound (the tree is cloned from this fd). */
static int
open_source (const char *src, int *fd, brig_error *err)
{
  struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                          .resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
  int f = (int) syscall (SYS_openat2, AT_FDCWD, src, &how, sizeof how);

  if (f < 0 && errno == ELOOP)
    return brig_error_say (err, ELOOP, "--mount %s: the source goes through a symlink: give "
                           "the real path", src);
  if (f < 0)
    return brig_error_errno (err, "--mount %s: the source must be a host directory", src);
  *fd = f;
  return 0;
}

static int
prepare_mount (const char *spec, struct brig_claim_mount *m, brig_error *err)
{
  _cleanup_free_ char *copy = xstrdup (spec);
  char *dst, *opt;

  m->srcfd = -1;
  dst = strchr (copy, ':');
  if (dst == NULL)
    return brig_error_say (err, EINVAL, "--mount \"%.128s\": expected SRC:DST[:ro]", spec);
  *dst++ = '\0';
  opt = strchr (dst, ':');
  if (opt)
    {
      *opt++ = '\0';
      if (strcmp (opt, "ro") != 0 && strcmp (opt, "rw") != 0)
        return brig_error_say (err, EINVAL, "--mount \"%.128s\": option \"%s\": only ro or rw",
                               spec, opt);
      m->ro = strcmp (opt, "ro") == 0;
    }
  if (copy[0] != '/' || dst[0] != '/')
    return brig_error_say (err, EINVAL, "--mount \"%.128s\": SRC and DST must be absolute paths",
                           spec);
  /* what the container resolves must be the path as written */
  for (const char *p = dst; (p = strstr (p, "..")); p += 2)
    if ((p == dst || p[-1] == '/') && (p[2] == '\0' || p[2] == '/'))
      return brig_error_say (err, EINVAL, "--mount \"%.128s\": DST must not have a \"..\" "
                             "component", spec);
  m->dst = brig_path_clean_lexical (dst);
  if (strcmp (m->dst, "/") == 0)
    return brig_error_say (err, EINVAL, "--mount \"%.128s\": DST must not be /", spec);
  m->src = xstrdup (copy);
  return open_source (m->src, &m->srcfd, err);
}

int
brig_claim_deadline (const char *s, uint64_t *ns, brig_error *err)
{
  struct timespec now;
  char *end;
  double v;

  if (s == NULL)
    return brig_error_say (err, EINVAL, "--deadline SECONDS is required");
  errno = 0;
  v = strtod (s, &end);
  if (*s == '\0' || *end != '\0' || errno || !(v == v) || v < CLAIM_DEADLINE_MIN
      || v > CLAIM_DEADLINE_MAX)
    return brig_error_say (err, EINVAL, "--deadline \"%.64s\": expected seconds from %.1f to %.0f "
                           "(30 days)", s, CLAIM_DEADLINE_MIN, CLAIM_DEADLINE_MAX);
  clock_gettime (CLOCK_BOOTTIME, &now);
  *ns = (uint64_t) now.tv_sec * 1000000000ull + (uint64_t) now.tv_nsec
        + (uint64_t) (v * 1e9 + 0.5);
  return 0;
}

int
brig_claim_prepare (const struct brig_context *ctx, const char *pool,
                    const struct brig_claim_opts *o, struct brig_claim *cl, brig_error *err)
{
  size_t n = 0;
  int r;

  memset (cl, 0, sizeof *cl);
  cl->ctx = ctx;
  cl->pool = pool;
  if ((r = prepare_annotations (o->annotations, cl, err)) < 0
      || (r = prepare_env (o->env, cl, err)) < 0 || (r = prepare_labels (o->labels, cl, err)) < 0
      || (o->deadline && (r = brig_claim_deadline (o->deadline, &cl->deadline_ns, err)) < 0))
    return r;
  for (; o->mounts && o->mounts[n]; n++)
    ;
  if (n > CLAIM_MOUNTS_MAX)
    return brig_error_say (err, E2BIG, "--mount: %zu mounts, at most %d", n, CLAIM_MOUNTS_MAX);
  cl->mounts = xmalloc0 ((n + 1) * sizeof *cl->mounts);
  for (size_t i = 0; i < n; i++)
    {
      cl->n_mounts++;
      if ((r = prepare_mount (o->mounts[i], &cl->mounts[i], err)) < 0)
        return r;
      for (size_t j = 0; j < i; j++)
        if (strcmp (cl->mounts[j].dst, cl->mounts[i].dst) == 0)
          return brig_error_say (err, EINVAL, "--mount: DST %s given twice", cl->mounts[i].dst);
    }
  return 0;
}

bool
brig_claim_any (const struct brig_claim *cl)
{
  return cl->egress || (cl->env && cl->env[0]) || cl->n_mounts || cl->deadline_ns || cl->labels;
}

void
brig_claim_clear (struct brig_claim *cl)
{
  if (cl->egress)
    map_free (cl->egress);
  if (cl->labels)
    map_free (cl->labels);
  brig_strv_free (cl->env);
  for (size_t i = 0; i < cl->n_mounts; i++)
    {
      free (cl->mounts[i].src);
      free (cl->mounts[i].dst);
      if (cl->mounts[i].srcfd >= 0)
        close (cl->mounts[i].srcfd);
    }
  free (cl->mounts);
  memset (cl, 0, sizeof *cl);
}

/* ---- bind: the member locked, created and vacant ---- */

static uint64_t
boottime_ns (void)
{
  struct timespec t;
  clock_gettime (CLOCK_BOOTTIME, &t);
  return (uint64_t) t.tv_sec * 1000000000ull + (uint64_t) t.tv_nsec;
}

/* An RFC 3339 UTC time, ns from now (may be negative). */
static char *
utc_in (int64_t ns)
{
  struct timespec t;
  struct tm tm;
  char buf[64];

  clock_gettime (CLOCK_REALTIME, &t);
  int64_t at = (int64_t) t.tv_sec * 1000000000 + t.tv_nsec + ns;
  time_t sec = (time_t) (at / 1000000000);
  gmtime_r (&sec, &tm);
  strftime (buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return xasprintf ("%s.%03dZ", buf, (int) ((at % 1000000000) / 1000000));
}

/* The member's config with what the claim adds, for the node policy. */
static oci_config *
claim_view (const oci_config *cfg, const struct brig_claim *cl)
{
  oci_config *v = oci_copy (&oci_config_type, cfg);

  for (size_t i = 0; cl->egress && i < cl->egress->len; i++)
    oci_map_set (&v->annotations, cl->egress->keys[i], cl->egress->values[i]);
  if (v->process)
    for (size_t i = 0; cl->env && cl->env[i]; i++)
      {
        v->process->env = xrealloc (v->process->env, (v->process->env_len + 2) * sizeof (char *));
        v->process->env[v->process->env_len++] = xstrdup (cl->env[i]);
        v->process->env[v->process->env_len] = NULL;
      }
  v->mounts = xrealloc (v->mounts, (v->mounts_len + cl->n_mounts + 1) * sizeof *v->mounts);
  for (size_t i = 0; i < cl->n_mounts; i++)
    {
      oci_mount *m = &v->mounts[v->mounts_len++];
      memset (m, 0, sizeof *m);
      m->destination = xstrdup (cl->mounts[i].dst);
      m->type = xstrdup ("bind");
      m->source = xstrdup (cl->mounts[i].src);
      m->options = xmalloc0 (4 * sizeof (char *));
      m->options[0] = xstrdup ("bind");
      m->options[1] = xstrdup ("nosuid");
      m->options[2] = xstrdup (cl->mounts[i].ro ? "ro" : "rw");
      m->options_len = 3;
    }
  return v;
}

/* Whether the bounding set of p holds CAP_SYS_ADMIN (by number). */
static bool
bounding_has_sys_admin (const oci_process *p)
{
  const oci_capabilities *c = p ? p->capabilities : NULL;
  for (size_t i = 0; c && i < c->bounding_len; i++)
    if (brig_cap_from_name (c->bounding[i]) == CAP_SYS_ADMIN)
      return true;
  return false;
}

/* The claim's egress policy, resolved now: the member's annotations with
 * the claim's keys in their place. */
static int
claim_egress (const brig_container *c, const struct brig_claim *cl, brig_egress_policy **pol,
              brig_error *err)
{
  const struct brig_ext_state *st = c->st.ext;
  const oci_map *a = c->st.annotations;
  oci_map *m = NULL;
  int r;

  if (st == NULL || st->egress == NULL || st->egress->enforcement == NULL
      || strncmp (st->egress->enforcement, "cgroup-bpf ", 11) != 0)
    return brig_error_say (err, EOPNOTSUPP, "--annotation " BRIG_EGRESS_KEY ": the pool's "
                           "members have no egress programs to hold a claim's policy: give "
                           "the bundle " BRIG_EGRESS_KEY);
  for (size_t i = 0; a && i < a->len; i++)
    oci_map_set (&m, a->keys[i], a->values[i]);
  for (size_t i = 0; i < cl->egress->len; i++)
    oci_map_set (&m, cl->egress->keys[i], cl->egress->values[i]);
  r = brig_egress_parse (m, st->egress->own_netns, pol, err);
  map_free (m);
  return r < 0 ? brig_error_wrap (err, "claim") : 0;
}

/* Whether the waiting init's bounding set (its process's, applied: the
 * init has become the process) holds CAP_SYS_ADMIN; true when it cannot
 * be read. */
static bool
init_bounding_has_sys_admin (const brig_container *c)
{
  char path[64];
  _cleanup_free_ char *buf = NULL;
  unsigned long long bnd;
  const char *l;

  snprintf (path, sizeof path, "/proc/%d/status", (int) c->st.pid);
  if (brig_read_file_at (AT_FDCWD, path, &buf, NULL, NULL) < 0
      || (l = strstr (buf, "\nCapBnd:")) == NULL || sscanf (l + 9, "%llx", &bnd) != 1)
    return true;
  return (bnd >> CAP_SYS_ADMIN) & 1;
}

/* The node policy, when there is one: the member's config with what the
 * claim adds, judged as exec is. One open(2) when there is none. */
static int
claim_policy (brig_container *c, struct brig_claim *cl, const brig_egress_policy *pol,
              brig_error *err)
{
  struct brig_policy_exec pe;
  struct brig_policy p;
  oci_config *cfg = NULL;
  bool found = false;
  int r = brig_policy_load (cl->ctx->policy, &p, &found, err);

  if (r < 0 || !found)
    return r;
  if ((r = brig_container_config (c, &cfg, err)) < 0)
    return r;
  r = brig_policy_exec_begin (cl->ctx->policy, cfg, &pe, err);
  if (r == 0 && pe.found)
    {
      oci_config *view = claim_view (cfg, cl);
      r = brig_policy_claim_check (&pe, view, pol, err);
      oci_config_free (view);
    }
  brig_policy_exec_clear (&pe);
  oci_config_free (cfg);
  return r;
}

/* Everything that may refuse the claim, before anything is applied. A
 * claim's egress policy needs no new capability judgement: a member with
 * egress programs was judged with a policy at create (the capabilities
 * that could bypass one are refused whatever its rules), and so is every
 * exec into it. */
static int
claim_judge (brig_container *c, struct brig_claim *cl, brig_egress_policy **pol,
             brig_error *err)
{
  int r;

  if (cl->deadline_ns && !c->st.new_pidns)
    return brig_error_say (err, EINVAL, "--deadline: the member has no pid namespace of its "
                           "own: every process could not be killed at once");
  for (size_t i = 0; i < cl->n_mounts; i++)
    if (cl->mounts[i].ro && init_bounding_has_sys_admin (c))
      return brig_error_say (err, EPERM, "--mount %s:%s:ro: the member's bounding set holds "
                             "CAP_SYS_ADMIN, with which its processes could remount it "
                             "read-write", cl->mounts[i].src, cl->mounts[i].dst);
  if (cl->egress && (r = claim_egress (c, cl, pol, err)) < 0)
    return r;
  return claim_policy (c, cl, *pol, err);
}

static int
claim_record (brig_container *c, const struct brig_claim *cl, const brig_egress_policy *pol,
              brig_error *err)
{
  oci_claim rec = { 0 };
  _cleanup_free_ char *json = NULL;
  size_t len = 0;
  int r;

  rec.generation = cl->gen;
  rec.has_generation = true;
  rec.claimed_at = utc_in (0);
  rec.labels = cl->labels;
  rec.env = cl->env;
  for (size_t i = 0; cl->env && cl->env[i]; i++)
    rec.env_len++;
  rec.mounts = xmalloc0 ((cl->n_mounts + 1) * sizeof *rec.mounts);
  for (size_t i = 0; i < cl->n_mounts; i++)
    {
      static char *ro[] = { "bind", "ro", "nosuid", "nodev", NULL };
      static char *rw[] = { "bind", "rw", "nosuid", "nodev", NULL };
      rec.mounts[i].source = cl->mounts[i].src;
      rec.mounts[i].destination = cl->mounts[i].dst;
      rec.mounts[i].options = cl->mounts[i].ro ? ro : rw;
      rec.mounts[i].options_len = 4;
    }
  rec.mounts_len = cl->n_mounts;
  rec.egress = cl->egress;
  rec.pinned = pol ? pol->pinned : NULL;
  if (cl->deadline_ns)
    {
      rec.deadline_ns = cl->deadline_ns;
      rec.has_deadline_ns = true;
      rec.deadline = utc_in ((int64_t) (cl->deadline_ns - boottime_ns ()));
    }
  json = oci_generate (&oci_claim_type, &rec, false, &len);
  free (rec.claimed_at);
  free (rec.deadline);
  free (rec.mounts);
  if (json == NULL)
    return brig_error_set (err, ENOMEM, "claim: record");
  r = brig_write_file_atomic (c->dirfd, BRIG_CLAIM_FILE, json, len, 0600, err);
  return r < 0 ? brig_error_wrap (err, "claim: record " BRIG_CLAIM_FILE) : 0;
}

/* The egress programs' directory from the state ("cgroup-bpf DIR"). */
static const char *
egress_dir (const brig_container *c)
{
  const struct brig_ext_state *st = c->st.ext;
  return st->egress->enforcement + 11;
}

int
brig_claim_bind (struct brig_container *c, unsigned long long gen, void *data, brig_error *err)
{
  struct brig_claim *cl = data;
  brig_egress_policy *pol = NULL;
  int r;

  cl->gen = gen;
  cl->stage = BRIG_CLAIM_JUDGED;
  cl->bind_failed = true;
  r = claim_judge (c, cl, &pol, err);
  if (r < 0)
    goto out;
  /* From here a failure leaves something to undo: the record says what. */
  cl->stage = BRIG_CLAIM_APPLYING;
  if ((r = claim_record (c, cl, pol, err)) < 0)
    goto out;
  if (pol && (r = brig_egress_swap (egress_dir (c), pol, err)) < 0)
    goto out;
  for (size_t i = 0; i < cl->n_mounts; i++)
    if ((r = brig_claim_mount (c->pidfd, cl->mounts[i].srcfd, cl->mounts[i].dst,
                               cl->mounts[i].ro, err)) < 0)
      {
        brig_error_wrap (err, "--mount %s:%s", cl->mounts[i].src, cl->mounts[i].dst);
        goto out;
      }
  if (cl->deadline_ns
      && (r = brig_keeper_lease (cl->ctx, cl->pool, c->id, gen, cl->deadline_ns, err)) < 0)
    goto out;
  cl->stage = BRIG_CLAIM_BOUND;
  cl->bind_failed = false;
out:
  if (pol)
    brig_egress_policy_free (pol);
  return r;
}

/* ---- after the bind: exec, state, reset ---- */

oci_claim *
brig_claim_read (int dirfd)
{
  _cleanup_free_ char *buf = NULL;
  size_t len;

  if (dirfd < 0 || brig_read_file_at (dirfd, BRIG_CLAIM_FILE, &buf, &len, NULL) < 0)
    return NULL;
  return oci_parse_data (&oci_claim_type, buf, len, BRIG_CLAIM_FILE, NULL);
}

static bool
env_has (char *const *v, size_t n, const char *kv)
{
  size_t klen = strcspn (kv, "=");
  for (size_t i = 0; v && (n == (size_t) -1 ? v[i] != NULL : i < n); i++)
    if (strncmp (v[i], kv, klen) == 0 && v[i][klen] == '=')
      return true;
  return false;
}

int
brig_claim_exec (int dirfd, oci_process *p, bool from_file, char *const *keep, brig_error *err)
{
  oci_claim *rec = brig_claim_read (dirfd);
  int r = 0;

  if (rec == NULL || p == NULL)
    goto out;
  for (size_t i = 0; i < rec->mounts_len; i++)
    for (size_t j = 0; j < rec->mounts[i].options_len; j++)
      if (strcmp (rec->mounts[i].options[j], "ro") == 0 && bounding_has_sys_admin (p))
        {
          r = brig_error_say (err, EPERM, "exec: the claim bound %s read-only: a process "
                              "with CAP_SYS_ADMIN could remount it read-write",
                              rec->mounts[i].destination);
          goto out;
        }
  for (size_t i = 0; i < rec->env_len; i++)
    {
      const char *kv = rec->env[i];
      size_t klen = strcspn (kv, "=");
      if (env_has (keep, (size_t) -1, kv) || (from_file && env_has (p->env, p->env_len, kv)))
        continue;
      /* replace the config's entry, else append */
      size_t k = 0;
      for (; k < p->env_len; k++)
        if (strncmp (p->env[k], kv, klen) == 0 && p->env[k][klen] == '=')
          break;
      if (k == p->env_len)
        {
          p->env = xrealloc (p->env, (p->env_len + 2) * sizeof (char *));
          p->env[p->env_len++] = NULL;
          p->env[p->env_len] = NULL;
        }
      free (p->env[k]);
      p->env[k] = xstrdup (kv);
    }
out:
  if (rec)
    oci_free (&oci_claim_type, rec);
  return r;
}

void
brig_claim_reset_egress (int dirfd, const oci_config *cfg, const oci_egress_state *es,
                         struct brig_reset_report *rep)
{
  oci_claim *rec = brig_claim_read (dirfd);
  brig_egress_policy *pol = NULL;
  brig_error e = { 0 };
  char *detail = NULL;
  int r;

  if (es == NULL || es->enforcement == NULL || strncmp (es->enforcement, "cgroup-bpf ", 11) != 0)
    goto out;
  r = brig_egress_parse_pinned (cfg->annotations, es->own_netns, es->pinned, &pol, &e);
  if (r == 0 && rec && rec->egress)
    r = brig_egress_swap (es->enforcement + 11, pol, &e);
  if (r < 0)
    {
      reset_check_add (rep, "egress.policy", false,
                       xasprintf ("the pool's policy could not be written back: %s",
                                  e.msg ? e.msg : strerror (-r)));
      goto out;
    }
  r = brig_egress_verify (es->enforcement + 11, pol, &detail);
  if (r < 0)
    reset_check_add (rep, "egress.policy", false,
                     xasprintf ("not checked: %s", detail ? detail : strerror (-r)));
  else
    reset_check_add (rep, "egress.policy", r == 1, r == 1 ? NULL : brig_steal_ptr (detail));
out:
  free (detail);
  brig_error_clear (&e);
  if (pol)
    brig_egress_policy_free (pol);
  if (rec)
    oci_free (&oci_claim_type, rec);
}

int
brig_claim_renew (const struct brig_context *ctx, const char *pool, const char *id,
                  const char *seconds, brig_error *err)
{
  _cleanup_container_ brig_container *c = NULL;
  struct brig_tenancy t;
  oci_claim *rec;
  _cleanup_free_ char *json = NULL;
  uint64_t dl = 0;
  size_t len = 0;
  int r;

  if ((r = brig_claim_deadline (seconds, &dl, err)) < 0
      || (r = brig_container_load (ctx, id, BRIG_LOCK_EXCLUSIVE, &c, err)) < 0)
    return r;
  if (brig_tenancy_read (c->dirfd, &t) < 0 || t.state != BRIG_TENANCY_TENANT)
    return brig_error_say (err, EINVAL, "container \"%s\" has no tenant to renew", id);
  if (!c->st.new_pidns)
    return brig_error_say (err, EINVAL, "--deadline: the member has no pid namespace of its "
                           "own: every process could not be killed at once");
  rec = brig_claim_read (c->dirfd);
  if (rec == NULL)
    {
      rec = xmalloc0 (sizeof *rec);
      rec->generation = t.gen;
      rec->has_generation = true;
    }
  rec->deadline_ns = dl;
  rec->has_deadline_ns = true;
  free (rec->deadline);
  rec->deadline = utc_in ((int64_t) (dl - boottime_ns ()));
  json = oci_generate (&oci_claim_type, rec, false, &len);
  oci_free (&oci_claim_type, rec);
  if (json == NULL)
    return brig_error_set (err, ENOMEM, "renew");
  if ((r = brig_write_file_atomic (c->dirfd, BRIG_CLAIM_FILE, json, len, 0600, err)) < 0)
    return brig_error_wrap (err, "renew: record " BRIG_CLAIM_FILE);
  return brig_keeper_lease (ctx, pool, id, t.gen, dl, err);
}

oci_egress_state *
brig_claim_egress_state (const oci_claim *rec, const oci_map *annotations,
                         const oci_egress_state *pool)
{
  brig_egress_policy *pol = NULL;
  oci_egress_state *out = NULL;
  oci_map *m = NULL;

  if (rec == NULL || rec->egress == NULL || pool == NULL || pool->enforcement == NULL
      || strncmp (pool->enforcement, "cgroup-bpf ", 11) != 0)
    return NULL;
  for (size_t i = 0; annotations && i < annotations->len; i++)
    oci_map_set (&m, annotations->keys[i], annotations->values[i]);
  for (size_t i = 0; i < rec->egress->len; i++)
    oci_map_set (&m, rec->egress->keys[i], rec->egress->values[i]);
  if (brig_egress_parse_pinned (m, pool->own_netns, rec->pinned, &pol, NULL) == 0)
    {
      out = brig_egress_state (pol, pool->enforcement + 11);
      brig_egress_policy_free (pol);
    }
  map_free (m);
  return out;
}

void
brig_claim_forget (int dirfd)
{
  unlinkat (dirfd, BRIG_CLAIM_FILE, 0);
}
