/* brig serve, in the static brig: execute brig-serve, the same command line
 * linked dynamically with libmicrohttpd (configure.ac "serve"), with the
 * global options brig was given. brig-serve lies beside the running brig
 * (the build tree, or the install's bindir), else at the configured bindir. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "utils.h"

#ifndef BRIG_SERVE_PATH
# define BRIG_SERVE_PATH "/usr/local/bin/brig-serve"
#endif

/* brig-serve beside /proc/self/exe when that is a path on disk. */
static char *
serve_beside_self (void)
{
  char self[PATH_MAX];
  ssize_t n = readlink ("/proc/self/exe", self, sizeof self - 1);
  char *slash;

  if (n <= 0 || self[0] != '/')
    return NULL;
  self[n] = '\0';
  if (strstr (self, " (deleted)") != NULL || (slash = strrchr (self, '/')) == NULL)
    return NULL;
  *slash = '\0';
  return xasprintf ("%s/brig-serve", self);
}

int
cmd_serve (struct brig_globals *g, int argc, char **argv)
{
#ifdef HAVE_SERVE
  _cleanup_free_ char *beside = serve_beside_self ();
  const char *path = beside && access (beside, X_OK) == 0 ? beside : BRIG_SERVE_PATH;
  char rootless[32];
  const char **av = xmalloc0 ((size_t) (argc + 20) * sizeof *av);
  int n = 0;

  av[n++] = "brig-serve";
  av[n++] = "--root";
  av[n++] = g->root;
  if (g->log)
    av[n++] = "--log", av[n++] = g->log;
  if (g->log_format == BRIG_LOG_JSON)
    av[n++] = "--log-format", av[n++] = "json";
  if (g->debug)
    av[n++] = "--debug";
  if (g->systemd_cgroup)
    av[n++] = "--systemd-cgroup";
  snprintf (rootless, sizeof rootless, "--rootless=%s",
            g->rootless == 1 ? "true" : g->rootless == 0 ? "false" : "auto");
  av[n++] = rootless;
  if (g->policy)
    av[n++] = "--policy", av[n++] = g->policy;
  if (g->userns_range)
    av[n++] = "--userns-range", av[n++] = g->userns_range;
  for (int i = 0; i < argc; i++)
    av[n++] = argv[i];
  av[n] = NULL;
  execv (path, (char *const *) av);
  return cli_usage_error ("serve", "cannot run %s: %s", path, strerror (errno));
#else
  (void) g;
  (void) argc;
  (void) argv;
  return cli_usage_error ("serve", "this brig was built without serve (configure --enable-serve; "
                          "it needs libmicrohttpd-dev)");
#endif
}
