#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "container/spec_default.h"
#include "sandbox/extension.h"
#include "utils.h"

static void
spec_usage (void)
{
  printf ("Usage: brig spec [--bundle DIR] [--rootless] [--hardened | --sandbox [--userns-base N] [--ephemeral]]\n"
          "\n"
          "Write a default config.json into the bundle directory (default: the current\n"
          "directory). An existing config.json is never overwritten.\n"
          "\n"
          "  --bundle, -b DIR  bundle directory\n"
          "  --rootless        config for running as an unprivileged user\n"
          "  --hardened        add brig's default seccomp profile (see docs/security.md)\n"
          "  --sandbox         a config for untrusted code with no finding under\n"
          "                    brig check's sandbox profile (see docs/sandbox.md)\n"
          "  --userns-base N   with --sandbox: host uid/gid of container root (default\n"
          "                    1879048192, 65536 ids); rootless maps root to your own uid\n"
          "  --ephemeral       with --sandbox: a writable root seen through a tmpfs overlay\n"
          "                    (run.brig.rootfs.ephemeral); the bundle is never written\n");
}

int
cmd_spec (struct brig_globals *g, int argc, char **argv)
{
  static const struct option opts[] = {
    { "bundle", required_argument, NULL, 'b' },
    { "rootless", no_argument, NULL, 'r' },
    { "hardened", no_argument, NULL, 'H' },
    { "sandbox", no_argument, NULL, 'S' },
    { "userns-base", required_argument, NULL, 'U' },
    { "ephemeral", no_argument, NULL, 'E' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  struct brig_spec_opts so = { 0 };
  struct brig_sandbox_spec_opts sb = { 0 };
  bool sandbox = false;
  const char *bundle = ".";
  brig_error err = { 0 };
  _cleanup_free_ char *json = NULL, *path = NULL;
  _cleanup_close_ int fd = -1;
  oci_config *cfg = NULL;
  size_t len = 0;
  int c, r;

  (void) g;
  while ((c = getopt_long_only (argc, argv, "b:h", opts, NULL)) != -1)
    switch (c)
      {
      case 'b': bundle = optarg; break;
      case 'r': so.rootless = sb.rootless = true; break;
      case 'H': so.hardened = true; break;
      case 'S': sandbox = true; break;
      case 'E': sb.ephemeral = true; break;
      case 'U':
        {
          char *end;
          unsigned long long v;
          errno = 0;
          v = strtoull (optarg, &end, 10);
          if (*optarg < '0' || *optarg > '9' || *end != '\0' || errno || v == 0 || v > UINT32_MAX)
            return cli_usage_error ("spec", "invalid --userns-base \"%s\": expected a host uid 1..4294967295",
                                    optarg);
          sb.userns_base = (uint32_t) v;
          break;
        }
      case 'h': spec_usage (); return 0;
      default: return 1;
      }
  if (optind != argc)
    return cli_usage_error ("spec", "takes no arguments (see 'brig spec --help')");
  if (sandbox && so.hardened)
    return cli_usage_error ("spec", "--sandbox already holds --hardened's seccomp profile: give one");
  if (sb.userns_base && !sandbox)
    return cli_usage_error ("spec", "--userns-base needs --sandbox");
  if (sb.ephemeral && !sandbox)
    return cli_usage_error ("spec", "--ephemeral needs --sandbox");

  r = sandbox ? brig_sandbox_spec (&sb, &cfg, &err) : brig_spec_default (&so, &cfg, &err);
  if (r < 0)
    return cli_fail (&err);
  json = oci_generate (&oci_config_type, cfg, true, &len);
  oci_config_free (cfg);
  if (json == NULL)
    {
      brig_error_errno (&err, "spec: generate config.json");
      return cli_fail (&err);
    }
  path = xasprintf ("%s/config.json", bundle);
  fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    {
      if (errno == EEXIST)
        brig_error_set (&err, 0, "spec: %s already exists: remove it first", path);
      else
        brig_error_errno (&err, "spec: create %s", path);
      return cli_fail (&err);
    }
  r = brig_write_all (fd, json, len);
  if (r == 0)
    r = brig_write_all (fd, "\n", 1);
  if (r < 0)
    {
      unlink (path);
      brig_error_set (&err, -r, "spec: write %s", path);
      return cli_fail (&err);
    }
  return 0;
}
