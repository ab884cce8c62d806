/* Capabilities of the container process.
 *
 * Order matters: the bounding set is cut and PR_SET_KEEPCAPS set (for a
 * non-root uid) while the init still runs as root (brig_caps_prepare);
 * after setresuid/setresgid the permitted set survived, and brig_caps_apply
 * sets the five sets to exactly what config.json lists. The keep-caps flag
 * is left for execve to reset. A name brig (capnames.c) or the kernel does
 * not know is skipped with a warning (runtime-spec 1.3 config.md). */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "process/capnames.h"
#include "process/caps.h"
#include "log.h"
#include "utils.h"

/* Does the running kernel know capability number c? PR_CAPBSET_READ
 * fails with EINVAL above its last one. */
static bool
kernel_knows_cap (int c)
{
  return prctl (PR_CAPBSET_READ, c, 0, 0, 0) >= 0;
}

int
brig_caps_last_cap (void)
{
  static int last = -1;

  if (last >= 0)
    return last;
  /* Asked once per process, and only by a config that lists
   * capabilities: from the newest capability brig knows, up or down, one
   * prctl each (two on a kernel of brig's age). Cheaper than reading
   * /proc/sys/kernel/cap_last_cap, and /proc need not be mounted. The
   * masks below are 64 bits wide. */
  last = CAP_LAST_CAP;
  if (kernel_knows_cap (last))
    while (last < 63 && kernel_knows_cap (last + 1))
      last++;
  else if (errno == EINVAL)
    while (last > 0 && !kernel_knows_cap (last))
      last--;
  /* Any other error (a caller's seccomp filter): the headers' value. */
  return last;
}

/* Every kernel brig runs on (openat2: 5.6) knows the capabilities up to
 * CAP_AUDIT_READ (3.16): only newer ones need the kernel asked. */
#define CAPS_ALWAYS_KNOWN 37

/* Resolve "CAP_XXX" to its number; -1 when brig or the kernel lacks it.
 * Only the canonical upper-case spelling is accepted, as runc does. */
static int
cap_number (const char *name)
{
  int v = brig_cap_from_name (name);

  if (v < 0 || (v > CAPS_ALWAYS_KNOWN && v > brig_caps_last_cap ()))
    return -1;
  return v;
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
brig_caps_prepare (const oci_capabilities *caps, uid_t uid, bool warn, brig_error *err)
{
  struct cap_sets s;

  parse_sets (caps, &s, warn);
  /* The kernel clears the permitted set only when the uids all leave 0
     (capabilities(7)); execve resets the flag, so it is never cleared
     here. */
  if (uid != 0 && prctl (PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
    return brig_error_errno (err, "prctl PR_SET_KEEPCAPS");
  /* Up to the kernel's last capability, which the first EINVAL shows
     (no probe of it first). */
  for (int c = 0; c <= 63; c++)
    {
      if (s.bounding & (UINT64_C (1) << c))
        continue;
      if (prctl (PR_CAPBSET_DROP, c, 0, 0, 0) == 0)
        continue;
      /* Past the kernel's last capability; never one every kernel has
         (that EINVAL would come from something else, a seccomp filter:
         the rest must not stay in the bounding set). */
      if (errno == EINVAL && c > CAPS_ALWAYS_KNOWN)
        break;
      const char *name = brig_cap_name (c);
      return brig_error_set (err, errno, "drop %s from the bounding set", name ? name : "?");
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
  if (syscall (SYS_capget, &h, d) < 0)
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
  uint64_t known = UINT64_MAX;

  /* Bits the kernel does not know make capset fail: asked only when a set
     reaches past the capabilities every kernel has. */
  if ((eff | perm | inh) >> (CAPS_ALWAYS_KNOWN + 1))
    known = brig_caps_last_cap () >= 63 ? UINT64_MAX
            : (UINT64_C (1) << (brig_caps_last_cap () + 1)) - 1;
  eff &= known;
  perm &= known;
  inh &= known;
  d[0] = (struct __user_cap_data_struct) { (uint32_t) eff, (uint32_t) perm, (uint32_t) inh };
  d[1] = (struct __user_cap_data_struct) { (uint32_t) (eff >> 32), (uint32_t) (perm >> 32),
                                           (uint32_t) (inh >> 32) };
  if (syscall (SYS_capset, &h, d) < 0)
    return brig_error_errno (err, "set capabilities");
  return 0;
}

int
brig_caps_apply (const oci_capabilities *caps, brig_error *err)
{
  struct cap_sets s;
  struct proc_caps held = { 0, 0, 0 };
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
  for (int c = 0; c <= 63; c++)
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
          const char *name = brig_cap_name (c);
          brig_debug ("cannot raise ambient capability %s: %s", name ? name : "?", strerror (errno));
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
      const char *name = brig_cap_name (i);
      if (name != NULL)
        v[(*n)++] = xstrdup (name);
    }
  v[*n] = NULL;
  return v;
}
