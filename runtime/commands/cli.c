/* What every command shares: errors and usage messages printed once, the
 * argument count check, and the library context built from the global
 * options. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"

int
cli_fail (brig_error *err)
{
  brig_log (BRIG_LOG_ERROR, "%s", err && err->msg ? err->msg : "unknown error");
  brig_error_clear (err);
  return 1;
}

int
cli_usage_error (const char *cmd, const char *fmt, ...)
{
  char msg[1024];
  va_list ap;
  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  brig_log (BRIG_LOG_ERROR, "%s: %s", cmd, msg);
  return 1;
}

int
cli_require_args (const char *cmd, int argc, char **argv, int optind_, int n)
{
  (void) argv;
  if (argc - optind_ != n)
    {
      cli_usage_error (cmd, "requires exactly %d argument%s (see 'brig %s --help')", n,
                       n == 1 ? "" : "s", cmd);
      return -1;
    }
  return 0;
}

int
cli_parse_format (const char *cmd, const char *value)
{
  if (strcmp (value, "table") == 0)
    return 0;
  if (strcmp (value, "json") == 0)
    return 1;
  cli_usage_error (cmd, "invalid format option \"%s\": expected table or json", value);
  return -1;
}

struct brig_context
cli_context (const struct brig_globals *g, unsigned what)
{
  return (struct brig_context) {
    .state_root = g->root, .systemd_cgroup = g->systemd_cgroup,
    .rootless = g->rootless, .debug = g->debug,
    .policy = what & CLI_POLICY ? g->policy : NULL,
    .userns_range = what & CLI_USERNS_RANGE ? g->userns_range : NULL,
    /* As runc: sd_notify of the container reaches the caller's manager. */
    .notify_socket = what & CLI_NOTIFY ? getenv ("NOTIFY_SOCKET") : NULL,
  };
}
