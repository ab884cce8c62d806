/* Unit tests for runtime/lib/process/caps.c: name handling, and the five sets as
 * the kernel reports them (/proc/self/status) after prepare, a uid change
 * and apply, in a forked child. Needs root (skips otherwise). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "process/caps.h"
#include "ocispec.h"
#include "tap.h"
#include "utils.h"

#define BIT(n) (UINT64_C (1) << (n))
#define CAP_CHOWN_N 0
#define CAP_KILL_N 5
#define CAP_NET_BIND_N 10
#define CAP_SYS_ADMIN_N 21

static oci_capabilities *
parse (const char *json)
{
  oci_error e = { 0 };
  oci_capabilities *c = oci_parse_data (&oci_capabilities_type, json, strlen (json), "caps", &e);
  if (c == NULL)
    {
      tap_diag ("parse: %s", e.msg);
      free (e.msg);
    }
  return c;
}

static uint64_t
status_mask (const char *field)
{
  _cleanup_free_ char *buf = NULL;
  char *p;

  if (brig_read_file_at (AT_FDCWD, "/proc/self/status", &buf, NULL, NULL) < 0)
    return ~UINT64_C (0);
  p = strstr (buf, field);
  if (p == NULL)
    return ~UINT64_C (0);
  return strtoull (p + strlen (field), NULL, 16);
}

/* Child: prepare, change to uid/gid 1000, apply; then report through the
 * exit code which expectations failed (bit per check). */
static int
child_sets (const char *json, uid_t uid, const uint64_t want[5])
{
  oci_capabilities *c = parse (json);
  brig_error err = { 0 };
  int bad = 0;

  if (brig_caps_prepare (c, uid, true, &err) < 0)
    return 100;
  if (uid != 0 && (setresgid (uid, uid, uid) < 0 || setresuid (uid, uid, uid) < 0))
    return 101;
  if (brig_caps_apply (c, &err) < 0)
    {
      fprintf (stderr, "apply: %s\n", err.msg);
      return 102;
    }
  if (status_mask ("CapBnd:\t") != want[0]) bad |= 1;
  if (status_mask ("CapEff:\t") != want[1]) bad |= 2;
  if (status_mask ("CapPrm:\t") != want[2]) bad |= 4;
  if (status_mask ("CapInh:\t") != want[3]) bad |= 8;
  if (status_mask ("CapAmb:\t") != want[4]) bad |= 16;
  if (bad)
    fprintf (stderr, "bnd %" PRIx64 " eff %" PRIx64 " prm %" PRIx64 " inh %" PRIx64 " amb %" PRIx64 "\n",
             status_mask ("CapBnd:\t"), status_mask ("CapEff:\t"), status_mask ("CapPrm:\t"),
             status_mask ("CapInh:\t"), status_mask ("CapAmb:\t"));
  oci_free (&oci_capabilities_type, c);
  return bad;
}

static int
in_child (int (*fn) (const char *, uid_t, const uint64_t *), const char *json, uid_t uid,
          const uint64_t *want)
{
  int st = 0;
  pid_t pid = fork ();
  if (pid == 0)
    _exit (fn (json, uid, want));
  waitpid (pid, &st, 0);
  return WIFEXITED (st) ? WEXITSTATUS (st) : 200;
}

static char tmpfile_path[] = "/tmp/brig-test-caps.XXXXXX";

/* chown needs CAP_CHOWN: works with it, EPERM after apply without it. */
static int
child_chown (const char *json, uid_t uid, const uint64_t *want)
{
  oci_capabilities *c = parse (json);
  brig_error err = { 0 };
  if (brig_caps_prepare (c, uid, true, &err) < 0 || setresuid (uid, uid, uid) < 0 || brig_caps_apply (c, &err) < 0)
    return 100;
  if (chown (tmpfile_path, 4242, 4242) == 0)
    return want[0] ? 0 : 1;
  return (errno == EPERM && !want[0]) ? 0 : 2;
}

