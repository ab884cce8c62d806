/* brig reset's checks of the new init (runtime/lib/sandbox/reset_verify.c)
 * on real state: the checks no tenant can make fail (the new init's
 * namespaces and mounts are new, made from the config, before any tenant
 * code runs; docs/sandbox.md "Checks") are run against a child process of
 * this test prepared as a fresh init would be (each check must say ok)
 * and then as a tenant would have left it (each must say "ok": false),
 * and against a process that does not exist (every check must fail, "not
 * checked", never ok). pids.usage and memory.usage read a real cgroup
 * under brig-test. Needs root (namespaces, pivot_root, cgroups); skips
 * otherwise. */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <mqueue.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup/cgroup.h"
#include "sandbox/reset_internal.h"
#include "tap.h"
#include "utils.h"

static const char config_json[] =
  "{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"rootfs\"},\"hostname\":\"brig-unit\","
  "\"annotations\":{\"run.brig.rootfs.ephemeral\":\"true\"},"
  "\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\","
  "\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"soft\":77,\"hard\":77}]},"
  "\"mounts\":[{\"destination\":\"/tmp\",\"type\":\"tmpfs\",\"source\":\"tmpfs\"}],"
  "\"linux\":{\"namespaces\":[{\"type\":\"mount\"}],"
  "\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ALLOW\"}}}";

enum dirt {
  CLEAN = 0,
  DIRTY_HOSTNAME = 1 << 0,
  DIRTY_SHM = 1 << 1,
  DIRTY_MQUEUE = 1 << 2,
  DIRTY_SOCKET = 1 << 3,
  DIRTY_RLIMIT = 1 << 4,
  DIRTY_SECCOMP = 1 << 5,
  DIRTY_MOUNT = 1 << 6,
  DIRTY_ROOT = 1 << 7,
  DIRTY_TMP = 1 << 8,
};

/* The host directory the children mount their roots on (in their own
 * mount namespaces), made and removed by main. */
static char root_dir[] = "/tmp/brig-unit-reset.XXXXXX";

/* A root of its own: a tmpfs as "/" with a tmpfs on /tmp, pivoted into. */
static int
fresh_root (enum dirt d)
{
  int fd;

  if (mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0
      || mount ("tmpfs", root_dir, "tmpfs", 0, "size=1m") < 0 || chdir (root_dir) < 0
      || mkdir ("tmp", 01777) < 0 || mkdir ("old", 0700) < 0
      || mount ("tmpfs", "tmp", "tmpfs", 0, "size=1m") < 0
      || syscall (SYS_pivot_root, ".", "old") < 0 || chdir ("/") < 0
      || umount2 ("/old", MNT_DETACH) < 0)
    return -1;
  if ((d & DIRTY_MOUNT) && mount ("tmpfs", "/old", "tmpfs", 0, "size=1m") < 0)
    return -1;
  if (d & DIRTY_ROOT)
    {
      fd = open ("/left", O_WRONLY | O_CREAT, 0600);
      if (fd < 0 || write (fd, "secret", 6) != 6)
        return -1;
      close (fd);
    }
  if ((d & DIRTY_TMP) && (fd = open ("/tmp/left", O_WRONLY | O_CREAT, 0600)) < 0)
    return -1;
  return 0;
}

static int
allow_all_filter (void)
{
  struct sock_filter allow = BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  struct sock_fprog prog = { 1, &allow };
  return prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0
         || syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0 ? -1 : 0;
}

/* The child: as the new init of config_json would be, plus the dirt. */
static int
child (enum dirt d)
{
  struct rlimit rl = { 77, 77 };
  const char *host = d & DIRTY_HOSTNAME ? "tenant" : "brig-unit";

  if (unshare (CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWNET | CLONE_NEWNS) < 0
      || sethostname (host, strlen (host)) < 0 || fresh_root (d) < 0)
    return 1;
  if (d & DIRTY_RLIMIT)
    rl.rlim_cur = rl.rlim_max = 78;
  if (setrlimit (RLIMIT_NOFILE, &rl) < 0)
    return 1;
  if ((d & DIRTY_SHM) && shmget (0x7e5e7, 4096, IPC_CREAT | 0600) < 0)
    return 1;
  if (d & DIRTY_MQUEUE)
    {
      mqd_t q = mq_open ("/brig-unit", O_CREAT | O_RDWR, 0600, NULL);
      if (q == (mqd_t) -1)
        return 1;
    }
  if (d & DIRTY_SOCKET)
    {
      struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons (7777) };
      int s = socket (AF_INET, SOCK_STREAM, 0);
      if (s < 0 || bind (s, (struct sockaddr *) &sa, sizeof sa) < 0 || listen (s, 1) < 0)
        return 1;
    }
  if (!(d & DIRTY_SECCOMP) && allow_all_filter () < 0)
    return 1;
  return 0;
}

