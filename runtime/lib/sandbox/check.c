/* `brig check`: runs the rules (check_rules.c) over a config, formats the
 * report as a table or JSON, and enforces a node policy at create. */
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <yajl/yajl_tree.h>

#include "container/resources_record.h"
#include "sandbox/check_internal.h"
#include "utils.h"

static const char *const profile_names[] = { "baseline", "restricted", "sandbox" };
static const char *const severity_names[] = { "info", "low", "medium", "high", "critical" };

int
brig_check_profile_parse (const char *s, enum brig_check_profile *out)
{
  for (int i = 0; i <= BRIG_PROFILE_SANDBOX; i++)
    if (s && strcmp (s, profile_names[i]) == 0)
      {
        *out = (enum brig_check_profile) i;
        return 0;
      }
  return -EINVAL;
}

int
brig_check_severity_parse (const char *s, enum brig_check_severity *out)
{
  for (int i = 0; i < BRIG_SEV_COUNT; i++)
    if (s && strcmp (s, severity_names[i]) == 0)
      {
        *out = (enum brig_check_severity) i;
        return 0;
      }
  return -EINVAL;
}

const char *
brig_check_profile_name (enum brig_check_profile p)
{
  return profile_names[p];
}

const char *
brig_check_severity_name (enum brig_check_severity s)
{
  return severity_names[s];
}

void
brig_check_config (const oci_config *cfg, enum brig_check_profile profile,
                   enum brig_check_severity fail_on, struct brig_check_report *rep)
{
  brig_check_run (cfg, NULL, profile, fail_on, rep);
}

void
brig_check_run (const oci_config *cfg, const struct brig_check_input *in,
                enum brig_check_profile profile, enum brig_check_severity fail_on,
                struct brig_check_report *rep)
{
  static const struct brig_check_input none;
  char dir[PATH_MAX];

  memset (rep, 0, sizeof *rep);
  rep->profile = profile;
  rep->fail_on = fail_on;
  rep->in = in ? in : &none;
  /* Relative mount sources are the bundle's (runtime-spec); an absolute
   * bundle keeps them absolute for the rules that compare host paths. */
  rep->bundle = realpath (rep->in->bundle ? rep->in->bundle : ".", dir) ? dir : NULL;
  check_run_rules (cfg, rep);
  rep->bundle = NULL;
  rep->in = NULL;
  /* Worst first; a stable insertion sort keeps rule order within a
   * severity (and the report stable from run to run). */
  for (size_t i = 1; i < rep->len; i++)
    {
      struct brig_finding f = rep->findings[i];
      size_t j = i;
      for (; j > 0 && rep->findings[j - 1].severity < f.severity; j--)
        rep->findings[j] = rep->findings[j - 1];
      rep->findings[j] = f;
    }
}

bool
brig_check_failed (const struct brig_check_report *rep)
{
  for (int s = rep->fail_on; s < BRIG_SEV_COUNT; s++)
    if (rep->counts[s])
      return true;
  return false;
}

void
brig_check_report_clear (struct brig_check_report *rep)
{
  for (size_t i = 0; i < rep->len; i++)
    {
      free (rep->findings[i].path);
      free (rep->findings[i].message);
    }
  free (rep->findings);
  memset (rep, 0, sizeof *rep);
}

/* "2 critical, 1 high" (only the non-zero counts, worst first). */
static void
print_counts (FILE *f, const struct brig_check_report *rep)
{
  bool first = true;
  for (int s = BRIG_SEV_CRITICAL; s >= 0; s--)
    if (rep->counts[s])
      {
        fprintf (f, "%s%zu %s", first ? "" : ", ", rep->counts[s], severity_names[s]);
        first = false;
      }
}

