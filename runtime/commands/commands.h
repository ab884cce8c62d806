/* The brig command line: global options and one entry per command. Each
 * command lives in its own file, parses its own flags and calls libbrig. */
#ifndef BRIG_COMMANDS_H
#define BRIG_COMMANDS_H

#include <stdbool.h>

#include "context.h"
#include "error.h"
#include "log.h"

struct brig_globals {
  const char *root;            /* --root, state directory */
  const char *log;             /* --log file or NULL */
  enum brig_log_format log_format;
  bool debug;
  bool systemd_cgroup;         /* --systemd-cgroup */
  int rootless;                /* --rootless: -1 auto, 0 false, 1 true */
  const char *policy;          /* --policy FILE (sandbox/check.h) */
  const char *userns_range;    /* --userns-range FIRST:COUNT (sandbox/userns_auto.h) */
};

/* Option parsing: like runc, which moves flags given after the container id
 * in front of it, commands let getopt permute argv (no '+' in the option
 * string), so `brig update ID --cpuset-cpus 1` works. Only exec and ps stop
 * at the first argument: what follows it belongs to the process or to ps(1). */

struct brig_command {
  const char *name;
  const char *summary;
  int (*run) (struct brig_globals *g, int argc, char **argv);
};

/* Print err (once, to stderr and the log) and return exit status 1. */
int cli_fail (brig_error *err);

/* What the library needs of the global options (context.h), the same for
 * every command; the options only some commands pass on are asked for:
 * CLI_POLICY (--policy), CLI_USERNS_RANGE (--userns-range), CLI_NOTIFY (the
 * caller's NOTIFY_SOCKET). */
enum { CLI_POLICY = 1, CLI_USERNS_RANGE = 2, CLI_NOTIFY = 4 };
struct brig_context cli_context (const struct brig_globals *g, unsigned what);

/* Print "brig NAME: " + message as an error and return 1. */
int cli_usage_error (const char *cmd, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));

/* Check that exactly n positional arguments remain after option parsing. */
int cli_require_args (const char *cmd, int argc, char **argv, int optind_, int n);

struct brig_reset_report;
/* What a reset verified, as `brig reset` and `brig pool release` print it:
 * one JSON object per check, then {"reset":ID,"ok":...,"ms":...}. */
void cli_print_reset_report (const char *id, const struct brig_reset_report *rep, bool ok,
                             double ms);

/* Parse a --format value; returns 0 for table, 1 for json, -1 if invalid. */
int cli_parse_format (const char *cmd, const char *value);

/* The command table (brig.c) and its length. */
extern const struct brig_command brig_commands[];
extern const int brig_commands_count;

int cmd_version (struct brig_globals *g, int argc, char **argv);
int cmd_spec (struct brig_globals *g, int argc, char **argv);
int cmd_features (struct brig_globals *g, int argc, char **argv);
int cmd_create (struct brig_globals *g, int argc, char **argv);
int cmd_start (struct brig_globals *g, int argc, char **argv);
int cmd_run (struct brig_globals *g, int argc, char **argv);
int cmd_state (struct brig_globals *g, int argc, char **argv);
int cmd_list (struct brig_globals *g, int argc, char **argv);
int cmd_kill (struct brig_globals *g, int argc, char **argv);
int cmd_delete (struct brig_globals *g, int argc, char **argv);
int cmd_exec (struct brig_globals *g, int argc, char **argv);
int cmd_ps (struct brig_globals *g, int argc, char **argv);
int cmd_cp (struct brig_globals *g, int argc, char **argv);
int cmd_reset (struct brig_globals *g, int argc, char **argv);
int cmd_pause (struct brig_globals *g, int argc, char **argv);
int cmd_resume (struct brig_globals *g, int argc, char **argv);
int cmd_update (struct brig_globals *g, int argc, char **argv);
int cmd_events (struct brig_globals *g, int argc, char **argv);
int cmd_checkpoint (struct brig_globals *g, int argc, char **argv);
int cmd_restore (struct brig_globals *g, int argc, char **argv);
int cmd_check (struct brig_globals *g, int argc, char **argv);
/* serve: in brig, executes brig-serve (serve_exec.c); in brig-serve, the
 * server (serve.c). */
int cmd_serve (struct brig_globals *g, int argc, char **argv);
int cmd_pool (struct brig_globals *g, int argc, char **argv);
int cmd_fork (struct brig_globals *g, int argc, char **argv);

/* Print the version block (brig version X, spec, features). */
void cli_print_version (void);

#endif
