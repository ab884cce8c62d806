/* brig serve: an HTTP/1.1 server that hands out pool members to the e2b
 * SDK (docs/serve.md). The control plane (create = claim a member of the
 * pool named by the template, list, connect, kill = verified release) and
 * the envd API inside a sandbox (Connect-protocol process RPCs) on one
 * port, routed by the E2b-Sandbox-Id header. On top of sandbox/: nothing
 * below includes this. */
#ifndef BRIG_SERVE_H
#define BRIG_SERVE_H

#include <stddef.h>

#include "context.h"
#include "error.h"

struct brig_serve_opts {
  const char *listen;        /* ADDR:PORT ([V6]:PORT); port 0: any free one */
  const char *api_key_file;  /* one key per line; NULL: any key, loopback only */
  size_t max_body;           /* bytes; a larger request body is refused (413) */
  unsigned request_timeout;  /* seconds a request may take to arrive */
};

/* Serve until SIGTERM or SIGINT, then release every sandbox handed out and
 * return 0. Prints "brig serve: listening on http://ADDR:PORT" to stdout
 * once it accepts connections. One server per --root (a lock). */
int brig_serve (const struct brig_context *ctx, const struct brig_serve_opts *o,
                brig_error *err);

#endif
