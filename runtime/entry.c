/* The brig binary's ELF entry point, before glibc's own (_start).
 *
 * create, run, exec, reset, fork and pool fill/release put a brig process into a
 * container, so they must run from a file the container cannot write: a
 * detached read-only mount of the binary (CVE-2019-5736; runtime/lib/
 * selfexe.c). main() re-executes itself that way, which meant glibc's
 * start-up ran twice per command: TLS, the IRELATIVE relocations and the
 * CPU feature probe, whose cpuid instructions each trap to the hypervisor on
 * a VM (~0.3 ms of CPU per start measured here; a libc-free static program
 * starts in 0.03 ms). This does the same re-execution here, before any of
 * it, so it runs once.
 *
 * It is only a shortcut: whatever it does not recognise (an option it does
 * not know, a kernel without open_tree) it leaves to main, which decides
 * and re-executes as before. No libc here: raw system calls, no stack
 * protector (the canary lives in TLS, which does not exist yet), no data but
 * one flag for selfexe.c. x86-64 static builds only (configure.ac). */
#if defined(__x86_64__)

#include <fcntl.h>
#include <stddef.h>
#include <sys/syscall.h>
#include <linux/magic.h>
#include <linux/mount.h>

#include "process/selfexe.h"

#ifndef MOUNT_ATTR_RDONLY
# define MOUNT_ATTR_RDONLY 0x00000001
# define MOUNT_ATTR_NOSUID 0x00000002
# define MOUNT_ATTR_NODEV 0x00000004
#endif
#ifndef OPEN_TREE_CLONE
# define OPEN_TREE_CLONE 1
#endif
#ifndef OPEN_TREE_CLOEXEC
# define OPEN_TREE_CLOEXEC O_CLOEXEC
#endif
#ifndef AT_EMPTY_PATH
# define AT_EMPTY_PATH 0x1000
#endif
#ifndef SYS_open_tree
# define SYS_open_tree 428
#endif
#ifndef SYS_mount_setattr
# define SYS_mount_setattr 442
#endif

#define ENTRY_FN __attribute__ ((no_stack_protector))

/* statfs(2)'s f_flags bit for a read-only mount (ST_RDONLY). */
#define ENTRY_ST_RDONLY 1

struct entry_statfs {
  long f_type, f_bsize;
  unsigned long f_blocks, f_bfree, f_bavail, f_files, f_ffree;
  int f_fsid[2];
  long f_namelen, f_frsize, f_flags, f_spare[4];
};

struct entry_mount_attr {
  unsigned long long attr_set, attr_clr, propagation, userns_fd;
};

ENTRY_FN static inline long
sys6 (long n, long a, long b, long c, long d, long e)
{
  long ret;
  register long r10 __asm__ ("r10") = d;
  register long r8 __asm__ ("r8") = e;
  __asm__ volatile ("syscall"
                    : "=a" (ret)
                    : "a" (n), "D" (a), "S" (b), "d" (c), "r" (r10), "r" (r8)
                    : "rcx", "r11", "memory");
  return ret;
}

ENTRY_FN static int
streq (const char *a, const char *b)
{
  while (*a && *a == *b)
    a++, b++;
  return *a == *b;
}

/* a is "NAME=..." for this NAME. */
ENTRY_FN static int
has_value (const char *a, const char *name)
{
  while (*name && *a == *name)
    a++, name++;
  return *name == '\0' && *a == '=';
}

/* 2: a global option of brig.c followed by its value, 1: one without (or
 * with =value), 0: one this does not know. No tables: pointers in data
 * would need relocating in a static PIE, which has not happened yet. */
ENTRY_FN static int
global_option (const char *a)
{
  if (streq (a, "--root") || streq (a, "--log") || streq (a, "--log-format")
      || streq (a, "--criu") || streq (a, "--policy"))
    return 2;
  if (streq (a, "--systemd-cgroup") || streq (a, "--debug") || streq (a, "--rootless")
      || has_value (a, "--root") || has_value (a, "--log") || has_value (a, "--log-format")
      || has_value (a, "--criu") || has_value (a, "--policy") || has_value (a, "--rootless"))
    return 1;
  return 0;
}

/* Does this command line re-execute (brig.c places_process_in_container)?
 * Anything unexpected: no, main decides. */
ENTRY_FN static int
wants_reexec (char **argv)
{
  int i = 1;

  for (; argv[i] && argv[i][0] == '-'; i++)
    {
      int k;
      if (streq (argv[i], "--"))
        {
          i++;
          break;
        }
      k = global_option (argv[i]);
      if (k == 0 || (k == 2 && argv[++i] == NULL))
        return 0;
    }
  if (argv[i] == NULL)
    return 0;
  if (streq (argv[i], "create") || streq (argv[i], "run") || streq (argv[i], "exec")
      || streq (argv[i], "reset") || streq (argv[i], "fork"))
    return 1;
  return streq (argv[i], "pool") && argv[i + 1]
         && (streq (argv[i + 1], "fill") || streq (argv[i + 1], "release"));
}

/* Called with the process's initial stack (argc, argv, NULL, envp, NULL,
 * auxv); returns to _start only when it did not re-execute. */
void brig_entry_c (long *sp);

ENTRY_FN __attribute__ ((used)) void
brig_entry_c (long *sp)
{
  char **argv = (char **) (sp + 1);
  char **envp = argv + sp[0] + 1;
  struct entry_statfs sf;
  struct entry_mount_attr attr = { MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV,
                                   0, 0, 0 };
  long src, tree;

  if (sp[0] < 2 || !wants_reexec (argv)
      || sys6 (SYS_statfs, (long) "/proc/self/exe", (long) &sf, 0, 0, 0) < 0)
    return;
  if (sf.f_flags & ENTRY_ST_RDONLY)
    {
      /* Our detached mount after the re-exec below, or an operator's
         read-only install: selfexe.c need not ask again. */
      brig_selfexe_readonly = 1;
      return;
    }
  src = sys6 (SYS_open, (long) "/proc/self/exe", O_RDONLY | O_CLOEXEC, 0, 0, 0);
  if (src < 0)
    return;
  tree = sys6 (SYS_open_tree, src, (long) "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH,
               0, 0);
  if (tree >= 0
      && sys6 (SYS_mount_setattr, tree, (long) "", AT_EMPTY_PATH, (long) &attr, sizeof attr) == 0)
    sys6 (SYS_execveat, tree, (long) "", (long) argv, (long) envp, AT_EMPTY_PATH);
  /* Not possible here: main tries again, and falls back to a sealed copy. */
  if (tree >= 0)
    sys6 (SYS_close, tree, 0, 0, 0, 0);
  sys6 (SYS_close, src, 0, 0, 0, 0);
}

/* The kernel's registers at entry are kept for _start: rdx (a function
 * for atexit, from the dynamic loader, or 0) in r12, the stack in rbx. */
__asm__ (".text\n"
         ".globl brig_entry\n"
         ".type brig_entry, @function\n"
         "brig_entry:\n"
         "  .cfi_startproc\n"
         "  .cfi_undefined rip\n"
         "  mov %rsp, %rbx\n"
         "  mov %rdx, %r12\n"
         "  mov %rsp, %rdi\n"
         "  and $-16, %rsp\n"
         "  call brig_entry_c\n"
         "  mov %rbx, %rsp\n"
         "  mov %r12, %rdx\n"
         "  jmp _start\n"
         "  .cfi_endproc\n"
         ".size brig_entry, .-brig_entry\n");

#endif
