#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup/cgroup.h"
#include "seccomp/seccomp.h"
#include "container/spec_default.h"
#include "utils.h"

/* Kept as JSON so the template reads like the document it produces and is
 * checked by the same parser that reads users' configs. */
static const char default_config[] =
  "{"
  "\"ociVersion\":\"1.3.0\","
  "\"process\":{"
  "\"terminal\":true,"
  "\"user\":{\"uid\":0,\"gid\":0},"
  "\"args\":[\"sh\"],"
  "\"env\":[\"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\",\"TERM=xterm\"],"
  "\"cwd\":\"/\","
  "\"capabilities\":{"
  "\"bounding\":[\"CAP_AUDIT_WRITE\",\"CAP_KILL\",\"CAP_NET_BIND_SERVICE\"],"
  "\"effective\":[\"CAP_AUDIT_WRITE\",\"CAP_KILL\",\"CAP_NET_BIND_SERVICE\"],"
  "\"permitted\":[\"CAP_AUDIT_WRITE\",\"CAP_KILL\",\"CAP_NET_BIND_SERVICE\"]},"
  "\"rlimits\":[{\"type\":\"RLIMIT_NOFILE\",\"hard\":1024,\"soft\":1024}],"
  "\"noNewPrivileges\":true},"
  "\"root\":{\"path\":\"rootfs\",\"readonly\":true},"
  "\"hostname\":\"brig\","
  "\"mounts\":["
  "{\"destination\":\"/proc\",\"type\":\"proc\",\"source\":\"proc\"},"
  "{\"destination\":\"/dev\",\"type\":\"tmpfs\",\"source\":\"tmpfs\","
  "\"options\":[\"nosuid\",\"strictatime\",\"mode=755\",\"size=65536k\"]},"
  "{\"destination\":\"/dev/pts\",\"type\":\"devpts\",\"source\":\"devpts\","
  "\"options\":[\"nosuid\",\"noexec\",\"newinstance\",\"ptmxmode=0666\",\"mode=0620\",\"gid=5\"]},"
  "{\"destination\":\"/dev/shm\",\"type\":\"tmpfs\",\"source\":\"shm\","
  "\"options\":[\"nosuid\",\"noexec\",\"nodev\",\"mode=1777\",\"size=65536k\"]},"
  "{\"destination\":\"/dev/mqueue\",\"type\":\"mqueue\",\"source\":\"mqueue\","
  "\"options\":[\"nosuid\",\"noexec\",\"nodev\"]},"
  "{\"destination\":\"/sys\",\"type\":\"sysfs\",\"source\":\"sysfs\","
  "\"options\":[\"nosuid\",\"noexec\",\"nodev\",\"ro\"]},"
  "{\"destination\":\"/sys/fs/cgroup\",\"type\":\"cgroup\",\"source\":\"cgroup\","
  "\"options\":[\"nosuid\",\"noexec\",\"nodev\",\"relatime\",\"ro\"]}"
  "],"
  "\"linux\":{"
  "\"resources\":{\"devices\":[{\"allow\":false,\"access\":\"rwm\"}]},"
  "\"namespaces\":[{\"type\":\"pid\"},{\"type\":\"network\"},{\"type\":\"ipc\"},"
  "{\"type\":\"uts\"},{\"type\":\"mount\"},{\"type\":\"cgroup\"}],"
  "\"maskedPaths\":[\"/proc/acpi\",\"/proc/asound\",\"/proc/kcore\",\"/proc/keys\","
  "\"/proc/latency_stats\",\"/proc/timer_list\",\"/proc/timer_stats\",\"/proc/sched_debug\","
  "\"/sys/firmware\",\"/proc/scsi\"],"
  "\"readonlyPaths\":[\"/proc/bus\",\"/proc/fs\",\"/proc/irq\",\"/proc/sys\",\"/proc/sysrq-trigger\"]"
  "}}";

/* Rootless variant: the caller becomes root in a new user namespace; there is
 * no network namespace to own a sysfs, so /sys is bound from the host; no
 * cgroup resources (an unprivileged user cannot set them without delegation). */
static const char rootless_sys_mount[] =
  "{\"destination\":\"/sys\",\"type\":\"none\",\"source\":\"/sys\","
  "\"options\":[\"rbind\",\"nosuid\",\"noexec\",\"nodev\",\"ro\"]}";

/* Free what an array element owns, leaving the element's storage alone. */
static void
free_mount_members (oci_mount *m)
{
  oci_mount *heap = xmalloc0 (sizeof *heap);
  *heap = *m;
  oci_free (&oci_mount_type, heap);
  memset (m, 0, sizeof *m);
}

