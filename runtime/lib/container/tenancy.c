/* A container's tenancy record and its execs' grants (tenancy.h). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "container/state.h"
#include "container/tenancy.h"
#include "utils.h"

static const char *const state_names[] = { "open", "tenant", "vacant", "resetting" };

const char *
brig_tenancy_state_name (enum brig_tenancy_state s)
{
  return (size_t) s < BRIG_ARRAY_SIZE (state_names) ? state_names[s] : "unknown";
}

static void
parse (const char *text, struct brig_tenancy *t)
{
  char word[16];
  unsigned long long gen;

  /* Damaged: treat as a reset that did not finish, never as open. */
  *t = (struct brig_tenancy) { 0, BRIG_TENANCY_RESETTING };
  if (text == NULL || sscanf (text, "%llu %15s", &gen, word) != 2)
    return;
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (state_names); i++)
    if (strcmp (word, state_names[i]) == 0)
      {
        *t = (struct brig_tenancy) { gen, (enum brig_tenancy_state) i };
        return;
      }
}

static int
read_at (int dirfd, const char *path, struct brig_tenancy *t)
{
  _cleanup_free_ char *text = NULL;
  int r = brig_read_file_at (dirfd, path, &text, NULL, NULL);

  if (r == -ENOENT)
    {
      *t = (struct brig_tenancy) { 0, BRIG_TENANCY_OPEN };
      return 0;
    }
  parse (r < 0 ? NULL : text, t);
  return r;
}

int
brig_tenancy_read (int dirfd, struct brig_tenancy *t)
{
  return read_at (dirfd, BRIG_TENANCY_FILE, t);
}

int
brig_tenancy_peek (const struct brig_context *ctx, const char *id, struct brig_tenancy *t)
{
  _cleanup_free_ char *path = xasprintf ("%s/%s/" BRIG_TENANCY_FILE, ctx->state_root, id);
  /* A missing container is the locked load's to report. */
  int r = read_at (AT_FDCWD, path, t);
  return r == -ENOTDIR ? 0 : r;
}

int
brig_tenancy_write (int dirfd, unsigned long long gen, enum brig_tenancy_state s,
                    brig_error *err)
{
  char text[64];
  int n = snprintf (text, sizeof text, "%llu %s\n", gen, brig_tenancy_state_name (s));
  int r = brig_write_file_atomic (dirfd, BRIG_TENANCY_FILE, text, (size_t) n, 0600, err);
  return r < 0 ? brig_error_wrap (err, "record the tenancy") : 0;
}

int
brig_tenancy_refuse (int dirfd, const char *id, const struct brig_tenancy *t, const char *what,
                     brig_error *err)
{
  _cleanup_free_ char *failed = NULL;

  switch (t->state)
    {
    case BRIG_TENANCY_VACANT:
      return brig_error_set (err, 0, "cannot %s container \"%s\": it is an available pool "
                             "member, nobody's tenancy (brig pool claim hands it out)", what, id);
    case BRIG_TENANCY_RESETTING:
      failed = dirfd >= 0 ? brig_state_reset_failed (dirfd) : NULL;
      if (failed)
        return brig_error_set (err, 0, "cannot %s container \"%s\": reset failed: %s", what,
                               id, failed);
      return brig_error_set (err, 0, "cannot %s container \"%s\": a reset of it is running "
                             "or did not finish (killed before its checks held); reset it "
                             "again or delete it", what, id);
    default:
      return 0;
    }
}

/* ---- grants ---- */

/* "net_admin" and "CAP_NET_ADMIN" alike: "CAP_NET_ADMIN" (malloc'd). */
static char *
cap_canonical (const char *name)
{
  char *s = xasprintf ("%s%s", strncasecmp (name, "CAP_", 4) == 0 ? "" : "CAP_", name);
  for (char *c = s; *c; c++)
    *c = (char) toupper ((unsigned char) *c);
  return s;
}

/* Whether word is one of the space- or newline-separated words of text. */
static bool
has_word (const char *text, const char *word)
{
  size_t len = strlen (word);
  for (const char *s = text; s && (s = strstr (s, word)) != NULL; s += len)
    if ((s == text || s[-1] == ' ' || s[-1] == '\n')
        && (s[len] == ' ' || s[len] == '\n' || s[len] == '\0'))
      return true;
  return false;
}

/* The canonical names of every set of c, space-separated (malloc'd, "" for
 * none). */
static char *
cap_words (const oci_capabilities *c)
{
  char **sets[] = { c ? c->bounding : NULL, c ? c->effective : NULL, c ? c->permitted : NULL,
                    c ? c->inheritable : NULL, c ? c->ambient : NULL };
  size_t lens[] = { c ? c->bounding_len : 0, c ? c->effective_len : 0,
                    c ? c->permitted_len : 0, c ? c->inheritable_len : 0,
                    c ? c->ambient_len : 0 };
  char *words = xstrdup ("");

  for (size_t s = 0; s < BRIG_ARRAY_SIZE (sets); s++)
    for (size_t i = 0; i < lens[s]; i++)
      {
        _cleanup_free_ char *n = sets[s][i] ? cap_canonical (sets[s][i]) : NULL;
        if (n && !has_word (words, n))
          {
            char *w = xasprintf ("%s%s%s", words, *words ? " " : "", n);
            free (words);
            words = w;
          }
      }
  return words;
}

char *
brig_exec_caps_of (const oci_process *p)
{
  return cap_words (p ? p->capabilities : NULL);
}

int
brig_exec_grants_note (int dirfd, const char *had, const oci_process *p, brig_error *err)
{
  _cleanup_free_ char *has = cap_words (p->capabilities), *line = xstrdup ("");
  _cleanup_close_ int fd = -1;
  char *save = NULL;
  int r;

  for (char *w = strtok_r (has, " ", &save); w; w = strtok_r (NULL, " ", &save))
    if (!has_word (had, w))
      {
        char *l = xasprintf ("%s%s ", line, w);
        free (line);
        line = l;
      }
  if (*line == '\0')
    return 0;
  line[strlen (line) - 1] = '\n';
  /* One write of one line, O_APPEND: concurrent execs (shared lock) do
   * not interleave within a line. */
  fd = openat (dirfd, BRIG_EXEC_GRANTS_FILE, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC
               | O_NOFOLLOW, 0600);
  if (fd < 0)
    return brig_error_errno (err, "record the exec's capabilities in %s", BRIG_EXEC_GRANTS_FILE);
  r = brig_write_all (fd, line, strlen (line));
  if (r < 0)
    return brig_error_set (err, -r, "record the exec's capabilities in %s",
                           BRIG_EXEC_GRANTS_FILE);
  return 0;
}

bool
brig_exec_grants_have (int dirfd, const char *name)
{
  _cleanup_free_ char *text = NULL;
  int r = brig_read_file_at (dirfd, BRIG_EXEC_GRANTS_FILE, &text, NULL, NULL);

  if (r == -ENOENT)
    return false;
  /* unreadable: as if it had been given */
  return r < 0 || has_word (text, name);
}

void
brig_exec_grants_clear (int dirfd)
{
  unlinkat (dirfd, BRIG_EXEC_GRANTS_FILE, 0);
}
