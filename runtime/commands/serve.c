/* brig serve --listen ADDR:PORT [--api-key-file FILE] [--max-body BYTES]
 *            [--request-timeout SECONDS]
 * (brig-serve only; brig's own serve executes it: serve_exec.c) */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "serve/serve.h"

static void
serve_usage (FILE *out)
{
  fprintf (out,
           "Usage: brig serve [--listen ADDR:PORT] [--api-key-file FILE]\n"
           "                  [--max-body BYTES] [--request-timeout SECONDS]\n"
           "\n"
           "Serve the pools to the e2b SDK over HTTP/1.1 (docs/serve.md) until SIGTERM,\n"
           "then release every sandbox handed out. A template is a pool: create claims\n"
           "a member, kill releases it (verified reset).\n"
           "\n"
           "  --listen ADDR:PORT       where to listen (default 127.0.0.1:3000; port 0:\n"
           "                           any free port; printed once listening)\n"
           "  --api-key-file FILE      the API keys, one per line (mode 0600); without it\n"
           "                           any key is accepted (loopback only), each its own\n"
           "                           tenant\n"
           "  --max-body BYTES         largest request body (default 1048576)\n"
           "  --request-timeout SECONDS  time a request may take to arrive (default 30)\n");
}

/* A positive number up to max from arg, else 0. */
static unsigned long
number (const char *arg, unsigned long max)
{
  char *end;
  unsigned long v = strtoul (arg, &end, 10);
  return *arg >= '0' && *arg <= '9' && *end == '\0' && v <= max ? v : 0;
}

int
cmd_serve (struct brig_globals *g, int argc, char **argv)
{
  static const struct option opts[] = {
    { "listen", required_argument, NULL, 'l' },
    { "api-key-file", required_argument, NULL, 'k' },
    { "max-body", required_argument, NULL, 'b' },
    { "request-timeout", required_argument, NULL, 't' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  struct brig_serve_opts o = {
    .listen = "127.0.0.1:3000", .max_body = 1 << 20, .request_timeout = 30,
  };
  struct brig_context ctx;
  brig_error err = { 0 };
  int c;

  while ((c = getopt_long_only (argc, argv, "h", opts, NULL)) != -1)
    switch (c)
      {
      case 'l': o.listen = optarg; break;
      case 'k': o.api_key_file = optarg; break;
      case 'b':
        if ((o.max_body = number (optarg, 1UL << 30)) == 0)
          return cli_usage_error ("serve", "invalid --max-body \"%s\": expected 1..%lu", optarg,
                                  1UL << 30);
        break;
      case 't':
        if ((o.request_timeout = (unsigned) number (optarg, 3600)) == 0)
          return cli_usage_error ("serve", "invalid --request-timeout \"%s\": expected 1..3600",
                                  optarg);
        break;
      case 'h': serve_usage (stdout); return 0;
      default: return 1;
      }
  if (cli_require_args ("serve", argc, argv, optind, 0) < 0)
    return 1;
  ctx = cli_context (g, CLI_POLICY | CLI_USERNS_RANGE);
  if (brig_serve (&ctx, &o, &err) < 0)
    return cli_fail (&err);
  return 0;
}
