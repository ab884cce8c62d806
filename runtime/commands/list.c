/* brig list [-q] [--format table|json] */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "container/state.h"
#include "utils.h"

/* runc's list shows the state directory's owner by name. */
static char *
owner_name (const brig_container *c)
{
  struct stat st;
  char *name;
  if (fstat (c->dirfd, &st) < 0)
    return xstrdup ("");
  name = brig_passwd_field (st.st_uid, 0);
  return name ? name : xasprintf ("#%u", (unsigned) st.st_uid);
}

int
cmd_list (struct brig_globals *g, int argc, char **argv)
{
  static const struct option opts[] = {
    { "quiet", no_argument, NULL, 'q' },
    { "format", required_argument, NULL, 'f' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  struct brig_context ctx = cli_context (g, 0);
  _cleanup_strv_ char **ids = NULL;
  brig_error err = { 0 };
  bool quiet = false, first = true;
  int json = 0, c;

  while ((c = getopt_long_only (argc, argv, "qf:h", opts, NULL)) != -1)
    switch (c)
      {
      case 'q': quiet = true; break;
      case 'f':
        json = cli_parse_format ("list", optarg);
        if (json < 0)
          return 1;
        break;
      case 'h':
        printf ("Usage: brig list [--quiet] [--format table|json]\n\n"
                "List the containers under --root.\n");
        return 0;
      default: return 1;
      }
  if (cli_require_args ("list", argc, argv, optind, 0) < 0)
    return 1;
  if (brig_state_list (&ctx, &ids, &err) < 0)
    return cli_fail (&err);

  size_t n = 0;
  for (char **id = ids; *id; id++)
    n++;
  /* Rows first: table columns are as wide as their widest cell (runc's
   * tabwriter: at least 12, 3 spaces of padding). */
  char *(*rows)[6] = xmalloc0 ((n + 1) * sizeof *rows);
  size_t nrows = 0;
  int width[6] = { 0 };
  static const char *const head[6] = { "ID", "PID", "STATUS", "BUNDLE", "CREATED", "OWNER" };

  if (json && !quiet)
    fputs ("[", stdout);
  for (char **id = ids; *id; id++)
    {
      brig_container *ct = NULL;
      /* A damaged state.json is listed as "unknown", not hidden: only
       * delete --force removes it. */
      if (brig_container_load_any (&ctx, *id, BRIG_LOCK_NONE, &ct, NULL) < 0)
        continue; /* deleted meanwhile */
      /* Not there until its create has finished, as in runc and crun (state
       * answers that it does not exist). */
      if (ct->status == BRIG_STATUS_CREATING)
        {
          brig_container_free (ct);
          continue;
        }
      if (quiet)
        printf ("%s\n", *id);
      else
        {
          char *owner = owner_name (ct);
          oci_state *s = brig_container_oci_state (ct, -1);
          free (s->owner);
          s->owner = owner;
          if (json)
            {
              char *j = oci_generate (&oci_state_type, s, false, NULL);
              if (j)
                printf ("%s%s", first ? "" : ",", j);
              free (j);
            }
          else
            {
              rows[nrows][0] = xstrdup (s->id);
              rows[nrows][1] = xasprintf ("%lld", (long long) s->pid);
              rows[nrows][2] = xstrdup (s->status);
              rows[nrows][3] = xstrdup (s->bundle);
              rows[nrows][4] = xstrdup (s->created);
              rows[nrows][5] = xstrdup (s->owner);
              nrows++;
            }
          oci_free (&oci_state_type, s);
          first = false;
        }
      brig_container_free (ct);
    }
  if (json && !quiet)
    fputs ("]\n", stdout);
  else if (!quiet)
    {
      for (int k = 0; k < 6; k++)
        {
          width[k] = (int) strlen (head[k]) + 3;
          for (size_t i = 0; i < nrows; i++)
            if ((int) strlen (rows[i][k]) + 3 > width[k])
              width[k] = (int) strlen (rows[i][k]) + 3;
          if (width[k] < 12)
            width[k] = 12;
        }
      for (int k = 0; k < 5; k++)
        printf ("%-*s", width[k], head[k]);
      printf ("%s\n", head[5]);
      for (size_t i = 0; i < nrows; i++)
        {
          for (int k = 0; k < 5; k++)
            printf ("%-*s", width[k], rows[i][k]);
          printf ("%s\n", rows[i][5]);
          for (int k = 0; k < 6; k++)
            free (rows[i][k]);
        }
    }
  free (rows);
  return fflush (stdout) == 0 ? 0 : 1;
}
