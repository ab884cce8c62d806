/* exec's process: the container's process with exec's overrides (--env,
 * --cwd, --user, --cap, ... of `brig exec`) applied, and the checks every
 * process of exec passes, from the flags or from --process FILE. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "container/exec.h"
#include "process/process.h"
#include "utils.h"

static size_t
strv_len (char **v)
{
  size_t n = 0;
  while (v && v[n])
    n++;
  return n;
}

/* Append a copy of s to *v (length *len), keeping it NULL-terminated. */
static void
strv_push (char ***v, size_t *len, const char *s)
{
  *v = xrealloc (*v, (*len + 2) * sizeof (char *));
  (*v)[(*len)++] = xstrdup (s);
  (*v)[*len] = NULL;
}

static char **
strv_dup (char **v, size_t *len)
{
  size_t n = strv_len (v);
  char **r = xmalloc0 ((n + 1) * sizeof (char *));
  for (size_t i = 0; i < n; i++)
    r[i] = xstrdup (v[i]);
  *len = n;
  return r;
}

/* KEY=VALUE replaces an entry with the same KEY, else is appended. */
static void
env_set (oci_process *p, const char *kv)
{
  const char *eq = strchr (kv, '=');
  size_t klen = eq ? (size_t) (eq - kv) : strlen (kv);

  for (size_t i = 0; i < p->env_len; i++)
    if (strncmp (p->env[i], kv, klen) == 0
        && (p->env[i][klen] == '=' || p->env[i][klen] == '\0'))
      {
        free (p->env[i]);
        p->env[i] = xstrdup (kv);
        return;
      }
  strv_push (&p->env, &p->env_len, kv);
}

static int
parse_id (const char *s, const char *what, uint32_t *out, brig_error *err)
{
  char *end;
  unsigned long v;

  errno = 0;
  v = strtoul (s, &end, 10);
  if (*s == '\0' || *s == '-' || *end != '\0' || errno != 0)
    return brig_error_set (err, 0, "--user: %s \"%s\" is not a number", what, s);
  if (v > BRIG_ID_MAX)
    return brig_error_set (err, 0, "--user: %s %s is out of range (0-%u)", what, s, BRIG_ID_MAX);
  *out = (uint32_t) v;
  return 0;
}

static int
apply_user (oci_process *p, const char *spec, brig_error *err)
{
  _cleanup_free_ char *copy = xstrdup (spec);
  char *colon = strchr (copy, ':');
  uint32_t uid, gid;
  int r;

  if (colon)
    *colon = '\0';
  r = parse_id (copy, "uid", &uid, err);
  if (r < 0)
    return r;
  if (colon)
    {
      r = parse_id (colon + 1, "gid", &gid, err);
      if (r < 0)
        return r;
    }
  if (p->user == NULL)
    p->user = xmalloc0 (sizeof *p->user);
  p->user->uid = uid;
  p->user->has_uid = true;
  if (colon)
    {
      p->user->gid = gid;
      p->user->has_gid = true;
    }
  /* A numeric user replaces a username the config may carry. */
  free (p->user->username);
  p->user->username = NULL;
  return 0;
}

static bool
strv_has (char **v, const char *s)
{
  for (; v && *v; v++)
    if (strcasecmp (*v, s) == 0)
      return true;
  return false;
}

/* Never into the inheritable set (CVE-2022-29162: an inheritable cap lets
 * file capabilities of a program in the image raise it on execve); ambient
 * only when the config already makes it inheritable, the one case where the
 * kernel lets ambient hold it. */
static void
add_cap (oci_process *p, const char *name)
{
  oci_capabilities *c;

  if (p->capabilities == NULL)
    p->capabilities = xmalloc0 (sizeof *p->capabilities);
  c = p->capabilities;
  strv_push (&c->bounding, &c->bounding_len, name);
  strv_push (&c->effective, &c->effective_len, name);
  strv_push (&c->permitted, &c->permitted_len, name);
  if (strv_has (c->inheritable, name))
    strv_push (&c->ambient, &c->ambient_len, name);
}

static void
replace_str (char **dst, const char *src)
{
  free (*dst);
  *dst = xstrdup (src);
}

int
brig_exec_apply_overrides (oci_process *p, const struct brig_exec_overrides *o,
                           brig_error *err)
{
  int r;

  if (o->args)
    {
      brig_strv_free (p->args);
      p->args = strv_dup (o->args, &p->args_len);
      free (p->command_line);
      p->command_line = NULL;
    }
  if (o->cwd)
    replace_str (&p->cwd, o->cwd);
  for (size_t i = 0; o->env && o->env[i]; i++)
    env_set (p, o->env[i]);
  if (o->user)
    {
      r = apply_user (p, o->user, err);
      if (r < 0)
        return r;
    }
  if (o->gids_len > 0)
    {
      oci_user *u;
      for (size_t i = 0; i < o->gids_len; i++)
        if (o->gids[i] > BRIG_ID_MAX)
          return brig_error_set (err, 0, "--additional-gids: %u is out of range (0-%u)",
                                 (unsigned) o->gids[i], BRIG_ID_MAX);
      if (p->user == NULL)
        p->user = xmalloc0 (sizeof *p->user);
      u = p->user;
      u->additional_gids = xrealloc (u->additional_gids,
                                     (u->additional_gids_len + o->gids_len) * sizeof (uint32_t));
      memcpy (u->additional_gids + u->additional_gids_len, o->gids,
              o->gids_len * sizeof (uint32_t));
      u->additional_gids_len += o->gids_len;
    }
  for (size_t i = 0; o->caps && o->caps[i]; i++)
    add_cap (p, o->caps[i]);
  /* exec gets a terminal only when asked, whatever the container's init has. */
  p->terminal = o->tty == 1;
  p->has_terminal = true;
  if (o->no_new_privs == 1)
    {
      p->no_new_privileges = true;
      p->has_no_new_privileges = true;
    }
  if (o->apparmor)
    replace_str (&p->apparmor_profile, o->apparmor);
  if (o->process_label)
    replace_str (&p->selinux_label, o->process_label);
  return 0;
}

int
brig_exec_validate_process (const oci_process *p, brig_error *err)
{
  if (p->args == NULL || p->args_len == 0 || p->args[0] == NULL || p->args[0][0] == '\0')
    return brig_error_set (err, 0, "process: args must not be empty");
  if (p->cwd == NULL || p->cwd[0] == '\0')
    return brig_error_set (err, 0, "process: cwd must not be empty");
  if (p->cwd[0] != '/')
    return brig_error_set (err, 0, "process: cwd \"%s\" is not an absolute path", p->cwd);
  if (brig_process_validate_user (p->user, err) < 0)
    return -EINVAL;
  return brig_process_validate_env (p, err);
}