char *
brig_check_report_text (const struct brig_check_report *rep)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&buf, &len);

  if (f == NULL)
    abort ();
  if (rep->len)
    fprintf (f, "%-9s %-25s %-34s %s\n", "SEVERITY", "RULE", "PATH", "FINDING");
  for (size_t i = 0; i < rep->len; i++)
    {
      const struct brig_finding *x = &rep->findings[i];
      fprintf (f, "%-9s %-25s %-34s %s\n", severity_names[x->severity], x->rule->id, x->path,
               x->message);
      fprintf (f, "%-9s %-25s why: %s\n%-9s %-25s fix: %s\n", "", "", x->rule->why, "", "",
               x->rule->fix);
    }
  fprintf (f, "%s%zu finding%s", rep->len ? "\n" : "", rep->len, rep->len == 1 ? "" : "s");
  if (rep->len)
    {
      fputs (" (", f);
      print_counts (f, rep);
      fputs (")", f);
    }
  fprintf (f, " under profile %s; fail-on %s: %s\n", profile_names[rep->profile],
           severity_names[rep->fail_on], brig_check_failed (rep) ? "FAIL" : "pass");
  if (fclose (f) != 0)
    abort ();
  return buf;
}

/* s as a JSON string, quotes included. */
char *
brig_check_report_json (const struct brig_check_report *rep, const char *config)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&buf, &len);

  if (f == NULL)
    return NULL;
  fputs ("{\"config\":", f);
  if (config)
    brig_json_write_string (f, config);
  else
    fputs ("null", f);
  fprintf (f, ",\"profile\":\"%s\",\"failOn\":\"%s\",\"pass\":%s,\"counts\":{",
           profile_names[rep->profile], severity_names[rep->fail_on],
           brig_check_failed (rep) ? "false" : "true");
  for (int s = 0; s < BRIG_SEV_COUNT; s++)
    fprintf (f, "%s\"%s\":%zu", s ? "," : "", severity_names[s], rep->counts[s]);
  fputs ("},\"findings\":[", f);
  for (size_t i = 0; i < rep->len; i++)
    {
      const struct brig_finding *x = &rep->findings[i];
      fprintf (f, "%s{\"rule\":\"%s\",\"severity\":\"%s\",\"path\":", i ? "," : "", x->rule->id,
               severity_names[x->severity]);
      brig_json_write_string (f, x->path);
      fputs (",\"message\":", f);
      brig_json_write_string (f, x->message);
      fputs (",\"why\":", f);
      brig_json_write_string (f, x->rule->why);
      fputs (",\"fix\":", f);
      brig_json_write_string (f, x->rule->fix);
      fputs (",\"source\":", f);
      brig_json_write_string (f, x->rule->source);
      fputc ('}', f);
    }
  fputs ("]}\n", f);
  if (fclose (f) != 0)
    {
      free (buf);
      return NULL;
    }
  return buf;
}

char *
brig_check_rules_json (void)
{
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream (&buf, &len);

  if (f == NULL)
    return NULL;
  fputc ('[', f);
  for (size_t i = 0; i < brig_check_rules_count; i++)
    {
      const struct brig_check_rule *r = &brig_check_rules[i];
      fprintf (f, "%s{\"id\":\"%s\",\"severity\":\"%s\",\"profile\":\"%s\",\"source\":",
               i ? "," : "", r->id, severity_names[r->severity], profile_names[r->profile]);
      brig_json_write_string (f, r->source);
      fputs (",\"why\":", f);
      brig_json_write_string (f, r->why);
      fputs (",\"fix\":", f);
      brig_json_write_string (f, r->fix);
      fputc ('}', f);
    }
  fputs ("]\n", f);
  if (fclose (f) != 0)
    {
      free (buf);
      return NULL;
    }
  return buf;
}

/* ---- node policy ---- */