static pid_t
spawn (enum dirt d, int *status_pipe)
{
  int p[2];
  pid_t pid;
  char ok = 0;

  if (pipe (p) < 0)
    return -1;
  pid = fork ();
  if (pid == 0)
    {
      char c = child (d) == 0 ? 'y' : 'n';
      close (p[0]);
      if (write (p[1], &c, 1) != 1)
        _exit (1);
      pause ();
      _exit (0);
    }
  close (p[1]);
  if (pid < 0 || read (p[0], &ok, 1) != 1 || ok != 'y')
    {
      if (pid > 0)
        kill (pid, SIGKILL);
      close (p[0]);
      return -1;
    }
  *status_pipe = p[0];
  return pid;
}

static void
reap (pid_t pid, int fd)
{
  kill (pid, SIGKILL);
  waitpid (pid, NULL, 0);
  close (fd);
}

/* -1: not in the report; else whether it held. */
static int
check (const struct brig_reset_report *rep, const char *name)
{
  for (size_t i = 0; i < rep->n; i++)
    if (strcmp (rep->checks[i].name, name) == 0)
      return rep->checks[i].ok;
  return -1;
}

static const struct {
  const char *name;
  enum dirt dirt;
} cases[] = {
  { "uts.config", DIRTY_HOSTNAME },     { "ipc.empty", DIRTY_SHM },
  { "mqueue.empty", DIRTY_MQUEUE },     { "net.sockets", DIRTY_SOCKET },
  { "rlimits.config", DIRTY_RLIMIT },   { "seccomp.config", DIRTY_SECCOMP },
  { "mounts.exact", DIRTY_MOUNT },      { "rootfs.layer", DIRTY_ROOT },
  { "tmpfs.empty", DIRTY_TMP },
};

static const unsigned long all_new = CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWNET;

static void
test_namespaces (const oci_config *cfg)
{
  struct brig_reset_report rep = { .ok = true };
  int fd;
  pid_t pid = spawn (CLEAN, &fd);

  if (!tap_ok (pid > 0, "a clean child is prepared"))
    return;
  reset_verify_init (cfg, all_new, pid, -1, NULL, 0, 0, &rep);
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (cases); i++)
    tap_ok (check (&rep, cases[i].name) == 1, "clean: %s ok", cases[i].name);
  for (size_t i = 0; i < rep.n; i++)
    if (!rep.checks[i].ok)
      tap_diag ("%s: %s", rep.checks[i].name, rep.checks[i].detail);
  brig_reset_report_free (&rep);
  reap (pid, fd);

  for (size_t i = 0; i < BRIG_ARRAY_SIZE (cases); i++)
    {
      struct brig_reset_report r = { .ok = true };
      pid = spawn (cases[i].dirt, &fd);
      if (!tap_ok (pid > 0, "a child with what %s looks for", cases[i].name))
        continue;
      reset_verify_init (cfg, all_new, pid, -1, NULL, 0, 0, &r);
      tap_ok (check (&r, cases[i].name) == 0 && !r.ok, "left behind: %s fails", cases[i].name);
      for (size_t k = 0; k < r.n; k++)
        if (strcmp (r.checks[k].name, cases[i].name) == 0)
          tap_diag ("%s: %s", r.checks[k].name, r.checks[k].detail);
      brig_reset_report_free (&r);
      reap (pid, fd);
    }
}

/* A process that does not exist: nothing can be looked at, and nothing is
 * ok. */
static void
test_not_checked (const oci_config *cfg)
{
  struct brig_reset_report rep = { .ok = true };
  pid_t pid = fork ();
  bool none_ok = true;

  if (pid == 0)
    _exit (0);
  waitpid (pid, NULL, 0);
  reset_verify_init (cfg, all_new, pid, -1, NULL, 0, 0, &rep);
  for (size_t i = 0; i < rep.n; i++)
    if (rep.checks[i].ok)
      {
        tap_diag ("%s said ok about a process that is gone", rep.checks[i].name);
        none_ok = false;
      }
  tap_ok (none_ok && rep.n >= BRIG_ARRAY_SIZE (cases) - 1 && !rep.ok,
          "a gone process: %zu checks, none ok", rep.n);
  brig_reset_report_free (&rep);
}

