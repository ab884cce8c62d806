/* AppArmor and SELinux labels for the container process and its mounts.
 *
 * The labels take effect at execve: the init writes them to
 * /proc/thread-self/attr/... just before seccomp. That procfs is the
 * container's own, mounted by brig; the fd written to is checked to be on
 * procfs so a rootfs that replaced /proc cannot swallow the label
 * (CVE-2019-16884 class). When the kernel lacks the LSM a config names,
 * brig fails as runc does, but up front and saying why. */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "process/lsm.h"
#include "utils.h"

bool
brig_lsm_apparmor_enabled (void)
{
  _cleanup_free_ char *buf = NULL;

  if (brig_read_file_at (AT_FDCWD, "/sys/module/apparmor/parameters/enabled", &buf, NULL, NULL) < 0)
    return false;
  return buf[0] == 'Y';
}

bool
brig_lsm_selinux_enabled (void)
{
  struct statfs sfs;

  /* selinuxfs is mounted exactly when SELinux is enabled. */
  if (statfs ("/sys/fs/selinux", &sfs) < 0)
    return false;
  return sfs.f_type == SELINUX_MAGIC && access ("/sys/fs/selinux/enforce", F_OK) == 0;
}

int
brig_lsm_validate (const oci_config *cfg, const oci_process *proc, brig_error *err)
{
  if (proc != NULL && proc->apparmor_profile != NULL && *proc->apparmor_profile
      && !brig_lsm_apparmor_enabled ())
    return brig_error_set (err, 0, "process.apparmorProfile: \"%s\" is set but AppArmor is not "
                                   "enabled in this kernel", proc->apparmor_profile);
  if (proc != NULL && proc->selinux_label != NULL && *proc->selinux_label
      && !brig_lsm_selinux_enabled ())
    return brig_error_set (err, 0, "process.selinuxLabel: \"%s\" is set but SELinux is not "
                                   "enabled in this kernel", proc->selinux_label);
  if (cfg != NULL && cfg->linux != NULL && cfg->linux->mount_label != NULL
      && *cfg->linux->mount_label && !brig_lsm_selinux_enabled ())
    return brig_error_set (err, 0, "linux.mountLabel: \"%s\" is set but SELinux is not enabled "
                                   "in this kernel", cfg->linux->mount_label);
  return 0;
}

/* Write value to a /proc/thread-self/attr file, refusing anything that is
 * not procfs. */
static int
write_attr (const char *path, const char *value, brig_error *err)
{
  _cleanup_close_ int fd = open (path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
  struct statfs sfs;
  int r;

  if (fd < 0)
    return brig_error_errno (err, "open %s", path);
  if (fstatfs (fd, &sfs) < 0)
    return brig_error_errno (err, "statfs %s", path);
  if (sfs.f_type != PROC_SUPER_MAGIC)
    return brig_error_say (err, EPERM, "%s is not on procfs", path);
  r = brig_write_all (fd, value, strlen (value));
  if (r < 0)
    return brig_error_set (err, -r, "write %s", path);
  return 0;
}

int
brig_lsm_apply_exec_labels (const oci_process *proc, brig_error *err)
{
  int r;

  if (proc == NULL)
    return 0;
  if (proc->apparmor_profile != NULL && *proc->apparmor_profile)
    {
      _cleanup_free_ char *cmd = xasprintf ("exec %s", proc->apparmor_profile);
      /* The LSM-specific file (Linux 5.8+) works when AppArmor is not the
       * "display" LSM; older kernels only have the shared one. */
      if (access ("/proc/thread-self/attr/apparmor/exec", F_OK) == 0)
        r = write_attr ("/proc/thread-self/attr/apparmor/exec", cmd, err);
      else
        r = write_attr ("/proc/thread-self/attr/exec", cmd, err);
      if (r < 0)
        return brig_error_wrap (err, "apply AppArmor profile %s", proc->apparmor_profile);
    }
  if (proc->selinux_label != NULL && *proc->selinux_label)
    {
      r = write_attr ("/proc/thread-self/attr/exec", proc->selinux_label, err);
      if (r < 0)
        return brig_error_wrap (err, "apply SELinux label %s", proc->selinux_label);
      /* Keys the process creates get its label too; policies without
       * keyring classes refuse, which only costs key labelling. */
      brig_error kerr = { 0 };
      if (write_attr ("/proc/thread-self/attr/keycreate", proc->selinux_label, &kerr) < 0)
        brig_debug ("SELinux keycreate label: %s", kerr.msg ? kerr.msg : "failed");
      brig_error_clear (&kerr);
    }
  return 0;
}

char *
brig_lsm_mount_data (const char *data, const char *label)
{
  if (label == NULL || *label == '\0' || !brig_lsm_selinux_enabled ())
    return xstrdup (data ? data : "");
  if (data == NULL || *data == '\0')
    return xasprintf ("context=\"%s\"", label);
  return xasprintf ("%s,context=\"%s\"", data, label);
}
