/* The rules of `brig check`. Each reads the parsed config only (bind-mount
 * sources are also resolved with realpath(3), so a symlink on the host does
 * not hide a sensitive directory). Sources: CIS Docker Benchmark v1.6.0
 * section 5 ("CIS 5.n"), Kubernetes Pod Security Standards ("PSS"), NIST SP
 * 800-190 section 4.4 ("NIST 4.4.n"), brig issue #12 (egress). The groups
 * run.oci.keep_original_groups keeps are the checking process's own. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "process/groups.h"
#include "rootfs/mounts.h"
#include "sandbox/check_internal.h"
#include "sandbox/ephemeral.h"
#include "sandbox/pod.h"
#include "utils.h"

#define ADD(rep, r, sev, path, ...) \
  check_add ((rep), &brig_check_rules[r], (sev), (path), __VA_ARGS__)
#define RULE_SEV(r) (brig_check_rules[r].severity)

static bool
strv_has (char *const *v, size_t n, const char *s)
{
  for (size_t i = 0; i < n; i++)
    if (v[i] && strcmp (v[i], s) == 0)
      return true;
  return false;
}

/* ---- capabilities ---- */

/* Docker's default set, which PSS baseline allows (without the CAP_). */
static const char *const baseline_caps[] = {
  "AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
  "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT", NULL,
};

/* "cap_sys_admin", "CAP_SYS_ADMIN", "sys_admin" -> "SYS_ADMIN" in buf. */
static const char *
cap_norm (const char *c, char *buf, size_t size)
{
  size_t i;
  if (strncasecmp (c, "CAP_", 4) == 0)
    c += 4;
  for (i = 0; c[i] && i + 1 < size; i++)
    buf[i] = (c[i] >= 'a' && c[i] <= 'z') ? (char) (c[i] - 'a' + 'A') : c[i];
  buf[i] = '\0';
  return buf;
}

static void
rule_caps (const oci_process *p, struct brig_check_report *rep)
{
  const oci_capabilities *c = p->capabilities;
  if (c == NULL)
    return;
  struct { const char *name; char **v; size_t n; } sets[] = {
    { "bounding", c->bounding, c->bounding_len },
    { "effective", c->effective, c->effective_len },
    { "permitted", c->permitted, c->permitted_len },
    { "inheritable", c->inheritable, c->inheritable_len },
    { "ambient", c->ambient, c->ambient_len },
  };
  char seen[64][32];
  size_t nseen = 0;

  for (size_t s = 0; s < sizeof sets / sizeof sets[0]; s++)
    for (size_t i = 0; i < sets[s].n; i++)
      {
        char name[32];
        bool dup = false, allowed = false;
        cap_norm (sets[s].v[i], name, sizeof name);
        for (size_t k = 0; k < nseen && !dup; k++)
          dup = strcmp (seen[k], name) == 0;
        if (dup)
          continue;
        if (nseen < 64)
          strcpy (seen[nseen++], name);
        for (size_t k = 0; baseline_caps[k] && !allowed; k++)
          allowed = strcmp (baseline_caps[k], name) == 0;
        /* One finding per capability, from the strictest rule it breaks. */
        if (!allowed)
          ADD (rep, R_CAP_ADDED, RULE_SEV (R_CAP_ADDED),
               xasprintf ("process.capabilities.%s[%zu]", sets[s].name, i),
               "CAP_%s is outside the default set", name);
        else if (strcmp (name, "NET_BIND_SERVICE") != 0)
          ADD (rep, R_CAP_NOT_DROPPED, RULE_SEV (R_CAP_NOT_DROPPED),
               xasprintf ("process.capabilities.%s[%zu]", sets[s].name, i),
               "CAP_%s is kept", name);
        else
          ADD (rep, R_CAP_ANY, RULE_SEV (R_CAP_ANY),
               xasprintf ("process.capabilities.%s[%zu]", sets[s].name, i),
               "CAP_%s is kept", name);
      }
}