int
main (void)
{
  size_t n = 0;
  char **known = brig_caps_known (&n);
  int last = brig_caps_last_cap ();
  uint64_t all = (last >= 63) ? ~UINT64_C (0) : (BIT (last + 1) - 1);
  int fd;

  tap_plan (9);
  tap_ok (n > 37 && n <= (size_t) last + 1 && strcmp (known[0], "CAP_CHOWN") == 0
          && strcmp (known[21], "CAP_SYS_ADMIN") == 0,
          "brig_caps_known lists %zu names, CAP_CHOWN first (cap_last_cap %d)", n, last);
  brig_strv_free (known);

  if (geteuid () != 0)
    {
      for (int i = 2; i <= 9; i++)
        tap_ok (true, "# SKIP needs root");
      return 0;
    }
  fd = mkstemp (tmpfile_path);
  if (fd >= 0)
    close (fd);

  {
    const uint64_t want[5] = { BIT (CAP_CHOWN_N) | BIT (CAP_KILL_N), BIT (CAP_CHOWN_N),
                               BIT (CAP_CHOWN_N) | BIT (CAP_KILL_N), BIT (CAP_KILL_N), BIT (CAP_KILL_N) };
    int r = in_child (child_sets, "{\"bounding\":[\"CAP_CHOWN\",\"CAP_KILL\"],\"effective\":[\"CAP_CHOWN\"],"
                      "\"permitted\":[\"CAP_CHOWN\",\"CAP_KILL\"],\"inheritable\":[\"CAP_KILL\"],"
                      "\"ambient\":[\"CAP_KILL\"]}", 1000, want);
    tap_ok (r == 0, "uid 1000: bounding, effective, permitted, inheritable, ambient as listed (%d)", r);
  }
  {
    const uint64_t want[5] = { BIT (CAP_NET_BIND_N), BIT (CAP_NET_BIND_N), BIT (CAP_NET_BIND_N), 0, 0 };
    int r = in_child (child_sets, "{\"bounding\":[\"CAP_NET_BIND_SERVICE\",\"CAP_NO_SUCH\",\"cap_kill\"],"
                      "\"effective\":[\"CAP_NET_BIND_SERVICE\",\"CAP_BOGUS\"],"
                      "\"permitted\":[\"CAP_NET_BIND_SERVICE\"]}", 0, want);
    tap_ok (r == 0, "unknown and lower-case names are skipped, not fatal (%d)", r);
  }
  {
    const uint64_t want[5] = { 0, 0, 0, 0, 0 };
    int r = in_child (child_sets, "{}", 0, want);
    tap_ok (r == 0, "empty capabilities object: every set empty (%d)", r);
  }
  {
    /* Every capability the host still has (runc, too, fails with EPERM
     * when asked for one the host's bounding set lacks). */
    uint64_t host = status_mask ("CapBnd:\t") & all;
    const uint64_t want[5] = { host, host, host, 0, 0 };
    char json[8192], list[2048];
    size_t off = 0;
    char **names = brig_caps_known (&n);
    for (size_t i = 0; i < n; i++)
      if (host & BIT (i))
        off += (size_t) snprintf (list + off, sizeof list - off, "%s\"%s\"", off ? "," : "", names[i]);
    snprintf (json, sizeof json, "{\"bounding\":[%s],\"effective\":[%s],\"permitted\":[%s]}", list,
              list, list);
    brig_strv_free (names);
    int r = in_child (child_sets, json, 0, want);
    tap_ok (r == 0, "every capability of the host kept for root (%d)", r);
  }
  {
    const uint64_t yes[5] = { 1 }, no[5] = { 0 };
    int r1 = in_child (child_chown, "{\"bounding\":[\"CAP_CHOWN\"],\"effective\":[\"CAP_CHOWN\"],"
                       "\"permitted\":[\"CAP_CHOWN\"]}", 0, yes);
    int r2 = in_child (child_chown, "{\"bounding\":[\"CAP_KILL\"],\"effective\":[\"CAP_KILL\"],"
                       "\"permitted\":[\"CAP_KILL\"]}", 0, no);
    tap_ok (r1 == 0, "chown works with CAP_CHOWN (%d)", r1);
    tap_ok (r2 == 0, "chown fails with EPERM without CAP_CHOWN, even as uid 0 (%d)", r2);
    int r3 = in_child (child_chown, "{\"bounding\":[\"CAP_CHOWN\"],\"effective\":[\"CAP_CHOWN\"],"
                       "\"permitted\":[\"CAP_CHOWN\"],\"inheritable\":[\"CAP_CHOWN\"],"
                       "\"ambient\":[\"CAP_CHOWN\"]}", 1000, yes);
    tap_ok (r3 == 0, "uid 1000 keeps CAP_CHOWN across the uid change (%d)", r3);
  }
  {
    /* Ambient without inheritable cannot be raised: warned, not fatal. */
    const uint64_t want[5] = { BIT (CAP_KILL_N), BIT (CAP_KILL_N), BIT (CAP_KILL_N), 0, 0 };
    int r = in_child (child_sets, "{\"bounding\":[\"CAP_KILL\"],\"effective\":[\"CAP_KILL\"],"
                      "\"permitted\":[\"CAP_KILL\"],\"ambient\":[\"CAP_KILL\"]}", 1000, want);
    tap_ok (r == 0, "ambient cap not in inheritable is warned about and skipped (%d)", r);
  }
  unlink (tmpfile_path);
  return tap_done ();
}
