#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

static int log_fd = -1;
static enum brig_log_format log_format = BRIG_LOG_TEXT;
static bool log_debug;
static bool stderr_formatted;

static const char *const level_names[] = { "error", "warning", "info", "debug" };

int
brig_log_init (const char *path, enum brig_log_format format, bool debug, bool formatted)
{
  log_format = format;
  log_debug = debug;
  stderr_formatted = formatted;
  if (path && *path)
    {
      int fd = open (path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
      if (fd < 0)
        return -errno;
      log_fd = fd;
    }
  return 0;
}

bool
brig_log_debug_enabled (void)
{
  return log_debug;
}

int
brig_log_fd (void)
{
  return log_fd;
}

/* Append s to buf as a JSON string body, escaping what JSON requires. */
static size_t
json_escape (char *buf, size_t size, const char *s)
{
  size_t n = 0;
  for (; *s && n + 7 < size; s++)
    {
      unsigned char c = (unsigned char) *s;
      if (c == '"' || c == '\\')
        {
          buf[n++] = '\\';
          buf[n++] = (char) c;
        }
      else if (c == '\n')
        n += (size_t) snprintf (buf + n, size - n, "\\n");
      else if (c < 0x20)
        n += (size_t) snprintf (buf + n, size - n, "\\u%04x", c);
      else
        buf[n++] = (char) c;
    }
  buf[n] = '\0';
  return n;
}

static void
format_time (char *out, size_t size)
{
  struct timespec ts;
  struct tm tm;
  char base[32];

  clock_gettime (CLOCK_REALTIME, &ts);
  gmtime_r (&ts.tv_sec, &tm);
  strftime (base, sizeof base, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf (out, size, "%s.%09ldZ", base, ts.tv_nsec);
}

static void
write_all (int fd, const char *buf, size_t len)
{
  while (len > 0)
    {
      ssize_t w = write (fd, buf, len);
      if (w < 0)
        {
          if (errno == EINTR)
            continue;
          return;
        }
      buf += w;
      len -= (size_t) w;
    }
}

/* Append s to buf as a logfmt value, the way runc's logger (logrus) writes
 * it: bare when it is one plain word, else quoted with Go's escapes. */
static size_t
text_value (char *buf, size_t size, const char *s)
{
  size_t n = 0;
  bool bare = *s != '\0';

  for (const char *p = s; *p && bare; p++)
    bare = (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9')
           || strchr ("-._/@^+", *p) != NULL;
  if (bare)
    return (size_t) snprintf (buf, size, "%s", s);
  buf[n++] = '"';
  for (; *s && n + 6 < size; s++)
    {
      unsigned char c = (unsigned char) *s;
      if (c == '"' || c == '\\')
        {
          buf[n++] = '\\';
          buf[n++] = (char) c;
        }
      else if (c == '\n' || c == '\t' || c == '\r')
        {
          buf[n++] = '\\';
          buf[n++] = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
        }
      else if (c < 0x20 || c == 0x7f)
        n += (size_t) snprintf (buf + n, size - n, "\\x%02x", c);
      else
        buf[n++] = (char) c;
    }
  buf[n++] = '"';
  buf[n] = '\0';
  return n;
}

/* One line in the chosen format, as runc writes it: text is
 * time="..." level=... msg="...", json is {"level":..,"msg":..,"time":..}. */
static int
format_line (char *line, size_t size, enum brig_log_level level, const char *msg)
{
  char when[64], esc[8192];

  format_time (when, sizeof when);
  if (log_format == BRIG_LOG_JSON)
    {
      json_escape (esc, sizeof esc, msg);
      return snprintf (line, size, "{\"level\":\"%s\",\"msg\":\"%s\",\"time\":\"%s\"}\n",
                       level_names[level], esc, when);
    }
  text_value (esc, sizeof esc, msg);
  return snprintf (line, size, "time=\"%s\" level=%s msg=%s\n", when, level_names[level], esc);
}

void
brig_log (enum brig_log_level level, const char *fmt, ...)
{
  char msg[4096], line[8192 + 128];
  va_list ap;
  int n;

  if (level == BRIG_LOG_DEBUG && !log_debug)
    return;
  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);

  if (log_fd < 0 && stderr_formatted)
    {
      /* No --log: like runc, every message goes to stderr in the log
       * format (tools that run the runtime without --log parse it). */
      n = format_line (line, sizeof line, level, msg);
      write_all (STDERR_FILENO, line, (size_t) n < sizeof line ? (size_t) n : sizeof line - 1);
      return;
    }
  if (level <= BRIG_LOG_WARNING)
    {
      /* With --log (or no format asked for) stderr gets the bare message:
       * what runc prints there with --log; the file gets the line. */
      n = snprintf (line, sizeof line, "%s%s\n", level == BRIG_LOG_ERROR ? "" : "warning: ", msg);
      write_all (STDERR_FILENO, line, (size_t) n < sizeof line ? (size_t) n : sizeof line - 1);
    }
  if (log_fd < 0)
    return;
  n = format_line (line, sizeof line, level, msg);
  write_all (log_fd, line, (size_t) n < sizeof line ? (size_t) n : sizeof line - 1);
}
