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

static const char *const level_names[] = { "error", "warning", "info", "debug" };

int
brig_log_init (const char *path, enum brig_log_format format, bool debug)
{
  log_format = format;
  log_debug = debug;
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

void
brig_log (enum brig_log_level level, const char *fmt, ...)
{
  char msg[4096], line[8192 + 128], when[64];
  va_list ap;
  int n;

  if (level == BRIG_LOG_DEBUG && !log_debug)
    return;
  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);

  if (level <= BRIG_LOG_WARNING || (level == BRIG_LOG_DEBUG && log_fd < 0))
    {
      n = snprintf (line, sizeof line, "%s%s\n",
                    level == BRIG_LOG_ERROR ? "" : (level == BRIG_LOG_WARNING ? "warning: " : "debug: "), msg);
      write_all (STDERR_FILENO, line, (size_t) n < sizeof line ? (size_t) n : sizeof line - 1);
    }
  if (log_fd < 0)
    return;
  format_time (when, sizeof when);
  if (log_format == BRIG_LOG_JSON)
    {
      char esc[8192];
      json_escape (esc, sizeof esc, msg);
      n = snprintf (line, sizeof line, "{\"level\":\"%s\",\"msg\":\"%s\",\"time\":\"%s\"}\n",
                    level_names[level], esc, when);
    }
  else
    n = snprintf (line, sizeof line, "time=\"%s\" level=%s msg=\"%s\"\n", when, level_names[level], msg);
  write_all (log_fd, line, (size_t) n < sizeof line ? (size_t) n : sizeof line - 1);
}
