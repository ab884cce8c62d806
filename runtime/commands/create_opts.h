/* Flags shared by create and run. */
#ifndef BRIG_CREATE_OPTS_H
#define BRIG_CREATE_OPTS_H

#include <stdbool.h>

#include "container/container.h"

/* Parse create's flags (and run's --detach/--keep when those pointers are
 * not NULL) and the container id; -1 after printing a usage error. */
int cli_parse_create_opts (const char *cmd, int argc, char **argv, struct brig_create_opts *o,
                           bool *detach, bool *keep, bool *help);

#endif
