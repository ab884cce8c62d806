/* The sandbox config (`brig spec --sandbox`). Every choice here answers a
 * rule of `brig check --profile sandbox` (check_rules.c); change both
 * together. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/spec_sandbox.h"
#include "sandbox/userns_auto.h"
#include "seccomp/seccomp.h"
#include "utils.h"

/* Kept as JSON so it reads like the document it produces. Holes: uid base,
 * gid base, map size (twice), devpts gid option, memory, memory+swap,
 * pids, CPU quota, CPU period. */
static const char sandbox_config[] =
  "{"
  "\"ociVersion\":\"1.3.0\","
  "\"process\":{"
  "\"terminal\":false,"
  "\"user\":{\"uid\":0,\"gid\":0},"
  "\"args\":[\"sh\"],"
  "\"env\":[\"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\","
  "\"HOME=/home\",\"TMPDIR=/tmp\"],"
  "\"cwd\":\"/home\","
  "\"capabilities\":{\"bounding\":[],\"effective\":[],\"inheritable\":[],\"permitted\":[],\"ambient\":[]},"
  "\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"hard\":1024,\"soft\":1024},"
  "{\"type\":\"RLIMIT_CORE\",\"hard\":0,\"soft\":0}],"
  "\"noNewPrivileges\":true},"
  "\"root\":{\"path\":\"rootfs\",\"readonly\":true},"
  "\"hostname\":\"sandbox\","
  "\"mounts\":["
  "{\"destination\":\"/proc\",\"type\":\"proc\",\"source\":\"proc\","
  "\"options\":[\"nosuid\",\"noexec\",\"nodev\"]},"
  "{\"destination\":\"/dev\",\"type\":\"tmpfs\",\"source\":\"tmpfs\","
  "\"options\":[\"nosuid\",\"noexec\",\"strictatime\",\"mode=755\",\"size=65536k\"]},"
  "{\"destination\":\"/dev/pts\",\"type\":\"devpts\",\"source\":\"devpts\","
  "\"options\":[\"nosuid\",\"noexec\",\"newinstance\",\"ptmxmode=0666\",\"mode=0620\"%s]},"
  "{\"destination\":\"/dev/shm\",\"type\":\"tmpfs\",\"source\":\"shm\","
  "\"options\":[\"nosuid\",\"noexec\",\"nodev\",\"mode=1777\",\"size=65536k\"]},"
  "{\"destination\":\"/dev/mqueue\",\"type\":\"mqueue\",\"source\":\"mqueue\","
  "\"options\":[\"nosuid\",\"noexec\",\"nodev\"]},"
  "{\"destination\":\"/sys\",\"type\":\"sysfs\",\"source\":\"sysfs\","
  "\"options\":[\"nosuid\",\"noexec\",\"nodev\",\"ro\"]},"
  "{\"destination\":\"/tmp\",\"type\":\"tmpfs\",\"source\":\"tmpfs\","
  "\"options\":[\"nosuid\",\"nodev\",\"mode=1777\",\"size=65536k\"]},"
  "{\"destination\":\"/home\",\"type\":\"tmpfs\",\"source\":\"tmpfs\","
  "\"options\":[\"nosuid\",\"nodev\",\"mode=0755\",\"size=262144k\"]}"
  "],"
  "\"annotations\":{\"run.brig.sandbox\":\"generated\",\"run.brig.egress\":\"public\","
  "\"run.brig.init\":\"true\"},"
  "\"linux\":{"
  "\"uidMappings\":[{\"containerID\":0,\"hostID\":%u,\"size\":%u}],"
  "\"gidMappings\":[{\"containerID\":0,\"hostID\":%u,\"size\":%u}],"
  "\"resources\":{\"devices\":[{\"allow\":false,\"access\":\"rwm\"}],"
  "\"memory\":{\"limit\":%lld,\"swap\":%lld},"
  "\"pids\":{\"limit\":%d},"
  "\"cpu\":{\"quota\":%llu,\"period\":%llu}},"
  "\"namespaces\":[{\"type\":\"user\"},{\"type\":\"pid\"},{\"type\":\"network\"},{\"type\":\"ipc\"},"
  "{\"type\":\"uts\"},{\"type\":\"mount\"},{\"type\":\"cgroup\"}],"
  "\"maskedPaths\":[\"/proc/acpi\",\"/proc/asound\",\"/proc/kcore\",\"/proc/keys\","
  "\"/proc/latency_stats\",\"/proc/timer_list\",\"/proc/timer_stats\",\"/proc/sched_debug\","
  "\"/sys/firmware\",\"/proc/scsi\"],"
  "\"readonlyPaths\":[\"/proc/bus\",\"/proc/fs\",\"/proc/irq\",\"/proc/sys\",\"/proc/sysrq-trigger\"]"
  "}}";

int
brig_spec_sandbox (bool rootless, uint32_t userns_base, oci_config **out, brig_error *err)
{
  oci_error perr = { 0 };
  uint32_t uid = userns_base, gid = userns_base, size = BRIG_SANDBOX_USERNS_SIZE;
  _cleanup_free_ char *json = NULL;
  oci_config *c;

  if (rootless)
    {
      uid = (uint32_t) getuid ();
      gid = (uint32_t) getgid ();
      size = 1;
    }
  else if ((uint64_t) userns_base + size > UINT64_C (0x80000000) || userns_base == 0)
    return brig_error_set (err, 0, "spec: --userns-base %u: the range of %u ids must lie within 1..2147483647",
                           userns_base, size);
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
  /* One id (rootless) maps no gid 5 (tty) for devpts. */
  json = xasprintf (sandbox_config, size > 5 ? ",\"gid=5\"" : "", uid, size, gid, size,
                    (long long) BRIG_SANDBOX_MEMORY, (long long) BRIG_SANDBOX_MEMORY,
                    BRIG_SANDBOX_PIDS, (unsigned long long) BRIG_SANDBOX_CPU_PERIOD,
                    (unsigned long long) BRIG_SANDBOX_CPU_PERIOD);
#pragma GCC diagnostic pop
  c = oci_config_parse_data (json, strlen (json), "sandbox config", &perr);
  if (c == NULL)
    {
      brig_error_set (err, 0, "%s", perr.msg ? perr.msg : "sandbox config");
      free (perr.msg);
      return -EINVAL;
    }
  c->linux->seccomp = brig_seccomp_default_profile ();
  /* Each container its own host ids (sandbox/userns_auto.h); the mapping
   * above says how the image's files are owned. */
  if (!rootless)
    oci_map_set (&c->annotations, BRIG_USERNS_KEY, "auto");
  if (rootless)
    {
      /* An unprivileged user cannot set cgroup limits without a delegated
       * cgroup, and brig refuses limits it cannot apply: leave them out, so
       * that `brig check` says they are missing rather than the config
       * claiming them. */
      oci_free (&oci_resources_type, c->linux->resources);
      c->linux->resources = NULL;
      /* No cgroup v2 directory for the egress programs either: "none",
       * which the config's own empty network namespace holds, is the
       * egress policy an unprivileged user can have enforced. */
      oci_map_set (&c->annotations, "run.brig.egress", "none");
    }
  *out = c;
  return 0;
}
