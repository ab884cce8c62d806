/* Unit tests for runtime/lib/seccomp*.c: validation messages, compilation,
 * loading in a child (errno, SIGSYS, argument filters, notify), the cache,
 * and the hardened default profile. Loading needs no privileges (the
 * children set no_new_privs). */
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ocispec.h"
#include "seccomp/seccomp.h"
#include "process/handshake.h"
#include "tap.h"
#include "utils.h"

static oci_seccomp *
parse (const char *json)
{
  oci_error e = { 0 };
  oci_seccomp *s = oci_parse_data (&oci_seccomp_type, json, strlen (json), "seccomp", &e);
  if (s == NULL)
    {
      tap_diag ("parse: %s", e.msg);
      free (e.msg);
    }
  return s;
}

/* prepare must fail with exactly this message. */
static void
expect_error (const char *json, const char *want, const char *what)
{
  oci_seccomp *s = parse (json);
  brig_seccomp *sc = NULL;
  brig_error err = { 0 };
  int r = s ? brig_seccomp_prepare (s, NULL, &sc, &err) : 0;
  bool ok = s && r < 0 && sc == NULL && err.msg && strcmp (err.msg, want) == 0;
  if (!ok)
    tap_diag ("got r=%d msg=%s", r, err.msg ? err.msg : "(none)");
  tap_ok (ok, "%s", what);
  brig_error_clear (&err);
  oci_free (&oci_seccomp_type, s);
}

static brig_seccomp *
prepare (const char *json, const char *cache)
{
  oci_seccomp *s = parse (json);
  brig_seccomp *sc = NULL;
  brig_error err = { 0 };
  if (s == NULL || brig_seccomp_prepare (s, cache, &sc, &err) < 0)
    tap_diag ("prepare: %s", err.msg ? err.msg : "parse failed");
  brig_error_clear (&err);
  oci_free (&oci_seccomp_type, s);
  return sc;
}

typedef int (*child_fn) (void);

/* Load sc in a child, run fn there; return the wait status. */
static int
run_confined (brig_seccomp *sc, child_fn fn)
{
  pid_t pid = fork ();
  int status = 0;

  if (pid == 0)
    {
      brig_error err = { 0 };
      prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
      if (brig_seccomp_load (sc, NULL, &err) < 0)
        _exit (100);
      _exit (fn ());
    }
  waitpid (pid, &status, 0);
  return status;
}

static int
exits_with (int status)
{
  return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
}

static char tmpdir[] = "/tmp/brig-test-seccomp.XXXXXX";

static int
child_mkdir (void)
{
  char path[128];
  snprintf (path, sizeof path, "%s/d", tmpdir);
  if (mkdir (path, 0700) == 0)
    return 0;
  return errno;
}

static int
child_getppid (void)
{
  syscall (SYS_getppid);
  return 0;
}

static int
child_dup_args (void)
{
  /* dup(99) is refused by the arg rule, dup(0) allowed. */
  int a = dup (0);
  int b = (int) syscall (SYS_dup, 99);
  int e = errno;
  if (a < 0)
    return 1;
  if (b >= 0 || e != EXDEV)
    return 2;
  return 0;
}

static int
child_masked (void)
{
  /* umask is refused when (mask & 0700) == 0700. */
  int e;
  umask (022);
  if (syscall (SYS_umask, 0777) >= 0)
    return 1;
  e = errno;
  if (e != EDOM)
    return 2;
  if (syscall (SYS_umask, 0077) < 0)
    return 3;
  return 0;
}

static int
child_or_args (void)
{
  /* Two args with the same index: either value matches. */
  if (syscall (SYS_dup, 97) >= 0 || errno != ENOTTY)
    return 1;
  if (syscall (SYS_dup, 98) >= 0 || errno != ENOTTY)
    return 2;
  if (syscall (SYS_dup, 0) < 0)
    return 3;
  return 0;
}

