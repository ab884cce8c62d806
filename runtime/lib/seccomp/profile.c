/* brig's hardened default seccomp profile (`brig spec --hardened`).
 *
 * An allowlist, as Docker's and podman's default profiles are: every
 * syscall a container workload is known to need is allowed; everything
 * else, including syscalls newer than this list, fails with ENOSYS, which
 * libc and language runtimes treat as "not implemented here" and fall back
 * from (clone3 -> clone, io_uring -> epoll, ...): io_uring is left out on
 * purpose, its operations bypass seccomp. The syscalls a container
 * has no business making are also listed explicitly with EPERM so the
 * refusal reads as a refusal. docs/security.md explains each group. */
#include <errno.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "seccomp/seccomp.h"
#include "utils.h"

/* Unknown names (other architectures, newer kernels) are skipped when the
 * profile is compiled, so the list may name syscalls of every arch. */
static const char *const allowed[] = {
  /* files and directories */
  "access", "chdir", "chmod", "chown", "chown32", "close", "close_range", "copy_file_range",
  "creat", "dup", "dup2", "dup3", "faccessat", "faccessat2", "fadvise64", "fadvise64_64",
  "arm_fadvise64_64", "fallocate", "fchdir", "fchmod", "fchmodat", "fchmodat2", "fchown",
  "fchown32", "fchownat", "fcntl", "fcntl64", "fdatasync", "fgetxattr", "flistxattr", "flock",
  "fremovexattr", "fsetxattr", "fstat", "fstat64", "fstatat64", "fstatfs", "fstatfs64", "fsync",
  "ftruncate", "ftruncate64", "futimesat", "getcwd", "getdents", "getdents64", "getxattr",
  "getxattrat", "lchown", "lchown32", "lgetxattr", "link", "linkat", "listxattr", "listxattrat",
  "llistxattr", "lremovexattr", "lseek", "_llseek", "lsetxattr", "lstat", "lstat64", "mkdir",
  "mkdirat", "mknod", "mknodat", "newfstatat", "open", "openat", "openat2", "pread64", "preadv",
  "preadv2", "pwrite64", "pwritev", "pwritev2", "read", "readahead", "readdir", "readlink",
  "readlinkat", "readv", "removexattr", "removexattrat", "rename", "renameat", "renameat2",
  "rmdir", "sendfile", "sendfile64", "setxattr", "setxattrat", "splice", "stat", "stat64",
  "statfs", "statfs64", "statx", "symlink", "symlinkat", "sync", "sync_file_range",
  "sync_file_range2", "arm_sync_file_range", "syncfs", "tee", "truncate", "truncate64", "umask",
  "unlink", "unlinkat", "utime", "utimensat", "utimensat_time64", "utimes", "vmsplice", "write",
  "writev", "chroot", "cachestat", "statmount", "listmount", "file_getattr", "file_setattr",
  /* polling, events, timers */
  "epoll_create", "epoll_create1", "epoll_ctl", "epoll_pwait", "epoll_pwait2", "epoll_wait",
  "eventfd", "eventfd2", "inotify_add_watch", "inotify_init", "inotify_init1",
  "inotify_rm_watch", "fanotify_init", "fanotify_mark", "poll", "ppoll", "ppoll_time64",
  "pselect6", "pselect6_time64", "select", "_newselect", "signalfd", "signalfd4",
  "timerfd_create", "timerfd_gettime", "timerfd_gettime64", "timerfd_settime",
  "timerfd_settime64", "timer_create", "timer_delete", "timer_getoverrun", "timer_gettime",
  "timer_gettime64", "timer_settime", "timer_settime64", "alarm", "getitimer", "setitimer",
  "nanosleep", "clock_nanosleep", "clock_nanosleep_time64", "clock_getres",
  "clock_getres_time64", "clock_gettime", "clock_gettime64", "gettimeofday", "time", "times",
  "pause", "io_cancel", "io_destroy", "io_getevents", "io_pgetevents", "io_pgetevents_time64",
  "io_setup", "io_submit", "futex", "futex_time64", "futex_waitv", "futex_wake", "futex_wait",
  "futex_requeue",
  /* memory */
  "brk", "madvise", "membarrier", "memfd_create", "memfd_secret", "mincore", "mlock", "mlock2",
  "mlockall", "mmap", "mmap2", "mprotect", "mremap", "msync", "munlock", "munlockall", "munmap",
  "remap_file_pages", "pkey_alloc", "pkey_free", "pkey_mprotect", "get_mempolicy",
  "set_mempolicy", "set_mempolicy_home_node", "mbind", "migrate_pages", "move_pages", "mseal",
  "map_shadow_stack",
  /* processes, threads, signals */
  "arch_prctl", "capget", "capset", "execve", "execveat", "exit", "exit_group", "fork",
  "vfork", "get_robust_list", "set_robust_list", "get_thread_area", "set_thread_area",
  "set_tid_address", "getcpu", "getegid", "getegid32", "geteuid", "geteuid32", "getgid",
  "getgid32", "getgroups", "getgroups32", "getpgid", "getpgrp", "getpid", "getppid",
  "getpriority", "getresgid", "getresgid32", "getresuid", "getresuid32", "getrlimit",
  "ugetrlimit", "getrusage", "getsid", "gettid", "getuid", "getuid32", "ioprio_get",
  "ioprio_set", "kill", "tgkill", "tkill", "pidfd_open", "pidfd_send_signal", "prctl",
  "prlimit64", "restart_syscall", "rseq", "rt_sigaction", "rt_sigpending", "rt_sigprocmask",
  "rt_sigqueueinfo", "rt_sigreturn", "rt_sigsuspend", "rt_sigtimedwait",
  "rt_sigtimedwait_time64", "rt_tgsigqueueinfo", "sigaction", "sigaltstack", "signal",
  "sigpending", "sigprocmask", "sigreturn", "sigsuspend", "sched_get_priority_max",
  "sched_get_priority_min", "sched_getaffinity", "sched_getattr", "sched_getparam",
  "sched_getscheduler", "sched_rr_get_interval", "sched_rr_get_interval_time64",
  "sched_setaffinity", "sched_setattr", "sched_setparam", "sched_setscheduler", "sched_yield",
  "seccomp", "setfsgid", "setfsgid32", "setfsuid", "setfsuid32", "setgid", "setgid32",
  "setgroups", "setgroups32", "setpgid", "setpriority", "setregid", "setregid32", "setresgid",
  "setresgid32", "setresuid", "setresuid32", "setreuid", "setreuid32", "setrlimit", "setsid",
  "setuid", "setuid32", "uname", "sysinfo", "getrandom", "wait4", "waitid", "waitpid",
  "landlock_add_rule", "landlock_create_ruleset", "landlock_restrict_self", "lsm_get_self_attr",
  "lsm_list_modules", "sethostname", "setdomainname", "ustat", "sysfs", "nice", "uretprobe",
  /* IPC */
  "ipc", "mq_getsetattr", "mq_notify", "mq_open", "mq_timedreceive", "mq_timedreceive_time64",
  "mq_timedsend", "mq_timedsend_time64", "mq_unlink", "msgctl", "msgget", "msgrcv", "msgsnd",
  "semctl", "semget", "semop", "semtimedop", "semtimedop_time64", "shmat", "shmctl", "shmdt",
  "shmget", "pipe", "pipe2",
  /* sockets */
  "accept", "accept4", "bind", "connect", "getpeername", "getsockname", "getsockopt", "listen",
  "recv", "recvfrom", "recvmmsg", "recvmmsg_time64", "recvmsg", "send", "sendmmsg", "sendmsg",
  "sendto", "setsockopt", "shutdown", "socket", "socketcall", "socketpair",
  /* ioctl is filtered by the capability set and device cgroup */
  "ioctl",
  /* 32-bit ARM */
  "breakpoint", "cacheflush", "set_tls",
};

