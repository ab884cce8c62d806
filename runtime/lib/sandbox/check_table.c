/* The vocabulary of `brig check`, below the rules that use it: the rule
 * table (name, severity, profile, source, why and fix of each), a finding
 * added to the report, and the path normalisation the mount rules share. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/check_internal.h"
#include "utils.h"

#define B BRIG_PROFILE_BASELINE
#define R BRIG_PROFILE_RESTRICTED
#define S BRIG_PROFILE_SANDBOX

const struct brig_check_rule brig_check_rules[R_COUNT] = {
  [R_CAP_ADDED] = { "cap-added", BRIG_SEV_CRITICAL, B,
    "PSS baseline Capabilities; CIS 5.3, 5.4",
    "a capability outside Docker's default set (CAP_SYS_ADMIN, CAP_SYS_MODULE, CAP_SYS_PTRACE, CAP_NET_ADMIN, ...) is a known way out of the container",
    "remove it from every set of process.capabilities" },
  [R_CAP_NOT_DROPPED] = { "cap-not-dropped", BRIG_SEV_MEDIUM, R,
    "PSS restricted Capabilities (drop ALL, add only NET_BIND_SERVICE)",
    "each default capability (CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_SETUID, ...) widens what a compromised process can do to files and ids",
    "remove every capability except CAP_NET_BIND_SERVICE from process.capabilities" },
  [R_CAP_ANY] = { "cap-any", BRIG_SEV_LOW, S,
    "brig sandbox; NIST 4.4.4",
    "untrusted code needs no capability at all",
    "empty every set of process.capabilities" },
  [R_NS_MOUNT] = { "host-ns-mount", BRIG_SEV_CRITICAL, B,
    "NIST 4.4.4",
    "without its own mount namespace the container's mounts and pivot change the host's filesystem view",
    "add {\"type\":\"mount\"} to linux.namespaces" },
  [R_NS_PID] = { "host-ns-pid", BRIG_SEV_HIGH, B,
    "PSS baseline Host Namespaces (hostPID); CIS 5.15",
    "the host's processes are visible and can be signalled or ptraced; /proc/PID/root and environ leak secrets",
    "add {\"type\":\"pid\"} (no path) to linux.namespaces" },
  [R_NS_NETWORK] = { "host-ns-network", BRIG_SEV_HIGH, B,
    "PSS baseline Host Namespaces (hostNetwork); CIS 5.9",
    "the host's interfaces, loopback services and abstract unix sockets are reachable",
    "add {\"type\":\"network\"} (no path) to linux.namespaces" },
  [R_NS_IPC] = { "host-ns-ipc", BRIG_SEV_HIGH, B,
    "PSS baseline Host Namespaces (hostIPC); CIS 5.16",
    "the host's System V shared memory and message queues can be read and written",
    "add {\"type\":\"ipc\"} (no path) to linux.namespaces" },
  [R_NS_UTS] = { "host-ns-uts", BRIG_SEV_MEDIUM, B,
    "CIS 5.20",
    "the container can change the host's hostname and domain name",
    "add {\"type\":\"uts\"} (no path) to linux.namespaces" },
  [R_NS_CGROUP] = { "host-ns-cgroup", BRIG_SEV_LOW, S,
    "NIST 4.4.4",
    "the host's cgroup paths are visible in /proc/self/cgroup and the cgroup mounts",
    "add {\"type\":\"cgroup\"} to linux.namespaces" },
  [R_NO_USERNS] = { "no-userns", BRIG_SEV_HIGH, R,
    "CIS 5.30; NIST 4.4.4",
    "without a user namespace mapping root to an unprivileged host range, root in the container is root on the host: any escape is a host root compromise",
    "add {\"type\":\"user\"} to linux.namespaces with uidMappings/gidMappings whose hostID range excludes 0 (brig spec --sandbox does)" },
  [R_ROOT_USER] = { "root-user", BRIG_SEV_MEDIUM, R,
    "PSS restricted Running as Non-root, Non-root groups; CIS 4.1",
    "the process runs as host uid or gid 0, which owns most of the host's files",
    "set process.user.uid/gid to a non-zero id, or map them to an unprivileged host id with a user namespace" },
  [R_SECCOMP_UNCONFINED] = { "seccomp-unconfined", BRIG_SEV_HIGH, B,
    "PSS baseline/restricted Seccomp; CIS 5.21",
    "every system call is reachable, including the rarely used ones where kernel exploits live",
    "set linux.seccomp to an allowlist (defaultAction SCMP_ACT_ERRNO), e.g. brig spec --hardened" },
  [R_SECCOMP_DENYLIST] = { "seccomp-denylist", BRIG_SEV_MEDIUM, R,
    "PSS restricted Seccomp (RuntimeDefault or Localhost); NIST 4.4.4",
    "a profile that allows by default lets through every system call it forgot, including new ones",
    "use a profile whose defaultAction denies (SCMP_ACT_ERRNO, SCMP_ACT_KILL_PROCESS)" },
  [R_NO_NEW_PRIVS] = { "no-new-privileges", BRIG_SEV_MEDIUM, R,
    "PSS restricted Privilege Escalation; CIS 5.25",
    "setuid and file-capability binaries in the image can raise the process's privileges",
    "set process.noNewPrivileges to true" },
  [R_LSM_UNCONFINED] = { "lsm-unconfined", BRIG_SEV_MEDIUM, B,
    "PSS baseline AppArmor, SELinux; CIS 5.1, 5.2",
    "the AppArmor or SELinux confinement the host would apply is switched off",
    "remove process.apparmorProfile \"unconfined\" and the spc_t/unconfined_t process.selinuxLabel" },
  [R_SENSITIVE_MOUNT] = { "sensitive-mount", BRIG_SEV_CRITICAL, B,
    "CIS 5.5, 5.31; PSS baseline HostPath Volumes",
    "a host directory such as /, /etc, /proc, /sys, /dev or an engine's socket (docker, containerd, podman, CRI-O) gives the container control of the host",
    "remove the bind mount, or bind a dedicated directory instead" },
  [R_HOST_BIND_WRITABLE] = { "host-bind-writable", BRIG_SEV_LOW, S,
    "PSS baseline HostPath Volumes; NIST 4.4.4",
    "untrusted code can write host files that something on the host may later read or run",
    "add \"ro\" to the mount's options, or use a tmpfs" },
  [R_PROPAGATION_SHARED] = { "mount-propagation-shared", BRIG_SEV_MEDIUM, B,
    "CIS 5.19",
    "mounts made inside the container propagate to the host (and the host's into the container)",
    "use private, rprivate, slave or rslave propagation" },
  [R_DEVICES_ALL] = { "devices-all", BRIG_SEV_CRITICAL, B,
    "CIS 5.4, 5.17",
    "the device cgroup allows every device: with mknod or a bound /dev the host's disks can be opened",
    "replace the allow-all entry of linux.resources.devices with {\"allow\":false,\"access\":\"rwm\"}" },
  [R_HOST_DEVICE] = { "host-device", BRIG_SEV_MEDIUM, R,
    "CIS 5.17",
    "a host device node beyond the standard ones (null, zero, full, random, urandom, tty) is exposed",
    "remove it from linux.devices" },
  [R_PROC_UNMASKED] = { "proc-unmasked", BRIG_SEV_MEDIUM, B,
    "PSS baseline /proc Mount Type; CIS 5.4",
    "files of /proc and /sys that leak host secrets or control the host kernel are reachable",
    "add the path to linux.maskedPaths (or linux.readonlyPaths), as brig spec writes them" },
  [R_KERNEL_FS_WRITABLE] = { "kernel-fs-writable", BRIG_SEV_MEDIUM, B,
    "CIS 5.4; NIST 4.4.4",
    "a writable sysfs or cgroupfs lets the container change kernel and cgroup settings",
    "add \"ro\" to the mount's options" },
  [R_SYSCTL_UNSAFE] = { "sysctl-unsafe", BRIG_SEV_HIGH, B,
    "PSS baseline Sysctls",
    "a sysctl outside the namespaced safe set changes the host kernel or other containers",
    "remove it from linux.sysctl; only kernel.shm_rmid_forced, net.ipv4.ip_local_port_range, ip_local_reserved_ports, ip_unprivileged_port_start, tcp_syncookies, ping_group_range, tcp_keepalive_time/intvl/probes and tcp_fin_timeout are safe" },
  [R_ROOTFS_WRITABLE] = { "rootfs-writable", BRIG_SEV_MEDIUM, R,
    "CIS 5.12; NIST 4.4.5",
    "untrusted code can change the image's programs and libraries and persist there",
    "set root.readonly to true and mount a tmpfs where writes are needed, or annotate "
    "run.brig.rootfs.ephemeral=true" },
  [R_NO_MEMORY_LIMIT] = { "no-memory-limit", BRIG_SEV_MEDIUM, R,
    "CIS 5.10; NIST 4.4.4",
    "the container can take all of the host's memory",
    "set linux.resources.memory.limit (and swap to the same value)" },
  [R_NO_PIDS_LIMIT] = { "no-pids-limit", BRIG_SEV_MEDIUM, R,
    "CIS 5.28; NIST 4.4.4",
    "a fork bomb in the container exhausts the host's pids",
    "set linux.resources.pids.limit" },
  [R_NO_CPU_LIMIT] = { "no-cpu-limit", BRIG_SEV_LOW, S,
    "CIS 5.11; NIST 4.4.4",
    "the container can take every CPU of the host",
    "set linux.resources.cpu.quota and period (or cpu.shares)" },
  [R_EGRESS_UNSET] = { "egress-unset", BRIG_SEV_HIGH, S,
    "brig issue #12 egress policy; NIST 4.4.3; CWE-918",
    "with no egress policy the container reaches the cloud metadata endpoint, link-local and private services (SSRF)",
    "set annotations[\"run.brig.egress\"] to public, allowlist or none (docs/sandbox.md)" },
  /* Judged by what is mounted, wherever and however spelt (check_mounts.c). */
  [R_PROCFS_MOUNT] = { "procfs-mount", BRIG_SEV_CRITICAL, B,
    "PSS baseline /proc Mount Type; CIS 5.4; brig issue #22",
    "linux.maskedPaths and readonlyPaths are written for /proc: a second procfs (or a bind of one) "
    "elsewhere shows the same files unmasked, and without a user namespace its "
    "sys/kernel/core_pattern is the host's (\"|/prog\" runs a program as host root)",
    "remove the mount: mount procfs once, at /proc" },
  [R_KERNEL_FS_MOUNT] = { "kernel-fs-mount", BRIG_SEV_CRITICAL, B,
    "CIS 5.4; NIST 4.4.4; brig issue #22",
    "debugfs, tracefs, securityfs, bpf, configfs, efivarfs and binfmt_misc are the host "
    "kernel's own state: kprobes, LSM policy, pinned BPF maps, firmware variables, "
    "interpreters run for every program on the host",
    "remove the mount" },
  [R_BLOCK_DEVICE_MOUNT] = { "block-device-mount", BRIG_SEV_CRITICAL, B,
    "CIS 5.17; PSS baseline HostPath Volumes; brig issue #22",
    "a filesystem of a host block device (ext4, xfs, btrfs, ... of a /dev node) is the host's "
    "data, outside every bind the config lists",
    "remove the mount; bind a dedicated host directory read-only instead" },
  [R_SECCOMP_DEFAULT_PERMITS] = { "seccomp-default-permits", BRIG_SEV_HIGH, B,
    "PSS baseline Seccomp; CIS 5.21; brig issue #22",
    "a defaultAction that looks like a deny or an audit lets every unlisted call through: "
    "SCMP_ACT_LOG runs it, SCMP_ACT_TRACE runs it under any tracer (a process of the "
    "container can be one), SCMP_ACT_ERRNO with defaultErrnoRet 0 skips it but reports "
    "success, so a refused setuid or capset looks done",
    "set defaultAction to SCMP_ACT_ERRNO (defaultErrnoRet EPERM or ENOSYS, not 0) or "
    "SCMP_ACT_KILL_PROCESS" },
  [R_NOT_CHECKED] = { "not-checked", BRIG_SEV_HIGH, B,
    "brig: judge the thing, not its name",
    "what brig could not examine (a namespace path it cannot open, or that is not a namespace of its type; a hostname, resolved only at create) cannot be called safe: it may be the host's namespace or an internal address",
    "give a path brig can open, to a namespace of the listed type (run the check as root on the node), or an address instead of a hostname" },
  [R_EGRESS_ALLOW_METADATA] = { "egress-allow-metadata", BRIG_SEV_CRITICAL, S,
    "brig issue #12 egress policy; CWE-918",
    "an allow entry that covers a cloud metadata endpoint (directly or through a translated IPv6 form) gives untrusted code a path to the node's cloud credentials",
    "remove the entry from annotations[\"run.brig.egress.allow\"], or narrow it to public addresses" },
  [R_EGRESS_ALLOW_PRIVATE] = { "egress-allow-private", BRIG_SEV_HIGH, S,
    "brig issue #12 egress policy; NIST 4.4.3; CWE-918",
    "an allow entry that covers a private, shared, link-local, multicast or reserved range, or the host's loopback (directly or through a translated IPv6 form), re-opens what the egress policy closes: the cluster's and the host's services",
    "narrow the entry to the one service needed, and have the node policy's egress.allow admit it (docs/sandbox.md)" },
  [R_EGRESS_ALLOW_POLICY] = { "egress-allow-policy", BRIG_SEV_CRITICAL, B,
    "the node policy's egress section",
    "the node operator limits what a container may allow itself (a pod author sets run.brig.* annotations): this reaches beyond that",
    "allow only what the node policy's egress.allow admits" },
  [R_ROOTFS_OWNER_UNMAPPED] = { "rootfs-owner-unmapped", BRIG_SEV_LOW, B,
    "brig issue #24; runtime-spec config-linux.md User namespace mappings",
    "the rootfs is owned by host ids the user namespace does not map: its files read as the overflow id, and container root cannot write its writable root (Permission denied)",
    "add run.brig.rootfs.ephemeral=true (its lower layer is idmapped from the image's owner), or map the owner, or chown the bundle to the mapping's host ids" },
};
const size_t brig_check_rules_count = R_COUNT;
const struct brig_check_rule *const check_rule_not_checked = &brig_check_rules[R_NOT_CHECKED];
const struct brig_check_rule *const check_rule_allow_metadata = &brig_check_rules[R_EGRESS_ALLOW_METADATA];
const struct brig_check_rule *const check_rule_allow_private = &brig_check_rules[R_EGRESS_ALLOW_PRIVATE];
const struct brig_check_rule *const check_rule_allow_policy = &brig_check_rules[R_EGRESS_ALLOW_POLICY];

