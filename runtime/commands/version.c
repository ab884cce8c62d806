#include <stdio.h>

#include "commands.h"

void
cli_print_version (void)
{
  printf ("brig version %s\n", PACKAGE_VERSION);
  printf ("spec: 1.3.0\n");
  printf ("+SECCOMP +CAP"
#ifdef HAVE_SYSTEMD
          " +SYSTEMD"
#else
          " -SYSTEMD"
#endif
          " +YAJL\n");
}

int
cmd_version (struct brig_globals *g, int argc, char **argv)
{
  (void) g; (void) argc; (void) argv;
  cli_print_version ();
  return 0;
}