/* ---- namespaces and ids ---- */

static const oci_namespace *
find_ns (const oci_linux *l, const char *type, size_t *idx)
{
  for (size_t i = 0; l && i < l->namespaces_len; i++)
    if (l->namespaces[i].type && strcmp (l->namespaces[i].type, type) == 0)
      {
        *idx = i;
        return &l->namespaces[i];
      }
  return NULL;
}

/* A namespace entry with a path, judged by what it opens (check_judge.c):
 * the host's is a finding of rule, one that could not be judged a
 * not-checked finding of rule's severity. True when either was added. */
static bool
rule_ns_path (const oci_namespace *ns, size_t idx, int rule, struct brig_check_report *rep)
{
  char why[512];

  if (ns->path == NULL || *ns->path == '\0')
    return false;
  switch (check_ns_judge (ns, rep->in, why, sizeof why))
    {
    case CHECK_NS_HOST:
      ADD (rep, rule, RULE_SEV (rule), xasprintf ("linux.namespaces[%zu].path", idx),
           "%s joins the host's %s namespace (%s)", ns->path, ns->type, why);
      return true;
    case CHECK_NS_UNCHECKED:
      /* as grave as what it may be; only where that rule applies */
      if (brig_check_rules[rule].profile <= rep->profile)
        ADD (rep, R_NOT_CHECKED, RULE_SEV (rule), xasprintf ("linux.namespaces[%zu].path", idx),
             "%s", why);
      return true;
    default:
      return false;
    }
}

