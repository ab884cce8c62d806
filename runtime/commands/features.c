#include <getopt.h>
#include <stdio.h>

#include "commands.h"
#include "container/features.h"
#include "sandbox/extension.h"
#include "utils.h"

int
cmd_features (struct brig_globals *g, int argc, char **argv)
{
  static const struct option opts[] = {
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  brig_error err = { 0 };
  oci_features *f = NULL;
  _cleanup_free_ char *json = NULL;
  size_t len = 0;
  int c;

  (void) g;
  while ((c = getopt_long_only (argc, argv, "h", opts, NULL)) != -1)
    switch (c)
      {
      case 'h':
        printf ("Usage: brig features\n\nPrint the features document (runtime-spec features.md)"
                " describing what this build supports.\n");
        return 0;
      default:
        return 1;
      }
  if (optind != argc)
    return cli_usage_error ("features", "takes no arguments");
  if (brig_features_build (&f, &err) < 0)
    return cli_fail (&err);
  brig_sandbox_features (f);
  json = oci_generate (&oci_features_type, f, true, &len);
  oci_free (&oci_features_type, f);
  if (json == NULL)
    {
      brig_error_errno (&err, "features: generate JSON");
      return cli_fail (&err);
    }
  fwrite (json, 1, len, stdout);
  fputc ('\n', stdout);
  return fflush (stdout) == 0 ? 0 : 1;
}