/* "egress": {"allow": ["public", CIDR, CIDR:port, [IPv6-CIDR]:port, ...]} */
static int
policy_parse_egress (const char *path, yajl_val v, struct brig_policy_egress *pe, brig_error *err)
{
  yajl_val list = NULL;

  if (!YAJL_IS_OBJECT (v))
    return brig_error_set (err, 0, "policy %s: egress: expected an object", path);
  for (size_t i = 0; i < YAJL_GET_OBJECT (v)->len; i++)
    {
      if (strcmp (YAJL_GET_OBJECT (v)->keys[i], "allow") != 0)
        return brig_error_set (err, 0, "policy %s: egress: unknown key \"%s\" (expected allow)",
                               path, YAJL_GET_OBJECT (v)->keys[i]);
      list = YAJL_GET_OBJECT (v)->values[i];
    }
  if (list == NULL || !YAJL_IS_ARRAY (list))
    return brig_error_set (err, 0, "policy %s: egress.allow: expected a list (may be empty)", path);
  pe->set = true;
  for (size_t i = 0; i < YAJL_GET_ARRAY (list)->len; i++)
    {
      yajl_val e = YAJL_GET_ARRAY (list)->values[i];
      const char *s = YAJL_IS_STRING (e) ? YAJL_GET_STRING (e) : NULL;
      char key[64], host[8];
      int r;

      if (s && strcmp (s, "public") == 0)
        {
          pe->public_ok = true;
          continue;
        }
      if (pe->n_allow == BRIG_POLICY_EGRESS_MAX)
        return brig_error_set (err, 0, "policy %s: egress.allow: more than %d entries", path,
                               BRIG_POLICY_EGRESS_MAX);
      snprintf (key, sizeof key, "egress.allow[%zu]", i);
      /* addresses only: the policy judges where names lead, not names */
      r = s ? brig_egress_entry_parse (key, s, true, &pe->allow[pe->n_allow], host, sizeof host,
                                       err) : -EINVAL;
      if (r != 0)
        {
          brig_error_clear (err);
          return brig_error_set (err, 0, "policy %s: %s: expected \"public\", CIDR, CIDR:port "
                                 "or [IPv6-CIDR]:port", path, key);
        }
      pe->n_allow++;
    }
  return 0;
}

static int
policy_parse (const char *path, const char *buf, struct brig_policy *pol, brig_error *err)
{
  char ebuf[256] = "";
  yajl_val root = yajl_tree_parse (buf, ebuf, sizeof ebuf);
  bool have_profile = false;
  int r = 0;

  if (root == NULL)
    {
      /* yajl's message spans lines; its first line says what broke. */
      ebuf[strcspn (ebuf, "\n")] = '\0';
      return brig_error_set (err, 0, "policy %s: invalid JSON: %s", path, ebuf);
    }
  memset (pol, 0, sizeof *pol);
  pol->fail_on = BRIG_CHECK_DEFAULT_FAIL_ON;
  if (!YAJL_IS_OBJECT (root))
    r = brig_error_set (err, 0, "policy %s: expected a JSON object", path);
  for (size_t i = 0; r == 0 && i < YAJL_GET_OBJECT (root)->len; i++)
    {
      const char *k = YAJL_GET_OBJECT (root)->keys[i];
      yajl_val v = YAJL_GET_OBJECT (root)->values[i];
      const char *s = YAJL_IS_STRING (v) ? YAJL_GET_STRING (v) : NULL;
      /* Unknown keys are refused: a misspelt key must not weaken a policy. */
      if (strcmp (k, "profile") == 0)
        {
          if (brig_check_profile_parse (s, &pol->profile) < 0)
            r = brig_error_set (err, 0, "policy %s: profile: expected baseline, restricted or sandbox", path);
          have_profile = true;
        }
      else if (strcmp (k, "failOn") == 0)
        {
          if (brig_check_severity_parse (s, &pol->fail_on) < 0)
            r = brig_error_set (err, 0, "policy %s: failOn: expected info, low, medium, high or critical", path);
        }
      else if (strcmp (k, "egress") == 0)
        r = policy_parse_egress (path, v, &pol->egress, err);
      else
        r = brig_error_set (err, 0, "policy %s: unknown key \"%s\" (expected profile, failOn, egress)", path, k);
    }
  if (r == 0 && !have_profile)
    r = brig_error_set (err, 0, "policy %s: profile is required", path);
  yajl_tree_free (root);
  return r;
}

