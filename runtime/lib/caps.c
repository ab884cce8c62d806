/* Capabilities of the container process.
 *
 * Order matters: the bounding set is cut and PR_SET_KEEPCAPS set (for a
 * non-root uid) while the init still runs as root (brig_caps_prepare);
 * after setresuid/setresgid the permitted set survived, and brig_caps_apply
 * sets the five sets to exactly what config.json lists. The keep-caps flag
 * is left for execve to reset. A name libcap or the kernel does not know
 * is skipped with a warning (runtime-spec 1.3 config.md). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/capability.h>
#include <sys/prctl.h>

#include "caps.h"
#include "log.h"
#include "utils.h"

int
brig_caps_last_cap (void)
{
  static int last = -1;
  _cleanup_free_ char *buf = NULL;

  if (last >= 0)
    return last;
  if (brig_read_file_at (AT_FDCWD, "/proc/sys/kernel/cap_last_cap", &buf, NULL, NULL) == 0)
    last = atoi (buf);
  if (last <= 0)
    last = CAP_LAST_CAP;
  /* The masks below are 64 bits wide. */
  if (last > 63)
    last = 63;
  return last;
}

/* Resolve "CAP_XXX" to its number; -1 when libcap or the kernel lacks it.
 * Only the canonical upper-case spelling is accepted, as runc does. */
static int
cap_number (const char *name)
{
  cap_value_t v;

  if (strncmp (name, "CAP_", 4) != 0 || name[4] == '\0')
    return -1;
  for (const char *p = name + 4; *p; p++)
    if (!(isupper ((unsigned char) *p) || isdigit ((unsigned char) *p) || *p == '_'))
      return -1;
  if (cap_from_name (name, &v) < 0)
    return -1;
  if ((int) v > brig_caps_last_cap ())
    return -1;
  return (int) v;
}

static uint64_t
caps_mask (char **names, size_t n, const char *field, bool warn)
{
  uint64_t mask = 0;

  for (size_t i = 0; names != NULL && i < n; i++)
    {
      int c = cap_number (names[i]);
      if (c < 0)
        {
          if (warn)
            brig_warn ("process.capabilities.%s: unknown capability \"%s\" skipped", field,
                       names[i]);
          continue;
        }
      mask |= UINT64_C (1) << c;
    }
  return mask;
}

struct cap_sets {
  uint64_t bounding, effective, permitted, inheritable, ambient;
};

static void
parse_sets (const oci_capabilities *caps, struct cap_sets *s, bool warn)
{
  memset (s, 0, sizeof *s);
  if (caps == NULL)
    return;
  s->bounding = caps_mask (caps->bounding, caps->bounding_len, "bounding", warn);
  s->effective = caps_mask (caps->effective, caps->effective_len, "effective", warn);
  s->permitted = caps_mask (caps->permitted, caps->permitted_len, "permitted", warn);
  s->inheritable = caps_mask (caps->inheritable, caps->inheritable_len, "inheritable", warn);
  s->ambient = caps_mask (caps->ambient, caps->ambient_len, "ambient", warn);
}

void
brig_caps_check (const oci_capabilities *caps)
{
  struct cap_sets s;
  parse_sets (caps, &s, true);
}