/* Refused outright (EPERM): each escapes or reconfigures the host. */
static const char *const denied[] = {
  /* kernel code and boot */
  "init_module", "finit_module", "delete_module", "create_module", "query_module",
  "get_kernel_syms", "kexec_load", "kexec_file_load", "reboot",
  /* kernel attack surface with a history of container escapes */
  "bpf", "perf_event_open", "userfaultfd", "lookup_dcookie", "keyctl", "add_key", "request_key",
  "open_by_handle_at", "name_to_handle_at", "modify_ldt", "uselib", "_sysctl", "vm86", "vm86old",
  /* mounts and namespaces: the container's view is fixed by the runtime */
  "mount", "umount", "umount2", "pivot_root", "fsopen", "fsconfig", "fsmount", "fspick",
  "move_mount", "open_tree", "open_tree_attr", "mount_setattr", "unshare", "setns",
  /* host-wide clocks, swap, accounting, quotas, console, I/O ports */
  "clock_settime", "clock_settime64", "clock_adjtime", "clock_adjtime64", "settimeofday",
  "stime", "adjtimex", "swapon", "swapoff", "acct", "quotactl", "quotactl_fd", "nfsservctl",
  "syslog", "vhangup", "iopl", "ioperm", "lsm_set_self_attr",
};

/* Need ptrace rights over the target: safe only where seccomp cannot be
 * bypassed through ptrace (Linux 4.8 and later). */