/* The disk layer: STATE/ID/ephemeral/upper, empty or not. */
static void
test_disk_layer (void)
{
  static const char json[] = "{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"rootfs\"},"
    "\"annotations\":{\"run.brig.rootfs.ephemeral\":\"true\","
    "\"run.brig.rootfs.ephemeral.size\":\"disk\"},"
    "\"process\":{\"args\":[\"sh\"],\"cwd\":\"/\"},"
    "\"linux\":{\"namespaces\":[{\"type\":\"mount\"}]}}";
  char dir[] = "/tmp/brig-unit-layer.XXXXXX";
  oci_error perr = { NULL };
  oci_config *cfg = oci_config_parse_data (json, sizeof json - 1, "config.json", &perr);
  int dfd = -1, ok[2] = { -1, -1 };

  if (cfg == NULL || mkdtemp (dir) == NULL || (dfd = open (dir, O_RDONLY | O_DIRECTORY)) < 0
      || mkdirat (dfd, "ephemeral", 0700) < 0 || mkdirat (dfd, "ephemeral/upper", 0755) < 0)
    {
      tap_ok (false, "disk layer fixture");
      return;
    }
  for (int dirty = 0; dirty < 2; dirty++)
    {
      struct brig_reset_report rep = { .ok = true };
      if (dirty)
        close (openat (dfd, "ephemeral/upper/left", O_WRONLY | O_CREAT, 0600));
      reset_verify_init (cfg, CLONE_NEWNS, getpid (), dfd, NULL, 0, 0, &rep);
      ok[dirty] = check (&rep, "rootfs.layer");
      brig_reset_report_free (&rep);
    }
  tap_ok (ok[0] == 1 && ok[1] == 0, "disk layer: empty ok (%d), a file left fails (%d)", ok[0],
          ok[1]);
  unlinkat (dfd, "ephemeral/upper/left", 0);
  unlinkat (dfd, "ephemeral/upper", AT_REMOVEDIR);
  unlinkat (dfd, "ephemeral", AT_REMOVEDIR);
  close (dfd);
  rmdir (dir);
  oci_config_free (cfg);
}

/* pids.usage and memory.usage on a real cgroup under brig-test. */
static void
test_usage (const oci_config *cfg)
{
  char path[64];
  struct brig_cgroup_config cc = { .id = "unit" };
  brig_cgroup *cg = NULL;
  brig_error err = { 0 };
  int pids_ok[2] = { -1, -1 }, mem_ok[2] = { -1, -1 };
  pid_t a, b;

  snprintf (path, sizeof path, "/brig-test/unit-reset-%d", (int) getpid ());
  cc.cgroups_path = path;
  if (brig_cgroup_create (&cc, &cg, &err) < 0)
    {
      tap_ok (true, "# SKIP no cgroup to test usage in: %s", err.msg);
      tap_ok (true, "# SKIP");
      brig_error_clear (&err);
      return;
    }
  a = fork ();
  if (a == 0)
    {
      pause ();
      _exit (0);
    }
  brig_cgroup_enter (cg, a, NULL);
  {
    struct brig_reset_report rep = { .ok = true };
    reset_verify_init (cfg, 0, a, -1, cg, 0, 0, &rep);
    pids_ok[0] = check (&rep, "pids.usage");
    mem_ok[0] = check (&rep, "memory.usage");
    brig_reset_report_free (&rep);
  }
  /* one process more, holding 24 MiB of anonymous memory charged to the
   * cgroup (it stops until it is in it, and once it has touched it) */
  b = fork ();
  if (b == 0)
    {
      size_t len = 24u << 20;
      char *m;
      kill (getpid (), SIGSTOP);
      m = mmap (NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (m != MAP_FAILED)
        memset (m, 1, len);
      kill (getpid (), SIGSTOP);
      _exit (0);
    }
  waitpid (b, NULL, WUNTRACED);
  brig_cgroup_enter (cg, b, NULL);
  kill (b, SIGCONT);
  waitpid (b, NULL, WUNTRACED);
  {
    struct brig_reset_report rep = { .ok = true };
    reset_verify_init (cfg, 0, a, -1, cg, 0, 0, &rep);
    pids_ok[1] = check (&rep, "pids.usage");
    mem_ok[1] = check (&rep, "memory.usage");
    brig_reset_report_free (&rep);
  }
  kill (a, SIGKILL);
  kill (b, SIGKILL);
  waitpid (a, NULL, 0);
  waitpid (b, NULL, 0);
  brig_cgroup_destroy (cg, true, NULL);
  brig_cgroup_free (cg);
  tap_ok (pids_ok[0] == 1 && pids_ok[1] == 0, "pids.usage: one process ok (%d), two fail (%d)",
          pids_ok[0], pids_ok[1]);
  tap_ok (mem_ok[0] == 1 && mem_ok[1] == 0, "memory.usage: idle ok (%d), 24 MiB more fail (%d)",
          mem_ok[0], mem_ok[1]);
}

int
main (void)
{
  oci_error perr = { NULL };
  oci_config *cfg;

  if (geteuid () != 0)
    {
      printf ("1..0 # SKIP needs root (namespaces, pivot_root, cgroups)\n");
      return 0;
    }
  /* config, root dir; clean: prepared + each; dirty: prepared + fails,
   * each; gone; disk; usage */
  tap_plan (2 + 1 + 3 * (int) BRIG_ARRAY_SIZE (cases) + 1 + 1 + 2);
  cfg = oci_config_parse_data (config_json, sizeof config_json - 1, "config.json", &perr);
  if (!tap_ok (cfg != NULL, "config parses: %s", perr.msg ? perr.msg : "ok"))
    return tap_done ();
  if (!tap_ok (mkdtemp (root_dir) != NULL, "a directory for the children's roots"))
    return tap_done ();
  test_namespaces (cfg);
  test_not_checked (cfg);
  test_disk_layer ();
  test_usage (cfg);
  rmdir (root_dir);
  oci_config_free (cfg);
  return tap_done ();
}