int
brig_caps_prepare (const oci_capabilities *caps, uid_t uid, brig_error *err)
{
  struct cap_sets s;
  int last = brig_caps_last_cap ();
  int r;

  parse_sets (caps, &s, true);
  /* The kernel clears the permitted set only when the uids all leave 0
     (capabilities(7)); execve resets the flag, so it is never cleared
     here. */
  if (uid != 0 && prctl (PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
    return brig_error_errno (err, "prctl PR_SET_KEEPCAPS");
  for (int c = 0; c <= last; c++)
    {
      if (s.bounding & (UINT64_C (1) << c))
        continue;
      if (prctl (PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL)
        {
          int e = errno;
          char *name = cap_to_name ((cap_value_t) c);
          r = brig_error_set (err, e, "drop %s from the bounding set", name ? name : "?");
          cap_free (name);
          return r;
        }
    }
  return 0;
}

/* The process's capability sets through capget/capset themselves: libcap's
 * cap_get_proc and cap_set_proc each add a capget that probes the ABI
 * version. The init is single-threaded, so one capset covers it. */
struct proc_caps {
  uint64_t eff, perm, inh;
};

static int
get_proc (struct proc_caps *p, brig_error *err)
{
  struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
  struct __user_cap_data_struct d[2];

  memset (d, 0, sizeof d);
  if (capget (&h, d) < 0)
    return brig_error_errno (err, "get capabilities");
  p->eff = d[0].effective | (uint64_t) d[1].effective << 32;
  p->perm = d[0].permitted | (uint64_t) d[1].permitted << 32;
  p->inh = d[0].inheritable | (uint64_t) d[1].inheritable << 32;
  return 0;
}

static int
set_proc (uint64_t eff, uint64_t perm, uint64_t inh, brig_error *err)
{
  struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
  struct __user_cap_data_struct d[2];
  uint64_t known = brig_caps_last_cap () >= 63 ? UINT64_MAX
                   : (UINT64_C (1) << (brig_caps_last_cap () + 1)) - 1;

  eff &= known;
  perm &= known;
  inh &= known;
  d[0] = (struct __user_cap_data_struct) { (uint32_t) eff, (uint32_t) perm, (uint32_t) inh };
  d[1] = (struct __user_cap_data_struct) { (uint32_t) (eff >> 32), (uint32_t) (perm >> 32),
                                           (uint32_t) (inh >> 32) };
  if (capset (&h, d) < 0)
    return brig_error_errno (err, "set capabilities");
  return 0;
}

int
brig_caps_apply (const oci_capabilities *caps, brig_error *err)
{
  struct cap_sets s;
  struct proc_caps held = { 0, 0, 0 };
  int last = brig_caps_last_cap ();
  int r;

  parse_sets (caps, &s, false);
  r = get_proc (&held, err);
  if (r < 0)
    return r;
  /* setresuid to a non-zero uid cleared the effective set; raise what is
   * still permitted so CAP_SETPCAP can shape the inheritable set. A root
   * process already holds that (effective equals permitted, nothing
   * inheritable), and the call would change nothing the next one keeps. */
  if (held.eff != held.perm || held.inh != 0)
    {
      r = set_proc (held.perm, held.perm, 0, err);
      if (r < 0)
        return brig_error_wrap (err, "restore capabilities after the uid change");
    }
  r = set_proc (s.effective, s.permitted, s.inheritable, err);
  if (r < 0)
    return r;

  /* capset has cut the ambient set to permitted & inheritable already:
     when that is empty (no inheritable caps, the usual config) there is
     nothing left to clear. */
  if ((s.permitted & s.inheritable) != 0
      && prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
    return brig_error_errno (err, "clear ambient capabilities");
  for (int c = 0; c <= last; c++)
    {
      if (!(s.ambient & (UINT64_C (1) << c)))
        continue;
      if (prctl (PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, c, 0, 0) < 0)
        {
          /* The kernel only allows ambient caps that are also permitted
           * and inheritable: a config that lists one without the other is
           * honoured as far as possible, as runc does, and as quietly:
           * `runc spec` itself writes such a config, so a warning would
           * be printed on every run of the most common bundle. */
          int e = errno;
          char *name = cap_to_name ((cap_value_t) c);
          brig_debug ("cannot raise ambient capability %s: %s", name ? name : "?", strerror (e));
          cap_free (name);
        }
    }
  return 0;
}

char **
brig_caps_known (size_t *n)
{
  int last = brig_caps_last_cap ();
  char **v = xmalloc0 ((size_t) (last + 2) * sizeof *v);

  *n = 0;
  for (int i = 0; i <= last; i++)
    {
      char *name = cap_to_name ((cap_value_t) i);
      /* libcap spells numbers it has no name for as plain digits. */
      if (name != NULL && strncmp (name, "cap_", 4) == 0)
        {
          char *up = xstrdup (name);
          for (char *p = up; *p; p++)
            *p = (char) toupper ((unsigned char) *p);
          v[(*n)++] = up;
        }
      cap_free (name);
    }
  v[*n] = NULL;
  return v;
}