static void
rule_namespaces (const oci_linux *l, struct brig_check_report *rep)
{
  static const struct { const char *type; int rule; } want[] = {
    { "mount", R_NS_MOUNT }, { "pid", R_NS_PID }, { "network", R_NS_NETWORK },
    { "ipc", R_NS_IPC }, { "uts", R_NS_UTS }, { "cgroup", R_NS_CGROUP },
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    {
      size_t idx = 0;
      const oci_namespace *ns = find_ns (l, want[i].type, &idx);
      if (ns == NULL)
        ADD (rep, want[i].rule, RULE_SEV (want[i].rule), xstrdup ("linux.namespaces"),
             "no %s namespace: the host's is shared", want[i].type);
      else
        rule_ns_path (ns, idx, want[i].rule, rep);
    }
}

/* The host id that container id maps to; false when unmapped. */
static bool
map_id (const oci_id_mapping *m, size_t n, uint32_t id, uint32_t *host)
{
  for (size_t i = 0; i < n; i++)
    if (id >= m[i].container_id && (uint64_t) id < (uint64_t) m[i].container_id + m[i].size)
      {
        *host = m[i].host_id + (id - m[i].container_id);
        return true;
      }
  return false;
}

static void
rule_userns (const oci_linux *l, struct brig_check_report *rep)
{
  size_t idx = 0;
  const oci_namespace *ns = find_ns (l, "user", &idx);
  if (ns == NULL)
    {
      ADD (rep, R_NO_USERNS, RULE_SEV (R_NO_USERNS), xstrdup ("linux.namespaces"),
           "no user namespace: root in the container is root on the host");
      return;
    }
  if (rule_ns_path (ns, idx, R_NO_USERNS, rep))
    return;
  struct { const char *name; const oci_id_mapping *m; size_t n; } maps[] = {
    { "uidMappings", l->uid_mappings, l->uid_mappings_len },
    { "gidMappings", l->gid_mappings, l->gid_mappings_len },
  };
  for (size_t k = 0; k < 2; k++)
    for (size_t i = 0; i < maps[k].n; i++)
      if (maps[k].m[i].host_id == 0
          || (uint64_t) maps[k].m[i].host_id + maps[k].m[i].size > UINT64_C (0x100000000))
        ADD (rep, R_NO_USERNS, RULE_SEV (R_NO_USERNS), xasprintf ("linux.%s[%zu]", maps[k].name, i),
             "maps host id 0 into the container");
}

static void
rule_root_user (const oci_config *cfg, struct brig_check_report *rep)
{
  const oci_process *p = cfg->process;
  const oci_linux *l = cfg->linux;
  size_t idx;
  bool userns = find_ns (l, "user", &idx) != NULL;
  uint32_t uid = p->user && p->user->has_uid ? p->user->uid : 0;
  uint32_t gid = p->user && p->user->has_gid ? p->user->gid : 0;
  uint32_t h;

  /* Root inside a user namespace whose range excludes host 0 is not host
   * root (as PSS relaxes runAsNonRoot for user-namespaced pods). */
  if (userns ? map_id (l->uid_mappings, l->uid_mappings_len, uid, &h) && h == 0 : uid == 0)
    ADD (rep, R_ROOT_USER, RULE_SEV (R_ROOT_USER), xstrdup ("process.user.uid"),
         "runs as uid %u, which is host root", uid);
  if (userns ? map_id (l->gid_mappings, l->gid_mappings_len, gid, &h) && h == 0 : gid == 0)
    ADD (rep, R_ROOT_USER, RULE_SEV (R_ROOT_USER), xstrdup ("process.user.gid"),
         "runs as gid %u, which is host gid 0", gid);
  for (size_t i = 0; p->user && i < p->user->additional_gids_len; i++)
    {
      uint32_t g = p->user->additional_gids[i];
      if (userns ? map_id (l->gid_mappings, l->gid_mappings_len, g, &h) && h == 0 : g == 0)
        ADD (rep, R_ROOT_USER, RULE_SEV (R_ROOT_USER),
             xasprintf ("process.user.additionalGids[%zu]", i), "has group %u, host gid 0", g);
    }
  /* The groups it keeps are those of the brig that makes it: ours here
   * (at create, exactly the ones kept; create refuses an unmapped one). */
  bool keep = false;
  if (brig_keep_groups_parse (cfg->annotations, &keep, NULL) == 0 && keep)
    {
      int n = getgroups (0, NULL);
      _cleanup_free_ gid_t *own = xmalloc0 (((size_t) (n > 0 ? n : 0) + 1) * sizeof *own);
      n = n > 0 ? getgroups (n, own) : 0;
      for (int i = 0; i < n; i++)
        if (own[i] == 0)
          ADD (rep, R_ROOT_USER, RULE_SEV (R_ROOT_USER),
               xstrdup ("annotations[\"" BRIG_KEEP_GROUPS_ANNOTATION "\"]"),
               "keeps the caller's groups, among them host gid 0");
    }
}

/* ---- seccomp, no_new_privs, LSMs ---- */

static bool
action_allows (const char *a)
{
  /* TRACE: a process of the container can trace its child and let it
   * run every such call. */
  return a && (strcmp (a, "SCMP_ACT_ALLOW") == 0 || strcmp (a, "SCMP_ACT_LOG") == 0
               || strcmp (a, "SCMP_ACT_TRACE") == 0);
}

static void
rule_seccomp (const oci_linux *l, struct brig_check_report *rep)
{
  const oci_seccomp *s = l ? l->seccomp : NULL;
  bool blocks = false;

  if (s == NULL)
    {
      ADD (rep, R_SECCOMP_UNCONFINED, RULE_SEV (R_SECCOMP_UNCONFINED), xstrdup ("linux.seccomp"),
           "no seccomp profile");
      return;
    }
  if (!action_allows (s->default_action))
    return;
  for (size_t i = 0; i < s->syscalls_len && !blocks; i++)
    blocks = !action_allows (s->syscalls[i].action);
  if (!blocks)
    ADD (rep, R_SECCOMP_UNCONFINED, RULE_SEV (R_SECCOMP_UNCONFINED),
         xstrdup ("linux.seccomp.defaultAction"), "%s with no rule that blocks", s->default_action);
  else
    ADD (rep, R_SECCOMP_DENYLIST, RULE_SEV (R_SECCOMP_DENYLIST),
         xstrdup ("linux.seccomp.defaultAction"), "%s: a denylist", s->default_action);
}

/* A default that only looks like a deny or an audit (its own rule, so
 * that it counts under baseline, where a denylist does not). */
static void
rule_seccomp_default (const oci_linux *l, struct brig_check_report *rep)
{
  const oci_seccomp *s = l ? l->seccomp : NULL;
  const char *a = s ? s->default_action : NULL;

  if (a == NULL)
    return;
  if (strcmp (a, "SCMP_ACT_LOG") == 0)
    ADD (rep, R_SECCOMP_DEFAULT_PERMITS, RULE_SEV (R_SECCOMP_DEFAULT_PERMITS),
         xstrdup ("linux.seccomp.defaultAction"), "SCMP_ACT_LOG runs every unlisted call");
  else if (strcmp (a, "SCMP_ACT_TRACE") == 0)
    ADD (rep, R_SECCOMP_DEFAULT_PERMITS, RULE_SEV (R_SECCOMP_DEFAULT_PERMITS),
         xstrdup ("linux.seccomp.defaultAction"),
         "SCMP_ACT_TRACE runs every unlisted call under a tracer the container can be");
  else if (strcmp (a, "SCMP_ACT_ERRNO") == 0 && s->has_default_errno_ret
           && s->default_errno_ret == 0)
    ADD (rep, R_SECCOMP_DEFAULT_PERMITS, RULE_SEV (R_SECCOMP_DEFAULT_PERMITS),
         xstrdup ("linux.seccomp.defaultErrnoRet"),
         "%s with defaultErrnoRet 0: every unlisted call reports success", a);
}

static void
rule_process_flags (const oci_process *p, struct brig_check_report *rep)
{
  if (!(p->has_no_new_privileges && p->no_new_privileges))
    ADD (rep, R_NO_NEW_PRIVS, RULE_SEV (R_NO_NEW_PRIVS), xstrdup ("process.noNewPrivileges"),
         "is not true");
  if (p->apparmor_profile && strcmp (p->apparmor_profile, "unconfined") == 0)
    ADD (rep, R_LSM_UNCONFINED, RULE_SEV (R_LSM_UNCONFINED), xstrdup ("process.apparmorProfile"),
         "is unconfined");
  if (p->selinux_label && (strstr (p->selinux_label, ":spc_t") || strstr (p->selinux_label, ":unconfined_t")))
    ADD (rep, R_LSM_UNCONFINED, RULE_SEV (R_LSM_UNCONFINED), xstrdup ("process.selinuxLabel"),
         "%s is an unconfined type", p->selinux_label);
}

/* ---- mounts ---- */

/* Host paths a container must never see. tree: also anything below it
 * (else only the path itself and its parents, as the engines keep each
 * container's own files below /var/lib/docker, /var/lib/kubelet, ...).
 * sock: reaching it at all is control of the host, even read-only (an
 * engine's socket; /var/lib/kubelet/pods, every pod's secrets). */
static const struct { const char *path; bool tree; bool sock; } sensitive[] = {
  { "/", false, false }, { "/proc", true, false }, { "/sys", true, false },
  { "/dev", true, false }, { "/etc", true, false }, { "/boot", true, false },
  { "/root", true, false }, { "/lib/modules", true, false }, { "/usr", false, false },
  { "/lib", false, false }, { "/lib64", false, false }, { "/bin", false, false },
  { "/sbin", false, false }, { "/home", false, false }, { "/var", false, false },
  { "/var/lib", false, false }, { "/var/log", false, false },
  { "/var/lib/docker", false, false }, { "/var/lib/containerd", false, false },
  { "/var/lib/containers", false, false }, { "/var/lib/kubelet", false, false },
  { "/var/lib/kubelet/pki", true, false }, { "/var/lib/kubelet/pods", false, true },
  { "/run", false, false },
  { "/run/docker.sock", true, true }, { "/run/docker", true, true },
  { "/run/containerd", true, true }, { "/run/podman", true, true },
  { "/run/crio", true, true }, { "/run/buildkit", true, true }, { "/run/k3s", true, true },
  { "/run/dbus", true, true }, { "/run/systemd", true, true }, { "/run/user", true, true },
};

static bool
is_under (const char *p, const char *dir)
{
  size_t n = strlen (dir);
  if (strcmp (dir, "/") == 0)
    return p[0] == '/' && p[1] != '\0';
  return strncmp (p, dir, n) == 0 && p[n] == '/';
}

/* The worse of two sensitive entries (-1: none): one that is critical
 * even read-only wins. */
static int
sensitive_worse (int a, int b)
{
  if (a < 0 || (b >= 0 && sensitive[b].sock && !sensitive[a].sock))
    return b;
  return a;
}

/* The worst sensitive entry src touches (is, holds, or lies in a tree), or
 * -1: a bind of /var/lib also holds /var/lib/kubelet/pods. */
static int
sensitive_match (const char *src)
{
  int found = -1;
  for (size_t i = 0; i < sizeof sensitive / sizeof sensitive[0]; i++)
    if (strcmp (src, sensitive[i].path) == 0 || is_under (sensitive[i].path, src)
        || (sensitive[i].tree && is_under (src, sensitive[i].path)))
      found = sensitive_worse (found, (int) i);
  return found;
}

static void
rule_mounts (const oci_config *cfg, struct brig_check_report *rep)
{
  for (size_t i = 0; i < cfg->mounts_len; i++)
    {
      const oci_mount *m = &cfg->mounts[i];
      bool ro = strv_has (m->options, m->options_len, "ro");
      char norm[PATH_MAX], real[PATH_MAX], rnorm[PATH_MAX];
      _cleanup_free_ char *src = NULL;
      int s = -1, t;

      if (strv_has (m->options, m->options_len, "shared")
          || strv_has (m->options, m->options_len, "rshared"))
        ADD (rep, R_PROPAGATION_SHARED, RULE_SEV (R_PROPAGATION_SHARED),
             xasprintf ("mounts[%zu].options", i), "%s is mounted shared", m->destination);
      if (m->type && !ro && (strcmp (m->type, "sysfs") == 0 || strcmp (m->type, "cgroup") == 0
                             || strcmp (m->type, "cgroup2") == 0))
        ADD (rep, R_KERNEL_FS_WRITABLE, RULE_SEV (R_KERNEL_FS_WRITABLE),
             xasprintf ("mounts[%zu].options", i), "%s (%s) is writable", m->destination, m->type);
      if (!check_mount_is_bind (m) || m->source == NULL || m->source[0] == '\0')
        continue;
      /* A relative source is the bundle's: "../../etc" is a host path too. */
      src = check_source_path (rep, m->source);
      check_path_norm (src, norm, sizeof norm);
      s = sensitive_match (norm);
      /* Also judge where host symlinks (and ".." after one) lead, as the
       * mount will follow them; the worse of the two readings counts. */
      if (src[0] == '/' && check_resolve_path (src, real, sizeof real) == 0)
        {
          check_path_norm (real, rnorm, sizeof rnorm);
          t = sensitive_match (rnorm);
          if (t >= 0 && sensitive_worse (s, t) == t && t != s)
            {
              s = t;
              strcpy (norm, rnorm);
            }
        }
      if (s >= 0)
        ADD (rep, R_SENSITIVE_MOUNT,
             ro && !sensitive[s].sock ? BRIG_SEV_HIGH : BRIG_SEV_CRITICAL,
             xasprintf ("mounts[%zu].source", i), "host %s (%s) is bound at %s%s", norm,
             sensitive[s].path, m->destination, ro ? " read-only" : " writable");
      else if (!ro)
        ADD (rep, R_HOST_BIND_WRITABLE, RULE_SEV (R_HOST_BIND_WRITABLE),
             xasprintf ("mounts[%zu].options", i), "host %s is bound writable at %s", m->source,
             m->destination);
    }
  if (cfg->linux && cfg->linux->rootfs_propagation
      && strstr (cfg->linux->rootfs_propagation, "shared") != NULL)
    ADD (rep, R_PROPAGATION_SHARED, RULE_SEV (R_PROPAGATION_SHARED),
         xstrdup ("linux.rootfsPropagation"), "is %s", cfg->linux->rootfs_propagation);
}

/* ---- devices, /proc, sysctls ---- */

static void
rule_devices (const oci_linux *l, struct brig_check_report *rep)
{
  static const char *const std[] = {
    "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", NULL,
  };
  const oci_resources *res = l->resources;
  for (size_t i = 0; res && i < res->devices_len; i++)
    {
      const oci_device_cgroup *d = &res->devices[i];
      /* As the cgroup reads them: no type or "" is "a", "u" is "c". */
      const char *t = d->type && *d->type ? d->type : "a";
      bool any_major = !d->has_major || d->major < 0;
      const char *what = strcmp (t, "a") == 0 ? "device"
                         : strcmp (t, "b") == 0 ? "block device"
                         : strcmp (t, "c") == 0 || strcmp (t, "u") == 0 ? "character device" : NULL;
      /* Every major is every disk (b), or /dev/mem, /dev/port and every
       * tty (c), whatever the minor says: b *:0 is sda, c *:1 /dev/mem. */
      if (d->allow && what && any_major)
        ADD (rep, R_DEVICES_ALL, RULE_SEV (R_DEVICES_ALL),
             xasprintf ("linux.resources.devices[%zu]", i), "allows every %s", what);
    }
  for (size_t i = 0; i < l->devices_len; i++)
    {
      bool ok = false;
      for (size_t k = 0; std[k] && !ok; k++)
        ok = l->devices[i].path && strcmp (l->devices[i].path, std[k]) == 0;
      if (!ok)
        ADD (rep, R_HOST_DEVICE, RULE_SEV (R_HOST_DEVICE), xasprintf ("linux.devices[%zu]", i),
             "%s is created in the container", l->devices[i].path ? l->devices[i].path : "?");
    }
}

static void
rule_proc_masks (const oci_config *cfg, struct brig_check_report *rep)
{
  static const char *const masked[] = { "/proc/kcore", "/proc/keys", "/proc/timer_list", NULL };
  static const char *const ro[] = { "/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", NULL };
  const oci_linux *l = cfg->linux;
  char **mv = l ? l->masked_paths : NULL, **rv = l ? l->readonly_paths : NULL;
  size_t mn = l ? l->masked_paths_len : 0, rn = l ? l->readonly_paths_len : 0;

  if (brig_config_mounts_type (cfg, "proc"))
    {
      for (size_t i = 0; masked[i]; i++)
        if (!strv_has (mv, mn, masked[i]))
          ADD (rep, R_PROC_UNMASKED, RULE_SEV (R_PROC_UNMASKED), xstrdup ("linux.maskedPaths"),
               "%s is not masked", masked[i]);
      for (size_t i = 0; ro[i]; i++)
        if (!strv_has (mv, mn, ro[i]) && !strv_has (rv, rn, ro[i]))
          ADD (rep, R_PROC_UNMASKED, RULE_SEV (R_PROC_UNMASKED), xstrdup ("linux.readonlyPaths"),
               "%s is neither masked nor read-only", ro[i]);
    }
  if (brig_config_mounts_type (cfg, "sysfs") && !strv_has (mv, mn, "/sys/firmware"))
    ADD (rep, R_PROC_UNMASKED, RULE_SEV (R_PROC_UNMASKED), xstrdup ("linux.maskedPaths"),
         "/sys/firmware is not masked");
}

static void
rule_sysctl (const oci_linux *l, struct brig_check_report *rep)
{
  static const char *const safe[] = {
    "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.ip_unprivileged_port_start", "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range",
    "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes", NULL,
  };
  for (size_t i = 0; l->sysctl && i < l->sysctl->len; i++)
    {
      char key[256];
      bool ok = false;
      size_t k;
      /* Either separator: net/ipv4/tcp_syncookies is the same key. */
      for (k = 0; l->sysctl->keys[i][k] && k + 1 < sizeof key; k++)
        key[k] = l->sysctl->keys[i][k] == '/' ? '.' : l->sysctl->keys[i][k];
      key[k] = '\0';
      for (k = 0; safe[k] && !ok; k++)
        ok = strcmp (key, safe[k]) == 0;
      if (!ok)
        ADD (rep, R_SYSCTL_UNSAFE, RULE_SEV (R_SYSCTL_UNSAFE),
             xasprintf ("linux.sysctl[\"%s\"]", l->sysctl->keys[i]), "is not in the safe set");
    }
}

/* ---- root, limits, egress ---- */

static bool
ephemeral_on (const oci_config *cfg)
{
  const char *v = oci_map_get (cfg->annotations, BRIG_EPHEMERAL_KEY);
  /* A CRI pause container's layer is never made (pod.h): judge what runs. */
  return v && strcmp (v, "true") == 0 && !brig_pod_sandbox_container (cfg->annotations);
}

static void
rule_limits (const oci_config *cfg, struct brig_check_report *rep)
{
  const oci_resources *r = cfg->linux ? cfg->linux->resources : NULL;
  const oci_cpu *cpu = r ? r->cpu : NULL;

  /* An ephemeral rootfs (sandbox/ephemeral.h) is writable but never
   * writes the image: what the rule guards against cannot happen. */
  if (!(cfg->root && cfg->root->has_readonly && cfg->root->readonly)
      && !ephemeral_on (cfg))
    ADD (rep, R_ROOTFS_WRITABLE, RULE_SEV (R_ROOTFS_WRITABLE), xstrdup ("root.readonly"),
         "the root filesystem is writable");
  if (!(r && r->memory && r->memory->has_limit && r->memory->limit > 0))
    ADD (rep, R_NO_MEMORY_LIMIT, RULE_SEV (R_NO_MEMORY_LIMIT),
         xstrdup ("linux.resources.memory.limit"), "no memory limit");
  if (!(r && r->pids && r->pids->has_limit && r->pids->limit > 0))
    ADD (rep, R_NO_PIDS_LIMIT, RULE_SEV (R_NO_PIDS_LIMIT), xstrdup ("linux.resources.pids.limit"),
         "no pids limit");
  if (!(cpu && ((cpu->has_quota && cpu->quota > 0) || (cpu->has_shares && cpu->shares > 0))))
    ADD (rep, R_NO_CPU_LIMIT, RULE_SEV (R_NO_CPU_LIMIT), xstrdup ("linux.resources.cpu"),
         "no CPU quota or shares");
}

static void
rule_egress (const oci_config *cfg, struct brig_check_report *rep)
{
  size_t idx;
  const char *v = oci_map_get (cfg->annotations, "run.brig.egress");

  /* No network namespace at all is host-ns-network's finding. */
  if (find_ns (cfg->linux, "network", &idx) == NULL)
    return;
  /* A CRI pause container gets no policy even when annotated (pod.h), so
   * the mark must not earn the annotation's credit with a node policy. */
  if (v && *v && brig_pod_sandbox_container (cfg->annotations))
    ADD (rep, R_EGRESS_UNSET, RULE_SEV (R_EGRESS_UNSET), xstrdup ("annotations[\"run.brig.egress\"]"),
         "not applied to a CRI pod sandbox (pause) container");
  else if (v == NULL || *v == '\0')
    ADD (rep, R_EGRESS_UNSET, RULE_SEV (R_EGRESS_UNSET), xstrdup ("annotations[\"run.brig.egress\"]"),
         "a network namespace with no egress policy");
  else if (strcmp (v, "none") != 0 && strcmp (v, "public") != 0 && strcmp (v, "allowlist") != 0)
    ADD (rep, R_EGRESS_UNSET, RULE_SEV (R_EGRESS_UNSET), xstrdup ("annotations[\"run.brig.egress\"]"),
         "\"%s\" is not none, public or allowlist", v);
}

/* Whether id lies in the host side of one of the mappings. */
static bool
id_mapped (const oci_id_mapping *m, size_t n, uint32_t id)
{
  for (size_t i = 0; i < n; i++)
    if (id >= m[i].host_id && (uint64_t) id < (uint64_t) m[i].host_id + m[i].size)
      return true;
  return false;
}

/* A writable root in a new user namespace whose owner (as the bundle's
 * root.path shows it, when the report has the bundle) the mapping does not
 * cover, and no ephemeral layer to idmap it: container root cannot write
 * it. Only what stat shows is judged; nothing is said of a root not seen. */
static void
rule_rootfs_owner (const oci_config *cfg, struct brig_check_report *rep)
{
  const oci_linux *l = cfg->linux;
  const char *eph = oci_map_get (cfg->annotations, BRIG_EPHEMERAL_KEY);
  size_t idx;
  const oci_namespace *ns = find_ns (l, "user", &idx);
  _cleanup_free_ char *path = NULL;
  struct stat st;

  if (l == NULL || ns == NULL || (ns->path && *ns->path) || l->uid_mappings_len == 0 || cfg->root == NULL
      || cfg->root->readonly || (eph && strcmp (eph, "true") == 0))
    return;
  if (cfg->root->path && cfg->root->path[0] == '/')
    path = xstrdup (cfg->root->path);
  else if (rep->bundle)
    path = xasprintf ("%s/%s", rep->bundle, cfg->root->path ? cfg->root->path : "rootfs");
  if (path == NULL || stat (path, &st) < 0)
    return;
  if (!id_mapped (l->uid_mappings, l->uid_mappings_len, st.st_uid))
    ADD (rep, R_ROOTFS_OWNER_UNMAPPED, RULE_SEV (R_ROOTFS_OWNER_UNMAPPED), xstrdup ("root.path"),
         "the rootfs is owned by host uid %u, which the user namespace does not map: container "
         "root cannot write it (Permission denied)", (unsigned) st.st_uid);
}

void
check_run_rules (const oci_config *cfg, struct brig_check_report *rep)
{
  static const oci_linux empty_linux;
  const oci_linux *l = cfg->linux ? cfg->linux : &empty_linux;

  if (cfg->process)
    rule_caps (cfg->process, rep);
  rule_namespaces (l, rep);
  rule_userns (l, rep);
  if (cfg->process)
    {
      rule_root_user (cfg, rep);
      rule_process_flags (cfg->process, rep);
    }
  rule_seccomp (l, rep);
  rule_seccomp_default (l, rep);
  rule_mounts (cfg, rep);
  {
    static const struct check_mount_rules mr = {
      .procfs = &brig_check_rules[R_PROCFS_MOUNT],
      .kernel_fs = &brig_check_rules[R_KERNEL_FS_MOUNT],
      .block_dev = &brig_check_rules[R_BLOCK_DEVICE_MOUNT],
    };
    check_run_mount_rules (cfg, &mr, rep);
  }
  rule_devices (l, rep);
  rule_proc_masks (cfg, rep);
  rule_sysctl (l, rep);
  rule_limits (cfg, rep);
  rule_egress (cfg, rep);
  check_rule_egress_allow (cfg, rep);
  rule_rootfs_owner (cfg, rep);
}
