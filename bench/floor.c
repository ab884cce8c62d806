/* floor: the physical limit of starting a container, for the lifecycle
 * benchmark. It does only what every runtime must: clone(2) into the same
 * new namespaces as the benchmark bundle (pid, network, ipc, uts, mount,
 * cgroup), and in the child make the mounts private, bind-mount the
 * rootfs onto itself, pivot_root into it, detach the old root and exec
 * the program; the parent waits and returns its exit status. No config
 * parsing, no /proc, /dev or cgroup setup, no state files.
 *
 * The ladder (bench/floor.sh --ladder, issue 25) adds brig's steps one at
 * a time, each as plain system calls, so that the differences between
 * rungs say where `brig run`'s time goes:
 *   --selfexe        re-execute once from a detached read-only mount of
 *                    the binary (open_tree + mount_setattr + execveat), as
 *                    brig does against CVE-2019-5736 (the floor pays
 *                    glibc's start-up twice, brig once: a slight overstatement)
 *   --cgroups N:P[:SKIP]  a directory P/floor-PID in the first N cgroup
 *                    hierarchies of mountinfo (v1 ones first, cgroup2 last,
 *                    as brig orders them; SKIP: mount point names to leave
 *                    out, comma-separated), the devices allowlist written,
 *                    v1 joined by writing 0 to `tasks` in the child,
 *                    cgroup2 at the clone (CLONE_INTO_CGROUP), removed
 *                    after the exit
 *   --mounts         /proc, a /dev tmpfs with the standard nodes and links,
 *                    devpts, /dev/shm, mqueue, a read-only /sys, the masked
 *                    and read-only paths of the harness's config
 *   --state DIR      a state directory with a copy of CONFIG, `made` and
 *                    state.json (through a rename), removed after the exit
 *
 *   floor [--no-netns] [--selfexe] [--cgroups N:P[:SKIP]] [--mounts]
 *         [--state DIR:CONFIG] ROOTFS PROGRAM [ARGS...] */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_CG 16

static char *cg_dir[MAX_CG];
static int cg_fd[MAX_CG], n_cg, cg2_fd = -1;