static int
child_default_profile (void)
{
  char path[128];
  if (getpid () <= 0)
    return 1;
  if (mount ("none", "/", NULL, MS_REMOUNT, NULL) == 0 || errno != EPERM)
    return 2;
  if (syscall (SYS_unshare, 0) == 0 || errno != EPERM)
    return 3;
#ifdef SYS_clone3
  if (syscall (SYS_clone3, NULL, 0) == 0 || errno != ENOSYS)
    return 4;
#endif
  if (personality (0xffffffff) < 0)
    return 5;
  if (syscall (SYS_personality, 0x0040000) >= 0 || errno != ENOSYS)
    return 6;
  if (syscall (SYS_bpf, 0, NULL, 0) == 0 || errno != EPERM)
    return 7;
  if (syscall (SYS_keyctl, 0, 0, 0, 0, 0) == 0 || errno != EPERM)
    return 8;
  /* fork through clone without namespace flags works, with them not */
  pid_t p = fork ();
  if (p == 0)
    _exit (0);
  if (p < 0 || waitpid (p, NULL, 0) != p)
    return 9;
  if (syscall (SYS_clone, CLONE_NEWNS | SIGCHLD, NULL, NULL, NULL, 0) >= 0 || errno != ENOSYS)
    return 10;
  snprintf (path, sizeof path, "%s/x", tmpdir);
  int fd = open (path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
  if (fd < 0 || write (fd, "x", 1) != 1)
    return 11;
  close (fd);
  return 0;
}

static double
now_us (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void
test_validation (void)
{
  expect_error ("{\"defaultAction\":\"SCMP_ACT_FOO\"}",
                "linux.seccomp.defaultAction: unknown action \"SCMP_ACT_FOO\"", "unknown default action");
  expect_error ("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":["
                "{\"names\":[\"read\"],\"action\":\"SCMP_ACT_ALLOW\"},"
                "{\"names\":[\"read\"],\"action\":\"SCMP_ACT_ALLOW\"},"
                "{\"names\":[\"read\"],\"action\":\"SCMP_ACT_ALLOW\"},"
                "{\"names\":[\"mkdir\"],\"action\":\"SCMP_ACT_FOO\"}]}",
                "linux.seccomp.syscalls[3].action: unknown action \"SCMP_ACT_FOO\"",
                "unknown action names its JSON path");
  expect_error ("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"listenerPath\":\"/x\",\"syscalls\":["
                "{\"names\":[\"write\"],\"action\":\"SCMP_ACT_NOTIFY\"},"
                "{\"names\":[\"close\",\"sendmsg\"],\"action\":\"SCMP_ACT_NOTIFY\"}]}",
                "linux.seccomp.syscalls[1].names[1]: SCMP_ACT_NOTIFY cannot be used for both sendmsg "
                "and write (the runtime needs one of them to hand the listener fd over)",
                "notify on both sendmsg and write");
  expect_error ("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"dup\"],"
                "\"action\":\"SCMP_ACT_ERRNO\",\"args\":[{\"index\":0,\"value\":1,\"op\":\"SCMP_CMP_XX\"}]}]}",
                "linux.seccomp.syscalls[0].args[0].op: unknown operator \"SCMP_CMP_XX\"",
                "unknown operator");
  expect_error ("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"architectures\":[\"SCMP_ARCH_X86_64\",\"SCMP_ARCH_VAX\"]}",
                "linux.seccomp.architectures[1]: unknown architecture \"SCMP_ARCH_VAX\"",
                "unknown architecture");
  expect_error ("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"flags\":[\"SECCOMP_FILTER_FLAG_BOGUS\"]}",
                "linux.seccomp.flags[0]: unknown flag \"SECCOMP_FILTER_FLAG_BOGUS\"", "unknown flag");
  expect_error ("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"defaultErrnoRet\":5}",
                "linux.seccomp.defaultErrnoRet: action SCMP_ACT_ALLOW does not take an errno value",
                "errnoRet on an action without errno");
  expect_error ("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"mkdir\"],"
                "\"action\":\"SCMP_ACT_NOTIFY\"}]}",
                "linux.seccomp.listenerPath: required when SCMP_ACT_NOTIFY is used",
                "notify without listenerPath");
  expect_error ("{\"defaultAction\":\"SCMP_ACT_NOTIFY\",\"listenerPath\":\"/x\"}",
                "linux.seccomp.defaultAction: SCMP_ACT_NOTIFY cannot be the default action "
                "(the runtime itself would be notified)", "notify as default action");
  expect_error ("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"dup\"],"
                "\"action\":\"SCMP_ACT_ERRNO\",\"args\":[{\"index\":6,\"value\":1,\"op\":\"SCMP_CMP_EQ\"}]}]}",
                "linux.seccomp.syscalls[0].args[0].index: 6 is out of range (0-5)", "arg index out of range");
  expect_error ("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"listenerMetadata\":\"m\"}",
                "linux.seccomp.listenerMetadata: set without listenerPath", "metadata without listenerPath");
}

static void
test_actions (void)
{
  brig_seccomp *sc;
  int st;

  sc = prepare ("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"mkdir\",\"mkdirat\","
                "\"no_such_syscall_xyz\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":13}]}", NULL);
  tap_ok (sc != NULL, "unknown syscall names are skipped");
  st = run_confined (sc, child_mkdir);
  tap_ok (exits_with (st) == EACCES, "ERRNO with errnoRet 13: mkdir fails with EACCES (got %d)", exits_with (st));
  brig_seccomp_free (sc);

  sc = prepare ("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"mkdir\",\"mkdirat\"],"
                "\"action\":\"SCMP_ACT_ERRNO\"}]}", NULL);
  st = run_confined (sc, child_mkdir);
  tap_ok (exits_with (st) == EPERM, "ERRNO without errnoRet means EPERM");
  brig_seccomp_free (sc);

  sc = prepare ("{\"defaultAction\":\"SCMP_ACT_ERRNO\",\"defaultErrnoRet\":38,\"syscalls\":[{\"names\":["
                "\"mkdir\",\"mkdirat\"],\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":28},{\"names\":["
                "\"exit_group\",\"exit\"],\"action\":\"SCMP_ACT_ALLOW\"}]}", NULL);
  st = run_confined (sc, child_mkdir);
  tap_ok (exits_with (st) == 28, "defaultErrnoRet plus explicit ERRNO rule");
  brig_seccomp_free (sc);

  sc = prepare ("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"getppid\"],"
                "\"action\":\"SCMP_ACT_KILL\"}]}", NULL);
  st = run_confined (sc, child_getppid);
  tap_ok (WIFSIGNALED (st) && WTERMSIG (st) == SIGSYS, "SCMP_ACT_KILL kills with SIGSYS");
  brig_seccomp_free (sc);

  sc = prepare ("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"getppid\"],"
                "\"action\":\"SCMP_ACT_KILL_PROCESS\"}]}", NULL);
  st = run_confined (sc, child_getppid);
  tap_ok (WIFSIGNALED (st) && WTERMSIG (st) == SIGSYS, "SCMP_ACT_KILL_PROCESS kills with SIGSYS");
  brig_seccomp_free (sc);

  sc = prepare ("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"getppid\"],"
                "\"action\":\"SCMP_ACT_TRAP\"}]}", NULL);
  st = run_confined (sc, child_getppid);
  tap_ok (WIFSIGNALED (st) && WTERMSIG (st) == SIGSYS, "SCMP_ACT_TRAP raises SIGSYS");
  brig_seccomp_free (sc);

  sc = prepare ("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"mkdir\",\"mkdirat\"],"
                "\"action\":\"SCMP_ACT_TRACE\",\"errnoRet\":1}]}", NULL);
  st = run_confined (sc, child_mkdir);
  tap_ok (exits_with (st) == ENOSYS, "SCMP_ACT_TRACE without a tracer fails with ENOSYS");
  brig_seccomp_free (sc);

  sc = prepare ("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"flags\":[\"SECCOMP_FILTER_FLAG_LOG\"],"
                "\"syscalls\":[{\"names\":[\"mkdir\",\"mkdirat\"],\"action\":\"SCMP_ACT_LOG\"}]}", NULL);
  st = run_confined (sc, child_mkdir);
  tap_ok (exits_with (st) == 0, "SCMP_ACT_LOG allows the call; FLAG_LOG accepted");
  brig_seccomp_free (sc);

  sc = prepare ("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"dup\"],"
                "\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":18,\"args\":[{\"index\":0,\"value\":99,"
                "\"op\":\"SCMP_CMP_EQ\"}]}]}", NULL);
  st = run_confined (sc, child_dup_args);
  tap_ok (exits_with (st) == 0, "argument filter SCMP_CMP_EQ (%d)", exits_with (st));
  brig_seccomp_free (sc);

  sc = prepare ("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"umask\"],"
                "\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":33,\"args\":[{\"index\":0,\"value\":448,"
                "\"valueTwo\":448,\"op\":\"SCMP_CMP_MASKED_EQ\"}]}]}", NULL);
  st = run_confined (sc, child_masked);
  tap_ok (exits_with (st) == 0, "SCMP_CMP_MASKED_EQ: value is the mask, valueTwo the datum (%d)",
          exits_with (st));
  brig_seccomp_free (sc);

  sc = prepare ("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"syscalls\":[{\"names\":[\"dup\"],"
                "\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":25,\"args\":[{\"index\":0,\"value\":97,"
                "\"op\":\"SCMP_CMP_EQ\"},{\"index\":0,\"value\":98,\"op\":\"SCMP_CMP_EQ\"}]}]}", NULL);
  st = run_confined (sc, child_or_args);
  tap_ok (exits_with (st) == 0, "repeated arg index means OR (%d)", exits_with (st));
  brig_seccomp_free (sc);

  sc = prepare ("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"architectures\":[\"SCMP_ARCH_X86_64\","
                "\"SCMP_ARCH_X86\",\"SCMP_ARCH_X32\"],\"flags\":[\"SECCOMP_FILTER_FLAG_TSYNC\","
                "\"SECCOMP_FILTER_FLAG_SPEC_ALLOW\"],\"syscalls\":[{\"names\":[\"mkdir\",\"mkdirat\"],"
                "\"action\":\"SCMP_ACT_ERRNO\",\"errnoRet\":30}]}", NULL);
  st = run_confined (sc, child_mkdir);
  tap_ok (exits_with (st) == 30, "multi-arch filter with TSYNC and SPEC_ALLOW");
  brig_seccomp_free (sc);
}

/* The notify path: the child loads a filter that notifies mkdir and passes
 * the listener fd to us; we answer the notification with a fixed errno. */
static void
test_notify (void)
{
  brig_seccomp *sc = prepare ("{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"listenerPath\":\"/nonexistent\","
                              "\"syscalls\":[{\"names\":[\"mkdir\",\"mkdirat\"],\"action\":\"SCMP_ACT_NOTIFY\"}]}",
                              NULL);
  int sv[2], status = 0, fd = -1;
  pid_t pid;

  tap_ok (brig_seccomp_uses_notify (sc), "profile with SCMP_ACT_NOTIFY reports notify");
  socketpair (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv);
  pid = fork ();
  if (pid == 0)
    {
      brig_error err = { 0 };
      int nfd = -1;
      char c[CMSG_SPACE (sizeof (int))];
      struct iovec iov = { .iov_base = "x", .iov_len = 1 };
      struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = c, .msg_controllen = sizeof c };
      struct cmsghdr *cm;

      close (sv[0]);
      prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
      if (brig_seccomp_load (sc, &nfd, &err) < 0 || nfd < 0)
        _exit (100);
      memset (c, 0, sizeof c);
      cm = CMSG_FIRSTHDR (&msg);
      cm->cmsg_level = SOL_SOCKET;
      cm->cmsg_type = SCM_RIGHTS;
      cm->cmsg_len = CMSG_LEN (sizeof (int));
      memcpy (CMSG_DATA (cm), &nfd, sizeof (int));
      if (sendmsg (sv[1], &msg, 0) != 1)
        _exit (101);
      close (nfd);
      _exit (child_mkdir ());
    }
  close (sv[1]);
  {
    char c[CMSG_SPACE (sizeof (int))], b;
    struct iovec iov = { .iov_base = &b, .iov_len = 1 };
    struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = c, .msg_controllen = sizeof c };
    if (recvmsg (sv[0], &msg, 0) == 1 && CMSG_FIRSTHDR (&msg) != NULL)
      memcpy (&fd, CMSG_DATA (CMSG_FIRSTHDR (&msg)), sizeof (int));
  }
  tap_ok (fd >= 0, "listener fd received from the child");
  if (fd >= 0)
    {
      struct seccomp_notif req;
      struct seccomp_notif_resp resp;
      memset (&req, 0, sizeof req);
      if (ioctl (fd, SECCOMP_IOCTL_NOTIF_RECV, &req) == 0)
        {
          memset (&resp, 0, sizeof resp);
          resp.id = req.id;
          resp.error = -EMLINK;
          ioctl (fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
        }
      close (fd);
    }
  waitpid (pid, &status, 0);
  tap_ok (exits_with (status) == EMLINK, "notified mkdir answered with EMLINK by the listener (%d)",
          exits_with (status));
  close (sv[0]);
  brig_seccomp_free (sc);
}