int
brig_policy_load (const char *path, struct brig_policy *pol, bool *found, brig_error *err)
{
  const char *p = path ? path : BRIG_POLICY_DEFAULT;
  _cleanup_close_ int fd = open (p, O_RDONLY | O_CLOEXEC);
  _cleanup_free_ char *buf = NULL;
  size_t len = 0;
  int r;

  *found = false;
  if (fd < 0)
    {
      /* Only the default may be absent; a named policy that is missing
       * must not silently mean "no policy". */
      if (path == NULL && (errno == ENOENT || errno == ENOTDIR))
        return 0;
      return brig_error_errno (err, "policy %s", p);
    }
  r = brig_read_fd (fd, &buf, &len, err);
  if (r < 0)
    return brig_error_wrap (err, "policy %s", p);
  if (strlen (buf) != len)
    return brig_error_set (err, 0, "policy %s: contains a NUL byte", p);
  r = policy_parse (p, buf, pol, err);
  if (r < 0)
    return r;
  *found = true;
  return 0;
}

/* Whether rep holds a failing finding of the same rule saying the same
 * (paths carry indexes, which another process's lists shift). */
static bool
failed_before (const struct brig_check_report *rep, const struct brig_finding *f)
{
  for (size_t i = 0; rep && i < rep->len; i++)
    if (rep->findings[i].severity >= rep->fail_on && rep->findings[i].rule == f->rule
        && strcmp (rep->findings[i].message, f->message) == 0)
      return true;
  return false;
}

/* -EPERM with the failing findings of rep not also in before, or 0 when
 * there are none. what: "config.json", "the exec'd process". */
static int
refuse (const char *path, const struct brig_policy *pol, const struct brig_check_report *rep,
        const struct brig_check_report *before, const char *what, brig_error *err)
{
  char *msg = NULL;
  size_t len = 0, n = 0;
  FILE *f = open_memstream (&msg, &len);

  if (f == NULL)
    abort ();
  fprintf (f, "%s refused by the policy %s (profile %s, fail-on %s):", what,
           path ? path : BRIG_POLICY_DEFAULT, profile_names[pol->profile],
           severity_names[pol->fail_on]);
  for (size_t i = 0; i < rep->len; i++)
    if (rep->findings[i].severity >= pol->fail_on && !failed_before (before, &rep->findings[i]))
      fprintf (f, "%s %s %s at %s: %s", n++ ? ";" : "", severity_names[rep->findings[i].severity],
               rep->findings[i].rule->id, rep->findings[i].path, rep->findings[i].message);
  fputs (" (see 'brig check')", f);
  if (fclose (f) != 0)
    abort ();
  if (n == 0)
    {
      free (msg);
      return 0;
    }
  /* The message says why; strerror (EPERM) would only add noise. */
  brig_error_set (err, 0, "%s", msg);
  err->code = EPERM;
  free (msg);
  return -EPERM;
}

/* Judge cfg with in under pol; -EPERM naming what fails. */
static int
policy_judge (const char *path, const struct brig_policy *pol, const oci_config *cfg,
              const struct brig_check_input *in, brig_error *err)
{
  struct brig_check_report rep;
  int r;

  brig_check_run (cfg, in, pol->profile, pol->fail_on, &rep);
  r = brig_check_failed (&rep) ? refuse (path, pol, &rep, NULL, "config.json", err) : 0;
  brig_check_report_clear (&rep);
  return r;
}

int
brig_policy_enforce (const char *path, const oci_config *cfg, const char *bundle,
                     brig_error *err)
{
  struct brig_policy pol;
  bool found;
  int r;

  r = brig_policy_load (path, &pol, &found, err);
  if (r < 0 || !found)
    return r;
  struct brig_check_input in = { .egress_policy = &pol.egress, .bundle = bundle };
  return policy_judge (path, &pol, cfg, &in, err);
}

int
brig_policy_create_check (const char *path, const oci_config *cfg, const char *bundle,
                          const int *ns_fd, struct brig_policy_create *pc, brig_error *err)
{
  int r;

  memset (pc, 0, sizeof *pc);
  pc->path = path;
  pc->bundle = bundle;
  r = brig_policy_load (path, &pc->pol, &pc->found, err);
  if (r < 0 || !pc->found)
    return r;
  /* Hostnames wait for their addresses (brig_policy_create_check_pinned):
   * nothing is resolved for a config refused as written. */
  struct brig_check_input in = { .ns_fd = ns_fd, .egress_policy = &pc->pol.egress,
                                 .names_later = true, .bundle = bundle };
  return policy_judge (path, &pc->pol, cfg, &in, err);
}