static const char *const ptrace_like[] = {
  "ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_getfd", "process_madvise",
};

/* personality(2) values that change nothing about security: the default,
 * LINUX32, UNAME26 and their combination, and the 0xffffffff query. */
static const uint64_t personality_ok[] = { 0x0, 0x8, 0x20000, 0x20008, 0xffffffff };

/* clone(2) flags that create namespaces. */
#define CLONE_NS_FLAGS 0x7E020000ULL

static char **
strv_from (const char *const *items, size_t n)
{
  char **v = xmalloc0 ((n + 1) * sizeof *v);
  for (size_t i = 0; i < n; i++)
    v[i] = xstrdup (items[i]);
  return v;
}

static oci_syscall *
add_rule (oci_seccomp *s, const char *const *names, size_t n, const char *action)
{
  oci_syscall *r;

  s->syscalls = xrealloc (s->syscalls, (s->syscalls_len + 1) * sizeof *s->syscalls);
  r = &s->syscalls[s->syscalls_len++];
  memset (r, 0, sizeof *r);
  r->names = strv_from (names, n);
  r->names_len = n;
  r->action = xstrdup (action);
  return r;
}

static void
add_arg (oci_syscall *r, uint32_t index, uint64_t value, uint64_t value_two, const char *op)
{
  oci_syscall_arg *a = xmalloc0 (sizeof *a);
  a->index = index;
  a->has_index = true;
  a->value = value;
  a->has_value = true;
  if (value_two != 0)
    {
      a->value_two = value_two;
      a->has_value_two = true;
    }
  a->op = xstrdup (op);
  r->args = a;
  r->args_len = 1;
}

static bool
kernel_at_least (int major, int minor)
{
  struct utsname u;
  int ma = 0, mi = 0;

  if (uname (&u) < 0 || sscanf (u.release, "%d.%d", &ma, &mi) != 2)
    return false;
  return ma > major || (ma == major && mi >= minor);
}

oci_seccomp *
brig_seccomp_default_profile (void)
{
  static const char *const x86[] = { "SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32" };
  static const char *const arm[] = { "SCMP_ARCH_AARCH64", "SCMP_ARCH_ARM" };
  oci_seccomp *s = xmalloc0 (sizeof *s);
  uint32_t native = seccomp_arch_native ();
  bool s390 = native == SCMP_ARCH_S390 || native == SCMP_ARCH_S390X;
  oci_syscall *r;

  s->default_action = xstrdup ("SCMP_ACT_ERRNO");
  s->default_errno_ret = ENOSYS;
  s->has_default_errno_ret = true;
  if (native == SCMP_ARCH_X86_64)
    {
      s->architectures = strv_from (x86, BRIG_ARRAY_SIZE (x86));
      s->architectures_len = BRIG_ARRAY_SIZE (x86);
    }
  else if (native == SCMP_ARCH_AARCH64)
    {
      s->architectures = strv_from (arm, BRIG_ARRAY_SIZE (arm));
      s->architectures_len = BRIG_ARRAY_SIZE (arm);
    }

  add_rule (s, allowed, BRIG_ARRAY_SIZE (allowed), "SCMP_ACT_ALLOW");

  if (kernel_at_least (4, 8))
    add_rule (s, ptrace_like, BRIG_ARRAY_SIZE (ptrace_like), "SCMP_ACT_ALLOW");

  for (size_t i = 0; i < BRIG_ARRAY_SIZE (personality_ok); i++)
    {
      static const char *const personality[] = { "personality" };
      r = add_rule (s, personality, 1, "SCMP_ACT_ALLOW");
      add_arg (r, 0, personality_ok[i], 0, "SCMP_CMP_EQ");
    }

  /* clone without namespace flags; s390 swaps the first two arguments. */
  {
    static const char *const clone_name[] = { "clone" };
    r = add_rule (s, clone_name, 1, "SCMP_ACT_ALLOW");
    add_arg (r, s390 ? 1 : 0, CLONE_NS_FLAGS, 0, "SCMP_CMP_MASKED_EQ");
  }
  {
    /* glibc falls back to clone when clone3 is not implemented; clone3's
     * flags live in memory a filter cannot inspect. */
    static const char *const clone3[] = { "clone3" };
    r = add_rule (s, clone3, 1, "SCMP_ACT_ERRNO");
    r->errno_ret = ENOSYS;
    r->has_errno_ret = true;
  }

  r = add_rule (s, denied, BRIG_ARRAY_SIZE (denied), "SCMP_ACT_ERRNO");
  r->errno_ret = EPERM;
  r->has_errno_ret = true;
  return s;
}
