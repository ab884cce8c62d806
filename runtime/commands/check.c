/* brig check [--bundle DIR | --container ID] [--profile P] [--format text|json]
 *            [--fail-on SEVERITY] */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "sandbox/check.h"
#include "container/state.h"
#include "utils.h"

static void
check_usage (void)
{
  printf ("Usage: brig check [--bundle DIR | --container ID] [--profile PROFILE]\n"
          "                  [--format text|json] [--fail-on SEVERITY]\n"
          "\n"
          "Report each weakness of a config.json as a boundary for untrusted code: rule,\n"
          "severity, JSON path, why it matters and the fix (rules: docs/sandbox.md).\n"
          "Exit status 0 when no finding is at or above --fail-on, else 1.\n"
          "\n"
          "  --bundle, -b DIR    check DIR/config.json (default: the current directory)\n"
          "  --container ID      check the config the container was created with\n"
          "  --profile PROFILE   baseline, restricted or sandbox (default: the node\n"
          "                      policy's, else sandbox)\n"
          "  --format FORMAT     text (a table, default) or json\n"
          "  --fail-on SEVERITY  info, low, medium, high or critical (default: the node\n"
          "                      policy's, else high)\n"
          "  --list-rules        print every rule as JSON and exit\n");
}

/* The config of --container ID, as saved at create, and its bundle. */
static int
load_container_config (struct brig_globals *g, const char *id, oci_config **cfg, char **bundle,
                       brig_error *err)
{
  struct brig_context ctx = cli_context (g, 0);
  brig_container *c = NULL;
  int r = brig_container_load_visible (&ctx, id, &c, err);
  if (r < 0)
    return r;
  r = brig_container_config (c, cfg, err);
  if (r == 0 && c->st.bundle)
    *bundle = xstrdup (c->st.bundle);
  brig_container_free (c);
  return r;
}

int
cmd_check (struct brig_globals *g, int argc, char **argv)
{
  enum { OPT_CONTAINER = 256, OPT_PROFILE, OPT_FORMAT, OPT_FAIL_ON, OPT_LIST_RULES };
  static const struct option opts[] = {
    { "bundle", required_argument, NULL, 'b' },
    { "container", required_argument, NULL, OPT_CONTAINER },
    { "profile", required_argument, NULL, OPT_PROFILE },
    { "format", required_argument, NULL, OPT_FORMAT },
    { "fail-on", required_argument, NULL, OPT_FAIL_ON },
    { "list-rules", no_argument, NULL, OPT_LIST_RULES },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  const char *bundle = NULL, *id = NULL, *profile = NULL, *fail_on = NULL;
  struct brig_policy pol = { .profile = BRIG_PROFILE_SANDBOX, .fail_on = BRIG_CHECK_DEFAULT_FAIL_ON };
  struct brig_check_report rep;
  _cleanup_free_ char *path = NULL, *out = NULL, *saved_bundle = NULL;
  brig_error err = { 0 };
  oci_config *cfg = NULL;
  bool json = false, found;
  int c, failed;

  while ((c = getopt_long_only (argc, argv, "b:h", opts, NULL)) != -1)
    switch (c)
      {
      case 'b': bundle = optarg; break;
      case OPT_CONTAINER: id = optarg; break;
      case OPT_PROFILE: profile = optarg; break;
      case OPT_FORMAT:
        if (strcmp (optarg, "json") == 0)
          json = true;
        else if (strcmp (optarg, "text") == 0 || strcmp (optarg, "table") == 0)
          json = false;
        else
          return cli_usage_error ("check", "invalid --format \"%s\": expected text or json", optarg);
        break;
      case OPT_FAIL_ON: fail_on = optarg; break;
      case OPT_LIST_RULES:
        out = brig_check_rules_json ();
        if (out == NULL)
          return 1;
        fputs (out, stdout);
        return fflush (stdout) == 0 ? 0 : 1;
      case 'h': check_usage (); return 0;
      default: return 1;
      }
  if (optind != argc)
    return cli_usage_error ("check", "takes no arguments (see 'brig check --help')");
  if (bundle && id)
    return cli_usage_error ("check", "give --bundle or --container, not both");
  /* The node policy gives the defaults, so `brig check` answers "would
   * create accept this?" with no flags. */
  if (brig_policy_load (g->policy, &pol, &found, &err) < 0)
    return cli_fail (&err);
  if (profile && brig_check_profile_parse (profile, &pol.profile) < 0)
    return cli_usage_error ("check", "invalid --profile \"%s\": expected baseline, restricted or sandbox",
                            profile);
  if (fail_on && brig_check_severity_parse (fail_on, &pol.fail_on) < 0)
    return cli_usage_error ("check", "invalid --fail-on \"%s\": expected info, low, medium, high or critical",
                            fail_on);

  if (id)
    {
      if (load_container_config (g, id, &cfg, &saved_bundle, &err) < 0)
        return cli_fail (&err);
      path = xasprintf ("%s/%s/config.json", g->root, id);
    }
  else
    {
      oci_error perr = { 0 };
      path = xasprintf ("%s/config.json", bundle ? bundle : ".");
      cfg = oci_config_parse_file (path, &perr);
      if (cfg == NULL)
        {
          brig_error_set (&err, perr.msg ? 0 : errno, "check: %s", perr.msg ? perr.msg : path);
          free (perr.msg);
          return cli_fail (&err);
        }
    }

  /* and its egress section, as create would apply it */
  struct brig_check_input in = { .egress_policy = found ? &pol.egress : NULL,
                                 .bundle = id ? saved_bundle : bundle };
  brig_check_run (cfg, &in, pol.profile, pol.fail_on, &rep);
  oci_config_free (cfg);
  failed = brig_check_failed (&rep);
  out = json ? brig_check_report_json (&rep, path) : brig_check_report_text (&rep);
  brig_check_report_clear (&rep);
  if (out == NULL)
    {
      brig_error_set (&err, ENOMEM, "check: format the report");
      return cli_fail (&err);
    }
  fputs (out, stdout);
  if (fflush (stdout) != 0)
    return 1;
  return failed ? 1 : 0;
}
