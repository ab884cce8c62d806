/* Logging: brig writes diagnostics to stderr and, with --log, to a file, as
 * runc does: text lines time="..." level=... msg="..." or JSON lines
 * ({"level":..,"msg":..,"time":..}). Nothing in libbrig writes to stdout. */
#ifndef BRIG_LOG_H
#define BRIG_LOG_H

#include <stdbool.h>

enum brig_log_level { BRIG_LOG_ERROR, BRIG_LOG_WARNING, BRIG_LOG_INFO, BRIG_LOG_DEBUG };
enum brig_log_format { BRIG_LOG_TEXT, BRIG_LOG_JSON };

/* Configure logging: path may be NULL (stderr only); a path that cannot be
 * opened returns -errno. debug enables debug messages; formatted (an explicit
 * --log-format, or --debug) writes stderr in the log format when there is no
 * log file, as runc does. */
int brig_log_init (const char *path, enum brig_log_format format, bool debug,
                   bool formatted);

/* Log one message. Without --log, and with stderr formatted, every enabled
 * message goes to stderr in the log format (runc's key=value text, or JSON);
 * otherwise errors and warnings go to stderr bare (debug too without --log),
 * and with --log every message to the file in the log format. */
void brig_log (enum brig_log_level level, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));

/* True when --debug is on (to skip building expensive debug messages). */
bool brig_log_debug_enabled (void);

/* The log fd (or -1), so the container init can keep logging until exec. */
int brig_log_fd (void);

#define brig_warn(...) brig_log (BRIG_LOG_WARNING, __VA_ARGS__)
#define brig_debug(...) do { if (brig_log_debug_enabled ()) brig_log (BRIG_LOG_DEBUG, __VA_ARGS__); } while (0)

#endif