/* Remove every namespace of type from l. */
static void
drop_namespace (oci_linux *l, const char *type)
{
  size_t n = 0;
  for (size_t i = 0; i < l->namespaces_len; i++)
    {
      oci_namespace *ns = &l->namespaces[i];
      if (strcmp (ns->type, type) == 0)
        {
          free (ns->type);
          free (ns->path);
          continue;
        }
      l->namespaces[n++] = *ns;
    }
  l->namespaces_len = n;
}

static int
make_rootless (oci_config *c, brig_error *err)
{
  oci_error perr = { 0 };
  oci_linux *l = c->linux;
  oci_mount *sysbind;
  size_t i, n = 0;

  /* Namespaces: drop network and cgroup, add user. */
  drop_namespace (l, "network");
  drop_namespace (l, "cgroup");
  n = l->namespaces_len;
  l->namespaces = xrealloc (l->namespaces, (n + 1) * sizeof *l->namespaces);
  memset (&l->namespaces[n], 0, sizeof l->namespaces[n]);
  l->namespaces[n].type = xstrdup ("user");
  l->namespaces_len = n + 1;

  l->uid_mappings = xmalloc0 (sizeof *l->uid_mappings);
  l->uid_mappings_len = 1;
  l->uid_mappings[0] = (oci_id_mapping) { .container_id = 0, .has_container_id = true,
                                          .host_id = (uint32_t) getuid (), .has_host_id = true,
                                          .size = 1, .has_size = true };
  l->gid_mappings = xmalloc0 (sizeof *l->gid_mappings);
  l->gid_mappings_len = 1;
  l->gid_mappings[0] = (oci_id_mapping) { .container_id = 0, .has_container_id = true,
                                          .host_id = (uint32_t) getgid (), .has_host_id = true,
                                          .size = 1, .has_size = true };
  oci_free (&oci_resources_type, l->resources);
  l->resources = NULL;

  /* Mounts: no gid=5 on devpts (gid 5 is not mapped), /sys bound, no cgroup. */
  sysbind = oci_parse_data (&oci_mount_type, rootless_sys_mount, sizeof rootless_sys_mount - 1,
                            "rootless /sys mount", &perr);
  if (sysbind == NULL)
    {
      brig_error_set (err, 0, "%s", perr.msg ? perr.msg : "rootless template");
      free (perr.msg);
      return -EINVAL;
    }
  for (i = 0, n = 0; i < c->mounts_len; i++)
    {
      oci_mount *m = &c->mounts[i];
      if (strcmp (m->destination, "/sys/fs/cgroup") == 0)
        {
          free_mount_members (m);
          continue;
        }
      if (strcmp (m->destination, "/sys") == 0)
        {
          free_mount_members (m);
          *m = *sysbind;
          free (sysbind);
          sysbind = NULL;
        }
      else if (strcmp (m->destination, "/dev/pts") == 0 && m->options)
        {
          size_t k = 0;
          for (size_t j = 0; j < m->options_len; j++)
            {
              if (strcmp (m->options[j], "gid=5") == 0)
                free (m->options[j]);
              else
                m->options[k++] = m->options[j];
            }
          m->options[k] = NULL;
          m->options_len = k;
        }
      c->mounts[n++] = *m;
    }
  c->mounts_len = n;
  oci_free (&oci_mount_type, sysbind);
  return 0;
}

int
brig_spec_default (const struct brig_spec_opts *opts, oci_config **out, brig_error *err)
{
  oci_error perr = { 0 };
  oci_config *c;

  c = oci_config_parse_data (default_config, sizeof default_config - 1,
                                         "default config", &perr);
  if (c == NULL)
    {
      brig_error_set (err, 0, "%s", perr.msg ? perr.msg : "default config");
      free (perr.msg);
      return -EINVAL;
    }
  if (opts->hardened)
    {
      oci_free (&oci_seccomp_type, c->linux->seccomp);
      c->linux->seccomp = brig_seccomp_default_profile ();
    }
  /* Like runc: a cgroup namespace only where the host is pure cgroup v2.
   * On v1 and hybrid hosts the container's processes then see their real
   * cgroup paths, as they do with a bundle that runc wrote. */
  if (brig_cgroup_host_mode () != BRIG_CGROUP_V2)
    drop_namespace (c->linux, "cgroup");
  if (opts->rootless && make_rootless (c, err) < 0)
    {
      oci_config_free (c);
      return -EINVAL;
    }
  *out = c;
  return 0;
}