#undef B
#undef R
#undef S

void
check_add (struct brig_check_report *rep, const struct brig_check_rule *rule,
           enum brig_check_severity sev, char *path, const char *fmt, ...)
{
  struct brig_finding *f;
  va_list ap;
  char *msg;

  if (rule->profile > rep->profile)
    {
      free (path);
      return;
    }
  va_start (ap, fmt);
  if (vasprintf (&msg, fmt, ap) < 0)
    abort ();
  va_end (ap);
  rep->findings = xrealloc (rep->findings, (rep->len + 1) * sizeof *rep->findings);
  f = &rep->findings[rep->len++];
  *f = (struct brig_finding) { .rule = rule, .severity = sev, .path = path, .message = msg };
  rep->counts[sev]++;
}

/* Lexically normalise an absolute path into buf: no "//", ".", "..", no
 * trailing slash; /var/run is /run (a symlink on every distribution). */
void
check_path_norm (const char *in, char *buf, size_t size)
{
  size_t n = 0;
  const char *p = in;
  buf[0] = '\0';
  while (*p)
    {
      const char *e;
      size_t len;
      while (*p == '/')
        p++;
      e = strchrnul (p, '/');
      len = (size_t) (e - p);
      if (len == 0 || (len == 1 && p[0] == '.'))
        ;
      else if (len == 2 && p[0] == '.' && p[1] == '.')
        {
          while (n > 0 && buf[n - 1] != '/')
            n--;
          if (n > 0)
            n--;
          buf[n] = '\0';
        }
      else if (n + 1 + len < size)
        {
          buf[n++] = '/';
          memcpy (buf + n, p, len);
          n += len;
          buf[n] = '\0';
        }
      p = e;
    }
  if (n == 0)
    strcpy (buf, "/");
  if (strncmp (buf, "/var/run", 8) == 0 && (buf[8] == '\0' || buf[8] == '/'))
    memmove (buf, buf + 4, strlen (buf + 4) + 1);
}
