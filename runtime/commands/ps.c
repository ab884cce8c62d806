/* brig ps: the processes running inside a container. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "container/ps.h"
#include "utils.h"

static void
ps_usage (void)
{
  printf ("Usage: brig ps [--format table|json] ID [PS_OPTIONS...]\n"
          "\n"
          "Show the processes of container ID. json prints the host pids as a JSON\n"
          "array; table runs the host's ps(1) (with PS_OPTIONS, default -ef) and\n"
          "keeps the header and the lines of the container's processes.\n"
          "\n"
          "  --format, -f FORMAT  table (default) or json\n");
}

static int
print_json (const pid_t *pids, size_t n)
{
  /* runc encodes its empty pid list as null, and tools written for runc
   * test for that. */
  if (n == 0)
    {
      puts ("null");
      return fflush (stdout) == 0 ? 0 : 1;
    }
  putchar ('[');
  for (size_t i = 0; i < n; i++)
    printf ("%s%d", i ? "," : "", (int) pids[i]);
  puts ("]");
  return fflush (stdout) == 0 ? 0 : 1;
}

/* Run ps with args (argv[0] excluded) and return its whole output. */
static int
run_ps (char **args, int nargs, char **out, brig_error *err)
{
  _cleanup_free_ char **argv = xmalloc0 ((size_t) (nargs + 3) * sizeof (char *));
  int fds[2], status, r;
  size_t len;
  pid_t pid;

  argv[0] = (char *) "ps";
  if (nargs == 0)
    argv[1] = (char *) "-ef";
  else
    memcpy (argv + 1, args, (size_t) nargs * sizeof (char *));

  if (pipe2 (fds, O_CLOEXEC) < 0)
    return brig_error_errno (err, "ps: pipe");
  pid = fork ();
  if (pid < 0)
    {
      close (fds[0]);
      close (fds[1]);
      return brig_error_errno (err, "ps: fork");
    }
  if (pid == 0)
    {
      if (dup2 (fds[1], STDOUT_FILENO) < 0)
        _exit (127);
      execvp ("ps", argv);
      fprintf (stderr, "brig: ps: exec ps: %s\n", strerror (errno));
      _exit (127);
    }
  close (fds[1]);
  r = brig_read_fd (fds[0], out, &len, err);
  close (fds[0]);
  while (waitpid (pid, &status, 0) < 0 && errno == EINTR)
    ;
  if (r < 0)
    return r;
  if (!WIFEXITED (status) || WEXITSTATUS (status) != 0)
    return brig_error_set (err, 0, "ps: ps(1) failed (%s %d)",
                           WIFEXITED (status) ? "exit status" : "signal",
                           WIFEXITED (status) ? WEXITSTATUS (status) : WTERMSIG (status));
  return 0;
}

/* The whitespace-separated field number col of line, as a pid; -1 if none. */
static long
field_pid (const char *line, int col)
{
  const char *p = line;
  char *end;
  long v;

  for (int i = 0;; i++)
    {
      while (*p == ' ' || *p == '\t')
        p++;
      if (*p == '\0' || *p == '\n')
        return -1;
      if (i == col)
        break;
      while (*p && *p != ' ' && *p != '\t' && *p != '\n')
        p++;
    }
  v = strtol (p, &end, 10);
  if (end == p || (*end != ' ' && *end != '\t' && *end != '\n' && *end != '\0'))
    return -1;
  return v;
}

/* The column of the "PID" header. */
static int
pid_column (const char *header)
{
  const char *p = header;

  for (int i = 0;; i++)
    {
      const char *start;
      while (*p == ' ' || *p == '\t')
        p++;
      if (*p == '\0' || *p == '\n')
        return -1;
      start = p;
      while (*p && *p != ' ' && *p != '\t' && *p != '\n')
        p++;
      if (p - start == 3 && strncmp (start, "PID", 3) == 0)
        return i;
    }
}

static int
print_table (const pid_t *pids, size_t n, char **args, int nargs, brig_error *err)
{
  _cleanup_free_ char *out = NULL;
  char *line, *next;
  int col, r;

  r = run_ps (args, nargs, &out, err);
  if (r < 0)
    return r;
  next = strchr (out, '\n');
  if (next)
    *next++ = '\0';
  col = pid_column (out);
  if (col < 0)
    return brig_error_set (err, 0, "ps: no PID column in the output of ps(1): "
                           "include pid in the -o format");
  printf ("%s\n", out);
  for (line = next; line && *line; line = next)
    {
      long pid;
      next = strchr (line, '\n');
      if (next)
        *next++ = '\0';
      pid = field_pid (line, col);
      for (size_t i = 0; pid > 0 && i < n; i++)
        if (pids[i] == pid)
          {
            printf ("%s\n", line);
            break;
          }
    }
  return fflush (stdout) == 0 ? 0 : brig_error_errno (err, "ps: write");
}

int
cmd_ps (struct brig_globals *g, int argc, char **argv)
{
  static const struct option opts[] = {
    { "format", required_argument, NULL, 'f' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  struct brig_context ctx = cli_context (g, 0);
  _cleanup_free_ pid_t *pids = NULL;
  brig_error err = { 0 };
  size_t n = 0;
  int c, json = 0;
  const char *id;

  while ((c = getopt_long_only (argc, argv, "+f:h", opts, NULL)) != -1)
    switch (c)
      {
      case 'f':
        json = cli_parse_format ("ps", optarg);
        if (json < 0)
          return 1;
        break;
      case 'h': ps_usage (); return 0;
      default: return 1;
      }
  if (optind >= argc)
    return cli_usage_error ("ps", "requires a container id (see 'brig ps --help')");
  id = argv[optind++];

  if (brig_container_pids (&ctx, id, &pids, &n, &err) < 0)
    return cli_fail (&err);
  if (json)
    return print_json (pids, n);
  if (print_table (pids, n, argv + optind, argc - optind, &err) < 0)
    return cli_fail (&err);
  return 0;
}
