/* What every libbrig entry point needs to know from the global options. */
#ifndef BRIG_CONTEXT_H
#define BRIG_CONTEXT_H

#include <stdbool.h>

struct brig_context {
  const char *state_root;  /* --root: one directory per container below it */
  bool systemd_cgroup;     /* --systemd-cgroup */
  int rootless;            /* -1 auto, 0 no, 1 yes */
  bool debug;              /* --debug */
  /* read by the extension (container/extension.h), not by the core */
  const char *policy;      /* --policy FILE; NULL: /etc/brig/policy.json if present */
  const char *notify_socket; /* the caller's NOTIFY_SOCKET (notify.h), or NULL */
  const char *userns_range; /* --userns-range FIRST:COUNT, NULL: the default */
};

#endif