/* The runtime's handover when sendmsg itself is notified: the child names
 * the fd with write(2), we take it with pidfd_getfd; then its notified
 * sendmsg and mkdir reach us. Write alone notified goes over SCM_RIGHTS. */
static void
test_notify_handover (bool notify_sendmsg)
{
  brig_seccomp *sc = prepare (notify_sendmsg
                              ? "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"listenerPath\":\"/x\","
                                "\"syscalls\":[{\"names\":[\"sendmsg\",\"mkdir\",\"mkdirat\"],"
                                "\"action\":\"SCMP_ACT_NOTIFY\"}]}"
                              : "{\"defaultAction\":\"SCMP_ACT_ALLOW\",\"listenerPath\":\"/x\","
                                "\"syscalls\":[{\"names\":[\"write\",\"close\",\"mkdir\",\"mkdirat\"],"
                                "\"action\":\"SCMP_ACT_NOTIFY\"}]}",
                              NULL);
  brig_error err = { 0 };
  int sv[2], status = 0, fd = -1, answered = 0;
  pid_t pid;

  if (sc == NULL)
    {
      tap_ok (false, "notify profile (sendmsg %d) accepted", notify_sendmsg);
      return;
    }
  socketpair (AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv);
  pid = fork ();
  if (pid == 0)
    {
      int nfd = -1;
      close (sv[0]);
      prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
      if (brig_seccomp_load (sc, &nfd, &err) < 0 || nfd < 0)
        _exit (100);
      if (brig_hs_seccomp_send (sc, sv[1], nfd) < 0)
        _exit (101);
      /* Notified now, answered by the parent. */
      brig_sync_send (sv[1], BRIG_SYNC_READY, 0, NULL, 0, -1);
      _exit (child_mkdir ());
    }
  close (sv[1]);
  tap_ok (brig_hs_seccomp_receive (sv[0], pid, &fd, &err) == 0 && fd >= 0,
          "listener fd taken over (%s): %s", notify_sendmsg ? "pidfd_getfd" : "SCM_RIGHTS",
          err.msg ? err.msg : "ok");
  brig_error_clear (&err);
  while (fd >= 0)
    {
      struct seccomp_notif req;
      struct seccomp_notif_resp resp;
      memset (&req, 0, sizeof req);
      if (ioctl (fd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
        break;
      memset (&resp, 0, sizeof resp);
      resp.id = req.id;
      if (req.data.nr == SYS_mkdir || req.data.nr == SYS_mkdirat)
        resp.error = -EMLINK;
      else
        resp.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
      ioctl (fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
      answered++;
      if (resp.error)
        break;
    }
  if (fd >= 0)
    close (fd);
  waitpid (pid, &status, 0);
  tap_ok (exits_with (status) == EMLINK && answered >= (notify_sendmsg ? 2 : 1),
          "after the handover the child's calls reach the agent (%d answered, exit %d)", answered,
          exits_with (status));
  close (sv[0]);
  brig_seccomp_free (sc);
}

static void
test_cache_and_default (void)
{
  oci_seccomp *def = brig_seccomp_default_profile ();
  char cache[160];
  brig_seccomp *a = NULL, *b = NULL, *c = NULL;
  brig_error err = { 0 };
  double t0, t1, t2, t3;
  int r1, r2, r3, st;
  char *json;

  snprintf (cache, sizeof cache, "%s/cache", tmpdir);
  json = oci_generate (&oci_seccomp_type, def, false, NULL);
  tap_ok (def != NULL && json != NULL && strstr (json, "\"kexec_load\"") != NULL,
          "default profile serialises and names kexec_load");

  t0 = now_us ();
  r1 = brig_seccomp_prepare (def, NULL, &a, &err);
  t1 = now_us ();
  r2 = brig_seccomp_prepare (def, cache, &b, &err);
  t2 = now_us ();
  r3 = brig_seccomp_prepare (def, cache, &c, &err);
  t3 = now_us ();
  tap_ok (r1 == 0 && r2 == 0 && r3 == 0, "default profile compiles (%s)", err.msg ? err.msg : "ok");
  tap_diag ("prepare(default profile): %.0f us uncached, %.0f us cache miss+store, %.0f us cache hit",
            t1 - t0, t2 - t1, t3 - t2);
  tap_ok (a && b && c && brig_seccomp_uses_notify (c) == false, "cache hit returns a filter");

  st = run_confined (c, child_default_profile);
  tap_ok (exits_with (st) == 0, "default profile from cache: mount/unshare/bpf/keyctl EPERM, clone3 ENOSYS, "
                                "personality restricted, fork works (%d)", exits_with (st));

  /* A tampered cache file (key text changed) is a miss, not a wrong hit. */
  {
    char cmd[400];
    snprintf (cmd, sizeof cmd, "sed -i 's/kexec_load/kexec_lXad/' %s/*.bpf", cache);
    if (system (cmd) != 0)
      tap_diag ("sed failed");
    brig_seccomp *d = NULL;
    int r = brig_seccomp_prepare (def, cache, &d, &err);
    st = d ? run_confined (d, child_default_profile) : -1;
    tap_ok (r == 0 && exits_with (st) == 0, "tampered cache entry is ignored and recompiled");
    brig_seccomp_free (d);
  }

  free (json);
  brig_seccomp_free (a);
  brig_seccomp_free (b);
  brig_seccomp_free (c);
  brig_error_clear (&err);
  oci_free (&oci_seccomp_type, def);
}

static void
test_features (void)
{
  oci_feat_seccomp f;
  bool has_notify = false, has_x32 = false;

  memset (&f, 0, sizeof f);
  brig_seccomp_features (&f);
  for (size_t i = 0; i < f.actions_len; i++)
    has_notify |= strcmp (f.actions[i], "SCMP_ACT_NOTIFY") == 0;
  for (size_t i = 0; i < f.archs_len; i++)
    has_x32 |= strcmp (f.archs[i], "SCMP_ARCH_X32") == 0;
  tap_ok (f.enabled && has_notify && f.operators_len == 7 && f.known_flags_len == 4
          && f.supported_flags_len == 4 && has_x32,
          "features: actions, operators, archs, flags (%zu supported)", f.supported_flags_len);
  brig_strv_free (f.actions);
  brig_strv_free (f.operators);
  brig_strv_free (f.archs);
  brig_strv_free (f.known_flags);
  brig_strv_free (f.supported_flags);
}

int
main (void)
{
  char cmd[128];

  if (mkdtemp (tmpdir) == NULL)
    return 1;
  tap_plan (37);
  test_validation ();
  test_actions ();
  test_notify ();
  test_notify_handover (true);
  test_notify_handover (false);
  test_cache_and_default ();
  test_features ();
  snprintf (cmd, sizeof cmd, "rm -rf %s", tmpdir);
  if (system (cmd) != 0)
    return 1;
  return tap_done ();
}
