/* enosys: run a program as if the kernel lacked some syscalls, to test
 * brig's fallbacks on this kernel (boundary_exe*.bats: the sealed memfd copy
 * of the binary where open_tree or mount_setattr is missing).
 *
 *   enosys SYSCALL[,SYSCALL...] PROGRAM [ARGS...]
 *
 * SYSCALL is one of open_tree, mount_setattr, move_mount, fsopen,
 * memfd_create. Installs a seccomp filter that fails those with ENOSYS (on
 * this build's architecture; any other is killed) and execs PROGRAM. The
 * filter is inherited by everything PROGRAM starts, containers included.
 * Without CAP_SYS_ADMIN it sets no_new_privs first, as the kernel demands. */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
# define ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
# define ARCH AUDIT_ARCH_AARCH64
#else
# error "enosys: add this architecture's AUDIT_ARCH"
#endif

static const struct {
  const char *name;
  long nr;
} known[] = {
  { "open_tree", SYS_open_tree },
  { "mount_setattr", SYS_mount_setattr },
  { "move_mount", SYS_move_mount },
  { "fsopen", SYS_fsopen },
  { "memfd_create", SYS_memfd_create },
};

int
main (int argc, char **argv)
{
  struct sock_filter f[64];
  unsigned n = 0;
  char list[1024], *save = NULL;

  if (argc < 3)
    {
      fprintf (stderr, "usage: enosys SYSCALL[,SYSCALL...] PROGRAM [ARGS...]\n");
      return 2;
    }
  f[n++] = (struct sock_filter) BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, arch));
  f[n++] = (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, ARCH, 1, 0);
  f[n++] = (struct sock_filter) BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
  f[n++] = (struct sock_filter) BPF_STMT (BPF_LD | BPF_W | BPF_ABS, offsetof (struct seccomp_data, nr));
  snprintf (list, sizeof list, "%s", argv[1]);
  for (char *name = strtok_r (list, ",", &save); name; name = strtok_r (NULL, ",", &save))
    {
      size_t i;
      for (i = 0; i < sizeof known / sizeof known[0]; i++)
        if (strcmp (known[i].name, name) == 0)
          break;
      if (i == sizeof known / sizeof known[0] || n + 3 > sizeof f / sizeof f[0])
        {
          fprintf (stderr, "enosys: unknown or too many syscalls: %s\n", name);
          return 2;
        }
      f[n++] = (struct sock_filter) BPF_JUMP (BPF_JMP | BPF_JEQ | BPF_K, (unsigned) known[i].nr, 0, 1);
      f[n++] = (struct sock_filter) BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS);
    }
  f[n++] = (struct sock_filter) BPF_STMT (BPF_RET | BPF_K, SECCOMP_RET_ALLOW);

  struct sock_fprog prog = { .len = (unsigned short) n, .filter = f };
  if (prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0
      && (errno != EACCES || prctl (PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0
          || prctl (PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0))
    {
      perror ("enosys: seccomp");
      return 2;
    }
  execvp (argv[2], argv + 2);
  perror ("enosys: exec");
  return 127;
}
