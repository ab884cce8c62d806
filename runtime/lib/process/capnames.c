/* Capability names, from the kernel's uapi (linux/capability.h), so that
 * brig does not link libcap: libcap's constructor probes the bounding set
 * (six to twelve prctl calls) at every start of any program that links
 * it, and brig starts twice per create/run/exec (selfexe.h). brig's own
 * capget/capset/prctl code (caps.c) needs nothing else from libcap. A
 * capability newer than this table is unknown to brig, as it would be to
 * a libcap of the same age: skipped with a warning (runtime-spec). */
#include <stddef.h>
#include <string.h>

#include "process/capnames.h"
#include "utils.h"

static const char *const names[] = {
  "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER",
  "CAP_FSETID", "CAP_KILL", "CAP_SETGID", "CAP_SETUID",
  "CAP_SETPCAP", "CAP_LINUX_IMMUTABLE", "CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST",
  "CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_IPC_LOCK", "CAP_IPC_OWNER",
  "CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT", "CAP_SYS_PTRACE",
  "CAP_SYS_PACCT", "CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE",
  "CAP_SYS_RESOURCE", "CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_MKNOD",
  "CAP_LEASE", "CAP_AUDIT_WRITE", "CAP_AUDIT_CONTROL", "CAP_SETFCAP",
  "CAP_MAC_OVERRIDE", "CAP_MAC_ADMIN", "CAP_SYSLOG", "CAP_WAKE_ALARM",
  "CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ", "CAP_PERFMON", "CAP_BPF",
  "CAP_CHECKPOINT_RESTORE",
};

int
brig_cap_from_name (const char *name)
{
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (names); i++)
    if (strcmp (names[i], name) == 0)
      return (int) i;
  return -1;
}

const char *
brig_cap_name (int cap)
{
  if (cap < 0 || (size_t) cap >= BRIG_ARRAY_SIZE (names))
    return NULL;
  return names[cap];
}