int
brig_policy_create_check_pinned (const struct brig_policy_create *pc, const oci_config *cfg,
                                 const int *ns_fd, const brig_egress_policy *eg, brig_error *err)
{
  if (!pc->found || eg == NULL || eg->pinned == NULL || eg->pinned->len == 0)
    return 0;
  struct brig_check_input in = { .ns_fd = ns_fd, .egress_policy = &pc->pol.egress, .egress = eg,
                                 .bundle = pc->bundle };
  return policy_judge (pc->path, &pc->pol, cfg, &in, err);
}

int
brig_policy_exec_begin (const char *path, const oci_config *cfg, struct brig_policy_exec *pe,
                        brig_error *err)
{
  int r;

  memset (pe, 0, sizeof *pe);
  pe->path = path;
  r = brig_policy_load (path, &pe->pol, &pe->found, err);
  if (r < 0 || !pe->found)
    return r;
  struct brig_check_input in = { .egress_policy = &pe->pol.egress };
  brig_check_run (cfg, &in, pe->pol.profile, pe->pol.fail_on, &pe->before);
  return 0;
}

int
brig_policy_exec_check (const struct brig_policy_exec *pe, const oci_config *cfg,
                        const oci_process *p, brig_error *err)
{
  struct brig_check_report rep;
  oci_config view;
  int r;

  if (!pe->found)
    return 0;
  /* The container's config with the exec'd process in its place. */
  view = *cfg;
  view.process = (oci_process *) p;
  struct brig_check_input in = { .egress_policy = &pe->pol.egress };
  brig_check_run (&view, &in, pe->pol.profile, pe->pol.fail_on, &rep);
  r = brig_check_failed (&rep)
    ? refuse (pe->path, &pe->pol, &rep, &pe->before, "the exec'd process", err) : 0;
  brig_check_report_clear (&rep);
  return r;
}

int
brig_policy_claim_check (const struct brig_policy_exec *pe, const oci_config *view,
                         const brig_egress_policy *eg, brig_error *err)
{
  struct brig_check_report rep;
  int r;

  if (!pe->found)
    return 0;
  struct brig_check_input in = { .egress_policy = &pe->pol.egress, .egress = eg };
  brig_check_run (view, &in, pe->pol.profile, pe->pol.fail_on, &rep);
  r = brig_check_failed (&rep) ? refuse (pe->path, &pe->pol, &rep, &pe->before, "the claim", err)
                               : 0;
  brig_check_report_clear (&rep);
  return r;
}

void
brig_policy_exec_clear (struct brig_policy_exec *pe)
{
  if (pe->found)
    brig_check_report_clear (&pe->before);
  pe->found = false;
}

int
brig_policy_update_check (const char *path, const oci_config *cfg, const oci_resources *res,
                          brig_error *err)
{
  struct brig_policy_exec pe;
  struct brig_check_report rep;
  oci_config *after;
  int r;

  r = brig_policy_exec_begin (path, cfg, &pe, err);
  if (r < 0 || !pe.found)
    return r;
  /* The limits as they would be after the update: the recorded config
   * (earlier updates merged in) with res merged as record_resources will. */
  after = oci_copy (&oci_config_type, cfg);
  if (after == NULL)
    r = brig_error_set (err, errno ? errno : ENOMEM, "update: copy the config");
  if (r == 0)
    r = brig_resources_merge (after, res, err);
  if (r == 0)
    {
      brig_check_config (after, pe.pol.profile, pe.pol.fail_on, &rep);
      r = brig_check_failed (&rep)
        ? refuse (pe.path, &pe.pol, &rep, &pe.before, "the update", err) : 0;
      brig_check_report_clear (&rep);
    }
  if (after)
    oci_config_free (after);
  brig_policy_exec_clear (&pe);
  return r;
}
