/* brig cp [-a] [-L] SRC ID:DST | ID:SRC DST: files into and out of a
 * container as docker cp copies them ("-" for a tar stream on stdin or
 * stdout). The work is libbrig's (container/copy.h): this file only tells
 * the two sides apart and picks the host side. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "container/copy.h"

/* "ID:PATH" names a container path when the part before the first ':' is
 * non-empty and has no '/' (a local path with ':' is written "./a:b"). */
static bool
container_arg (const char *arg, char **id, const char **path)
{
  const char *colon = strchr (arg, ':');

  if (colon == NULL || colon == arg || memchr (arg, '/', (size_t) (colon - arg)))
    return false;
  *id = strndup (arg, (size_t) (colon - arg));
  *path = colon + 1;
  return true;
}

static bool
names_contents (const char *p)
{
  size_t n = strlen (p);

  return strcmp (p, ".") == 0 || (n >= 2 && p[n - 1] == '.' && p[n - 2] == '/');
}

struct host_side {
  const char *path;
  bool follow, keep_owner, contents;
};

static int
produce_path (int fd, void *data, brig_error *err)
{
  const struct host_side *h = data;
  return brig_copy_host_archive (fd, h->path, h->follow, err);
}

static int
produce_stdin (int fd, void *data, brig_error *err)
{
  (void) data;
  return brig_copy_relay (0, fd, err);
}

static int
consume_path (int fd, void *data, brig_error *err)
{
  const struct host_side *h = data;
  return brig_copy_host_extract (fd, h->path, h->contents, h->keep_owner, err);
}

static int
consume_stdout (int fd, void *data, brig_error *err)
{
  (void) data;
  return brig_copy_relay (fd, 1, err);
}

static int
usage (void)
{
  printf ("Usage: brig cp [-a] [-L] SRC_PATH CONTAINER_ID:DEST_PATH\n"
          "       brig cp [-a] [-L] CONTAINER_ID:SRC_PATH DEST_PATH\n\n"
          "Copy files into or out of a created, running or paused container, as docker cp\n"
          "does: a file onto a file or into a directory, a directory into a directory\n"
          "(DIR/. copies its contents). SRC_PATH - reads a tar stream from stdin and\n"
          "extracts it into the directory DEST_PATH; DEST_PATH - writes one to stdout.\n"
          "Container paths are resolved inside the container's root.\n\n"
          "  -a, --archive       keep the ids of the archive (into) or of the container (out)\n"
          "  -L, --follow-link   follow SRC_PATH's last symlink\n");
  return 0;
}

int
cmd_cp (struct brig_globals *g, int argc, char **argv)
{
  static const struct option opts[] = {
    { "archive", no_argument, NULL, 'a' },
    { "follow-link", no_argument, NULL, 'L' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  struct brig_context ctx = cli_context (g, 0);
  struct brig_copy_opts o = { 0 };
  struct host_side h = { 0 };
  brig_error err = { 0 };
  char *sid = NULL, *did = NULL;
  const char *spath, *dpath;
  bool src_in, dst_in;
  struct stat st;
  int c, r;

  while ((c = getopt_long (argc, argv, "aLh", opts, NULL)) != -1)
    switch (c)
      {
      case 'a': o.keep_owner = h.keep_owner = true; break;
      case 'L': o.follow = h.follow = true; break;
      case 'h': return usage ();
      default: return 1;
      }
  if (cli_require_args ("cp", argc, argv, optind, 2) < 0)
    return 1;
  src_in = container_arg (argv[optind], &sid, &spath);
  dst_in = container_arg (argv[optind + 1], &did, &dpath);
  if (src_in && dst_in)
    return cli_usage_error ("cp", "%s, %s: copying between containers is not supported",
                            argv[optind], argv[optind + 1]);
  if (!src_in && !dst_in)
    return cli_usage_error ("cp", "%s, %s: one of them must be CONTAINER_ID:PATH",
                            argv[optind], argv[optind + 1]);
  if (dst_in)
    {
      h.path = argv[optind];
      o.id = did;
      o.path = *dpath ? dpath : "/";
      o.as_is = strcmp (h.path, "-") == 0;
      o.contents = names_contents (h.path);
      if (!o.as_is && (h.follow ? stat (h.path, &st) : lstat (h.path, &st)) < 0)
        {
          brig_error_errno (&err, "%s", h.path);
          return cli_fail (&err);
        }
      r = brig_copy_into (&ctx, &o, o.as_is ? produce_stdin : produce_path, &h, &err);
    }
  else
    {
      h.path = argv[optind + 1];
      h.contents = names_contents (spath);
      o.id = sid;
      o.path = *spath ? spath : "/";
      r = brig_copy_out_of (&ctx, &o, strcmp (h.path, "-") == 0 ? consume_stdout : consume_path,
                            &h, &err);
    }
  if (r < 0)
    return cli_fail (&err);
  return 0;
}