static void
selfexe (char **argv)
{
  struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV };
  struct statfs sf;
  int tree;

  if (statfs ("/proc/self/exe", &sf) < 0 || (sf.f_flags & ST_RDONLY))
    return; /* already re-executed */
  tree = (int) syscall (SYS_open_tree, AT_FDCWD, "/proc/self/exe",
                        OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  if (tree < 0 || syscall (SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0)
    {
      perror ("floor: selfexe");
      exit (125);
    }
  syscall (SYS_execveat, tree, "", argv, environ, AT_EMPTY_PATH);
  perror ("floor: execveat");
  exit (125);
}

static int
write_at (int dirfd, const char *file, const char *s)
{
  int fd = openat (dirfd, file, O_WRONLY | O_CLOEXEC);
  ssize_t n = fd < 0 ? -1 : write (fd, s, strlen (s));
  if (fd >= 0)
    close (fd);
  return n < 0 ? -1 : 0;
}

/* cpuset: a new cgroup has no cpus or mems (a task cannot join it) until
 * they are copied from its parent, as every runtime does. */
static void
cpuset_fill (const char *dir)
{
  static const char *const f[] = { "cpuset.cpus", "cpuset.mems" };
  char p[4096], v[256];
  for (size_t i = 0; i < 2; i++)
    {
      int fd;
      ssize_t n;
      snprintf (p, sizeof p, "%s/%s", dir, f[i]);
      if ((fd = open (p, O_RDONLY | O_CLOEXEC)) < 0)
        continue;
      n = read (fd, v, sizeof v);
      close (fd);
      if (n > 1)
        continue;
      snprintf (p, sizeof p, "%s/../%s", dir, f[i]);
      if ((fd = open (p, O_RDONLY | O_CLOEXEC)) < 0)
        continue;
      n = read (fd, v, sizeof v);
      close (fd);
      snprintf (p, sizeof p, "%s/%s", dir, f[i]);
      if (n > 0 && (fd = open (p, O_WRONLY | O_CLOEXEC)) >= 0)
        {
          if (write (fd, v, (size_t) n) < 0)
            perror (p);
          close (fd);
        }
    }
}

/* The first N cgroup hierarchies: v1 ones in mountinfo order, then cgroup2. */
static int
cgroups_make (int n, const char *parent, const char *skip)
{
  char line[1024], mnt[256], fstype[64], *v2 = NULL, *dirs[MAX_CG];
  int nd = 0;
  FILE *f = fopen ("/proc/self/mountinfo", "re");

  if (f == NULL)
    return -1;
  while (fgets (line, sizeof line, f))
    {
      char *dash = strstr (line, " - ");
      if (dash == NULL || sscanf (line, "%*s %*s %*s %*s %255s", mnt) != 1
          || sscanf (dash + 3, "%63s", fstype) != 1)
        continue;
      const char *base = strrchr (mnt, '/') ? strrchr (mnt, '/') + 1 : mnt;
      char *hit = skip ? strstr (skip, base) : NULL;
      size_t bl = strlen (base);
      if (hit && (hit == skip || hit[-1] == ',') && (hit[bl] == '\0' || hit[bl] == ','))
        continue;
      if (strcmp (fstype, "cgroup2") == 0 && v2 == NULL)
        v2 = strdup (mnt);
      else if (strcmp (fstype, "cgroup") == 0 && nd < MAX_CG - 1)
        dirs[nd++] = strdup (mnt);
    }
  fclose (f);
  if (v2)
    dirs[nd++] = v2;
  for (int i = 0; i < n && i < nd; i++)
    {
      char *p = NULL, *s;
      if (asprintf (&p, "%s/%s/floor-%d", dirs[i], parent, (int) getpid ()) < 0)
        return -1;
      for (s = strchr (p + strlen (dirs[i]) + 1, '/'); s; s = strchr (s + 1, '/'))
        {
          *s = '\0';
          mkdir (p, 0755);
          if (strstr (dirs[i], "cpuset"))
            cpuset_fill (p);
          *s = '/';
        }
      if (mkdir (p, 0755) < 0 || (cg_fd[n_cg] = open (p, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
        return perror (p), -1;
      if (strstr (dirs[i], "cpuset"))
        cpuset_fill (p);
      cg_dir[n_cg] = p;
      if (strstr (dirs[i], "devices"))
        {
          /* brig writes its allowlist whatever the config says */
          static const char *const allow[]
              = { "c 1:3 rwm", "c 1:5 rwm", "c 1:7 rwm", "c 1:8 rwm", "c 1:9 rwm",
                  "c 5:0 rwm", "c 5:2 rwm", "c 136:* rwm" };
          int fd = openat (cg_fd[n_cg], "devices.deny", O_WRONLY | O_CLOEXEC);
          if (fd < 0 || write (fd, "a", 1) < 0)
            return perror ("floor: devices.deny"), -1;
          close (fd);
          fd = openat (cg_fd[n_cg], "devices.allow", O_WRONLY | O_CLOEXEC);
          for (size_t k = 0; fd >= 0 && k < sizeof allow / sizeof *allow; k++)
            if (write (fd, allow[k], strlen (allow[k])) < 0)
              return perror ("floor: devices.allow"), -1;
          if (fd >= 0)
            close (fd);
        }
      if (dirs[i] == v2)
        cg2_fd = open (p, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      n_cg++;
    }
  return 0;
}

static int
cgroups_join (void)
{
  for (int i = 0; i < n_cg; i++)
    if (cg_fd[i] >= 0 && !(cg2_fd >= 0 && i == n_cg - 1) && write_at (cg_fd[i], "tasks", "0") < 0)
      return perror ("floor: join"), -1;
  return 0;
}

static void
cgroups_remove (void)
{
  for (int i = 0; i < n_cg; i++)
    rmdir (cg_dir[i]);
}

static int
mount_in (const char *root, const char *dst, const char *type, unsigned long fl, const char *data)
{
  char p[4096];
  snprintf (p, sizeof p, "%s%s", root, dst);
  mkdir (p, 0755);
  if (mount (type, p, type, fl, data) < 0)
    return perror (p), -1;
  return 0;
}

/* What the harness's config asks for beyond the rootfs (tests/integration/
 * helpers.bash, write_default_config). */
static int
mounts (const char *r)
{
  static const char *const nodes[][2] = { { "null", "1:3" }, { "zero", "1:5" }, { "full", "1:7" },
                                          { "random", "1:8" }, { "urandom", "1:9" }, { "tty", "5:0" } };
  static const char *const links[][2] = { { "/proc/self/fd", "fd" }, { "/proc/self/fd/0", "stdin" },
                                          { "/proc/self/fd/1", "stdout" },
                                          { "/proc/self/fd/2", "stderr" }, { "pts/ptmx", "ptmx" } };
  static const char *const masked[]
      = { "/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
          "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/sys/firmware",
          "/proc/scsi" };
  static const char *const ro[] = { "/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys",
                                    "/proc/sysrq-trigger" };
  char p[4096], d[4096];
  struct stat st;

  if (mount_in (r, "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0
      || mount_in (r, "/dev", "tmpfs", MS_NOSUID | MS_STRICTATIME, "mode=755,size=65536k") < 0)
    return -1;
  for (size_t i = 0; i < sizeof nodes / sizeof *nodes; i++)
    {
      unsigned maj, min;
      sscanf (nodes[i][1], "%u:%u", &maj, &min);
      snprintf (p, sizeof p, "%s/dev/%s", r, nodes[i][0]);
      if (mknod (p, S_IFCHR | 0666, makedev (maj, min)) < 0 || chmod (p, 0666) < 0)
        return perror (p), -1;
    }
  for (size_t i = 0; i < sizeof links / sizeof *links; i++)
    {
      snprintf (p, sizeof p, "%s/dev/%s", r, links[i][1]);
      if (symlink (links[i][0], p) < 0)
        return perror (p), -1;
    }
  if (mount_in (r, "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
                "newinstance,ptmxmode=0666,mode=0620,gid=5")
          < 0
      || mount_in (r, "/dev/shm", "tmpfs", MS_NOSUID | MS_NOEXEC | MS_NODEV,
                   "mode=1777,size=65536k")
             < 0
      || mount_in (r, "/dev/mqueue", "mqueue", MS_NOSUID | MS_NOEXEC | MS_NODEV, NULL) < 0
      || mount_in (r, "/sys", "sysfs", MS_NOSUID | MS_NOEXEC | MS_NODEV | MS_RDONLY, NULL) < 0)
    return -1;
  snprintf (d, sizeof d, "%s/dev/null", r);
  for (size_t i = 0; i < sizeof masked / sizeof *masked; i++)
    {
      snprintf (p, sizeof p, "%s%s", r, masked[i]);
      if (stat (p, &st) < 0)
        continue;
      if (S_ISDIR (st.st_mode) ? mount ("tmpfs", p, "tmpfs", MS_RDONLY, "size=0") < 0
                               : mount (d, p, NULL, MS_BIND, NULL) < 0)
        return perror (p), -1;
    }
  for (size_t i = 0; i < sizeof ro / sizeof *ro; i++)
    {
      snprintf (p, sizeof p, "%s%s", r, ro[i]);
      if (stat (p, &st) < 0)
        continue;
      if (mount (p, p, NULL, MS_BIND | MS_REC, NULL) < 0
          || mount (NULL, p, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_REC, NULL) < 0)
        return perror (p), -1;
    }
  return 0;
}

static int
child (const char *rootfs, bool with_mounts, char **argv)
{
  if (cgroups_join () < 0)
    return 125;
  if (mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
    return perror ("floor: make / private"), 125;
  if (mount (rootfs, rootfs, NULL, MS_BIND | MS_REC, NULL) < 0)
    return perror ("floor: bind rootfs"), 125;
  if (with_mounts && mounts (rootfs) < 0)
    return 125;
  if (chdir (rootfs) < 0)
    return perror ("floor: chdir rootfs"), 125;
  if (syscall (SYS_pivot_root, ".", ".") < 0)
    return perror ("floor: pivot_root"), 125;
  if (umount2 (".", MNT_DETACH) < 0)
    return perror ("floor: umount old root"), 125;
  if (chdir ("/") < 0)
    return perror ("floor: chdir /"), 125;
  execv (argv[0], argv);
  perror ("floor: exec");
  return 127;
}

/* A state directory as a runtime keeps one: the config's copy, `made`,
 * state.json through a rename. */
static char *
state_make (const char *arg)
{
  char *dir = NULL, *base = strdup (arg), *cfg = strchr (base, ':'), buf[65536], p[4096];
  ssize_t n;
  int in, out;

  if (cfg == NULL)
    return NULL;
  *cfg++ = '\0';
  if (asprintf (&dir, "%s/floor-%d", base, (int) getpid ()) < 0 || mkdir (dir, 0700) < 0)
    return perror ("floor: state"), NULL;
  in = open (cfg, O_RDONLY | O_CLOEXEC);
  n = in < 0 ? -1 : read (in, buf, sizeof buf);
  snprintf (p, sizeof p, "%s/config.json", dir);
  out = open (p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (n < 0 || out < 0 || write (out, buf, (size_t) n) != n)
    return perror ("floor: state config"), NULL;
  close (in);
  close (out);
  snprintf (p, sizeof p, "%s/made", dir);
  out = open (p, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (out < 0 || write (out, "made /x\n", 8) != 8)
    return perror ("floor: made"), NULL;
  close (out);
  snprintf (p, sizeof p, "%s/state.json.tmp", dir);
  out = open (p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (out < 0 || write (out, buf, 512) != 512)
    return perror ("floor: state.json"), NULL;
  close (out);
  snprintf (buf, sizeof buf, "%s/state.json", dir);
  if (rename (p, buf) < 0)
    return perror ("floor: rename"), NULL;
  return dir;
}

static void
state_remove (const char *dir)
{
  static const char *const f[] = { "config.json", "made", "state.json" };
  char p[4096];
  for (size_t i = 0; i < 3; i++)
    {
      snprintf (p, sizeof p, "%s/%s", dir, f[i]);
      unlink (p);
    }
  rmdir (dir);
}

int
main (int argc, char **argv)
{
  unsigned long flags = CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
                        | CLONE_NEWNS | CLONE_NEWCGROUP;
  const char *state_arg = NULL;
  char *state = NULL;
  bool with_mounts = false;
  int i = 1, status;
  pid_t pid;

  for (; i < argc && strncmp (argv[i], "--", 2) == 0; i++)
    if (strcmp (argv[i], "--no-netns") == 0)
      flags &= ~(unsigned long) CLONE_NEWNET;
    else if (strcmp (argv[i], "--selfexe") == 0)
      selfexe (argv);
    else if (strcmp (argv[i], "--mounts") == 0)
      with_mounts = true;
    else if (strcmp (argv[i], "--cgroups") == 0 && i + 1 < argc)
      {
        char *colon = strchr (argv[++i], ':'), *skip = colon ? strchr (colon + 1, ':') : NULL;
        if (skip)
          *skip++ = '\0';
        if (colon == NULL || cgroups_make (atoi (argv[i]), colon + 1, skip) < 0)
          return fprintf (stderr, "floor: --cgroups N:PARENT failed\n"), 125;
      }
    else if (strcmp (argv[i], "--state") == 0 && i + 1 < argc)
      state_arg = argv[++i];
    else
      break;
  if (argc - i < 2)
    {
      fprintf (stderr, "usage: floor [--no-netns] [--selfexe] [--cgroups N:PARENT[:SKIP]] [--mounts] "
                       "[--state DIR:CONFIG] ROOTFS PROGRAM [ARGS...]\n");
      return 2;
    }
  if (state_arg && (state = state_make (state_arg)) == NULL)
    return 125;
  if (cg2_fd >= 0)
    {
      /* clone3 without a stack behaves like fork, as clone below */
      struct clone_args ca = { .flags = flags | CLONE_INTO_CGROUP, .exit_signal = SIGCHLD,
                               .cgroup = (uint64_t) cg2_fd };
      pid = (pid_t) syscall (SYS_clone3, &ca, sizeof ca);
    }
  else
    /* A raw clone without a new stack behaves like fork (the child runs on
     * a copy of this stack), which is all a single-threaded caller needs. */
    pid = (pid_t) syscall (SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, 0);
  if (pid < 0)
    return perror ("floor: clone"), 125;
  if (pid == 0)
    _exit (child (argv[i], with_mounts, argv + i + 1));
  if (waitpid (pid, &status, 0) < 0)
    return perror ("floor: waitpid"), 125;
  cgroups_remove ();
  if (state)
    state_remove (state);
  return WIFEXITED (status) ? WEXITSTATUS (status) : 128 + WTERMSIG (status);
}
