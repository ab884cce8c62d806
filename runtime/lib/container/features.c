#include <errno.h>
#include <fcntl.h>
#include <seccomp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "process/caps.h"
#include "cgroup/cgroup.h"
#include "container/features.h"
#include "process/groups.h"
#include "process/reaper.h"
#include "seccomp/seccomp.h"
#include "rootfs/mounts.h"
#include "utils.h"

static char **
strv_new (const char *const *items, size_t n, size_t *len)
{
  char **v = xmalloc0 ((n + 1) * sizeof *v);
  for (size_t i = 0; i < n; i++)
    v[i] = xstrdup (items[i]);
  *len = n;
  return v;
}

static oci_feat_enabled *
enabled (bool on)
{
  oci_feat_enabled *e = xmalloc0 (sizeof *e);
  e->enabled = on;
  e->has_enabled = true;
  return e;
}

static bool
file_has_word (const char *path, const char *word)
{
  _cleanup_free_ char *buf = NULL;
  if (brig_read_file_at (AT_FDCWD, path, &buf, NULL, NULL) < 0)
    return false;
  return strstr (buf, word) != NULL;
}

int
brig_features_build (oci_features **out, brig_error *err)
{
  static const char *const hooks[] = {
    "prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop",
  };
  static const char *const namespaces[] = {
    "cgroup", "ipc", "mount", "network", "pid", "time", "user", "uts",
  };
  oci_features *f = xmalloc0 (sizeof *f);
  oci_feat_linux *l = xmalloc0 (sizeof *l);
  char lsver[64];
  const struct scmp_version *sv = seccomp_version ();

  (void) err;
  f->oci_version_min = xstrdup ("1.0.0");
  f->oci_version_max = xstrdup ("1.3.0");
  f->hooks = strv_new (hooks, BRIG_ARRAY_SIZE (hooks), &f->hooks_len);
  f->mount_options = brig_mount_option_names (&f->mount_options_len);
  snprintf (lsver, sizeof lsver, "%u.%u.%u", sv->major, sv->minor, sv->micro);
  oci_map_set (&f->annotations, "io.github.seccomp.libseccomp.version", lsver);
  oci_map_set (&f->annotations, "org.brig.version", PACKAGE_VERSION);
  /* brig's own pid 1 (process/reaper.h) */
  oci_map_set (&f->annotations, BRIG_INIT_KEY, "true|false|hold");
  {
    /* brig's own config annotations that loosen a boundary (spec: listed
     * here so engines can keep them from untrusted users) */
    static const char *const unsafe[] = { BRIG_CGROUP_SHARED_ANNOTATION,
                                          BRIG_KEEP_GROUPS_ANNOTATION };
    f->potentially_unsafe_config_annotations
      = strv_new (unsafe, BRIG_ARRAY_SIZE (unsafe),
                  &f->potentially_unsafe_config_annotations_len);
  }

  l->namespaces = strv_new (namespaces, BRIG_ARRAY_SIZE (namespaces), &l->namespaces_len);
  l->capabilities = brig_caps_known (&l->capabilities_len);
  l->cgroup = xmalloc0 (sizeof *l->cgroup);
  l->cgroup->v1 = l->cgroup->has_v1 = true;
  l->cgroup->v2 = l->cgroup->has_v2 = true;
#ifdef HAVE_SYSTEMD
  l->cgroup->systemd = true;
#endif
  l->cgroup->has_systemd = true;
  l->cgroup->has_systemd_user = true;
  l->cgroup->rdma = l->cgroup->has_rdma = true;
  l->seccomp = xmalloc0 (sizeof *l->seccomp);
  brig_seccomp_features (l->seccomp);
  l->apparmor = enabled (file_has_word ("/sys/kernel/security/lsm", "apparmor"));
  l->selinux = enabled (file_has_word ("/sys/kernel/security/lsm", "selinux"));
  l->intel_rdt = xmalloc0 (sizeof *l->intel_rdt);
  l->intel_rdt->has_enabled = true;
  l->mount_extensions = xmalloc0 (sizeof *l->mount_extensions);
  l->mount_extensions->idmap = enabled (true);
  l->net_devices = enabled (true);
  f->linux = l;
  *out = f;
  return 0;
}
