/* Unit tests for the cgroup managers' pure logic: host detection from
 * mountinfo, cgroupsPath resolution, systemd names, the v1 -> v2
 * conversions, device rules and the eBPF device program (run here by a tiny
 * interpreter of the instructions brig emits). */
#include <linux/bpf.h>
#include <string.h>

#include "cgroup/internal.h"
#include "tap.h"
#include "utils.h"

static const char HYBRID[] =
  "22 1 0:21 / /sys rw,nosuid - sysfs sysfs rw\n"
  "30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
  "31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
  "34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
  "35 30 0:31 / /mnt/memory\\040again rw,relatime - cgroup cgroup rw,memory\n"
  "36 30 0:32 / /sys/fs/cgroup/cpu,cpuacct rw shared:5 - cgroup cgroup rw,cpu,cpuacct,clone_children\n"
  "39 30 0:36 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,xattr,name=systemd\n"
  "40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw,nsdelegate\n";

static const char V2[] =
  "30 22 0:27 / /sys/fs/cgroup rw,nosuid shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n";

static const char V1[] =
  "31 30 0:28 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids\n"
  "32 30 0:29 / /sys/fs/cgroup/my\\040cg rw - cgroup cgroup rw,freezer\n";

static void
test_mountinfo (void)
{
  struct brig_cgroup_host h;

  brig_cgroup_parse_mountinfo (HYBRID, &h);
  tap_ok (h.mode == BRIG_CGROUP_HYBRID, "hybrid: mode detected");
  tap_ok (h.unified && strcmp (h.unified, "/sys/fs/cgroup/unified") == 0, "hybrid: unified mountpoint");
  tap_ok (h.n_v1 == 4, "hybrid: 4 v1 hierarchies (duplicate mount skipped), got %zu", h.n_v1);
  tap_ok (h.n_v1 >= 3 && strcmp (h.v1[2].controllers, "cpu,cpuacct") == 0,
          "hybrid: mount options are not controllers");
  tap_ok (h.n_v1 >= 4 && strcmp (h.v1[3].controllers, "name=systemd") == 0, "hybrid: named hierarchy kept");
  brig_cgroup_host_clear (&h);

  brig_cgroup_parse_mountinfo (V2, &h);
  tap_ok (h.mode == BRIG_CGROUP_V2 && h.n_v1 == 0, "v2: mode detected");
  brig_cgroup_host_clear (&h);

  brig_cgroup_parse_mountinfo (V1, &h);
  tap_ok (h.mode == BRIG_CGROUP_V1 && h.unified == NULL, "v1: mode detected");
  tap_ok (h.n_v1 == 2 && strcmp (h.v1[1].mountpoint, "/sys/fs/cgroup/my cg") == 0,
          "v1: mountinfo escapes decoded");
  brig_cgroup_host_clear (&h);

  /* #16 item 7: a tmpfs over the cgroup2 mount leaves a plain v1 host. */
  {
    _cleanup_free_ char *covered = xasprintf ("%s%s", HYBRID,
      "50 40 0:60 / /sys/fs/cgroup/unified rw - tmpfs tmpfs rw\n");
    brig_cgroup_parse_mountinfo (covered, &h);
    tap_ok (h.mode == BRIG_CGROUP_V1 && h.unified == NULL,
            "covered cgroup2 mount: not used, the host is v1");
    tap_ok (h.n_v1 == 4, "covered cgroup2 mount: the v1 hierarchies stay, got %zu", h.n_v1);
    brig_cgroup_host_clear (&h);
  }
  {
    /* A tmpfs over /sys/fs/cgroup hides every hierarchy below it, but a
     * mount made after it, on top, is visible. */
    _cleanup_free_ char *covered = xasprintf ("%s%s", HYBRID,
      "51 30 0:61 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n"
      "52 51 0:37 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n");
    brig_cgroup_parse_mountinfo (covered, &h);
    tap_ok (h.mode == BRIG_CGROUP_HYBRID && h.n_v1 == 1
            && strcmp (h.v1[0].mountpoint, "/mnt/memory again") == 0,
            "tmpfs over /sys/fs/cgroup: only the mounts outside or on top stay");
    tap_ok (h.unified && strcmp (h.unified, "/sys/fs/cgroup/unified") == 0,
            "tmpfs over /sys/fs/cgroup: the cgroup2 mounted on top of it is used");
    brig_cgroup_host_clear (&h);
  }

  brig_cgroup_parse_mountinfo ("22 1 0:21 / /sys rw - sysfs sysfs rw\n", &h);
  tap_ok (h.mode == BRIG_CGROUP_NONE, "no cgroup mounts: none");
  brig_cgroup_host_clear (&h);
}

static void
test_paths (void)
{
  char *p = NULL, *own;
  brig_error err = { 0 };

  own = brig_cgroup_own_path ("9:name=systemd:/sd\n4:memory:/m/x\n0::/user.slice/u\n");
  tap_ok (own && strcmp (own, "/user.slice/u") == 0, "own cgroup: the cgroup2 line wins");
  free (own);
  own = brig_cgroup_own_path ("4:memory:/m/x\n9:name=systemd:/sd\n");
  tap_ok (own && strcmp (own, "/sd") == 0, "own cgroup: name=systemd without cgroup2");
  free (own);

  tap_ok (brig_cgroup_resolve_path (NULL, "/x", "c1", &p, &err) == 0 && strcmp (p, "/brig/c1") == 0,
          "empty cgroupsPath: /brig/ID");
  free (p);
  tap_ok (brig_cgroup_resolve_path ("/a//b/./c/", "/x", "c1", &p, &err) == 0
          && strcmp (p, "/a/b/c") == 0, "absolute path normalised");
  free (p);
  tap_ok (brig_cgroup_resolve_path ("a/b", "/user.slice", "c1", &p, &err) == 0
          && strcmp (p, "/user.slice/a/b") == 0, "relative path below the runtime's cgroup");
  free (p);
  tap_ok (brig_cgroup_resolve_path ("a/b", "/", "c1", &p, &err) == 0 && strcmp (p, "/a/b") == 0,
          "relative path from the root cgroup");
  free (p);
  tap_ok (brig_cgroup_resolve_path ("/a/../../etc", "/", "c1", &p, &err) < 0
          && strstr (err.msg, "\"..\""), "\"..\" refused: %s", err.msg);
  brig_error_clear (&err);
  tap_ok (brig_cgroup_resolve_path ("/", "/", "c1", &p, &err) < 0, "root cgroup refused");
  brig_error_clear (&err);
}

static void
test_systemd_names (void)
{
  char *slice = NULL, *unit = NULL, *path = NULL;
  brig_error err = { 0 };

  tap_ok (brig_cgroup_systemd_names ("system.slice:brig:c1", "c1", &slice, &unit, &path, &err) == 0
          && strcmp (slice, "system.slice") == 0 && strcmp (unit, "brig-c1.scope") == 0
          && strcmp (path, "/system.slice/brig-c1.scope") == 0,
          "slice:prefix:name -> scope in slice");
  free (slice), free (unit), free (path);
  tap_ok (brig_cgroup_systemd_names ("machine-a-b.slice::x", "c1", &slice, &unit, &path, &err) == 0
          && strcmp (unit, "x.scope") == 0
          && strcmp (path, "/machine.slice/machine-a.slice/machine-a-b.slice/x.scope") == 0,
          "nested slice expanded, empty prefix");
  free (slice), free (unit), free (path);
  tap_ok (brig_cgroup_systemd_names (NULL, "c1", &slice, &unit, &path, &err) == 0
          && strcmp (path, "/system.slice/brig-c1.scope") == 0, "empty cgroupsPath default");
  free (slice), free (unit), free (path);
  tap_ok (brig_cgroup_systemd_names (":p:", "c1", &slice, &unit, &path, &err) == 0
          && strcmp (path, "/system.slice/p-c1.scope") == 0, "empty slice and name get defaults");
  free (slice), free (unit), free (path);
  tap_ok (brig_cgroup_systemd_names ("user.slice:p:sub.slice", "c1", &slice, &unit, &path, &err) == 0
          && strcmp (unit, "sub.slice") == 0 && strcmp (path, "/user.slice/sub.slice") == 0,
          "a name ending in .slice is a slice unit");
  free (slice), free (unit), free (path);
  tap_ok (brig_cgroup_systemd_names ("/a/b", "c1", &slice, &unit, &path, &err) < 0
          && strstr (err.msg, "slice:prefix:name"), "a plain path is refused: %s", err.msg);
  brig_error_clear (&err);
  tap_ok (brig_cgroup_systemd_names ("a--b.slice:p:n", "c1", &slice, &unit, &path, &err) < 0,
          "bad slice name refused");
  brig_error_clear (&err);
  tap_ok (brig_cgroup_systemd_slice_path ("-.slice", &path, &err) == 0 && *path == '\0',
          "-.slice is the root");
  free (path);
}

static void
test_conversions (void)
{
  char buf[32];
  brig_error err = { 0 };
  uint64_t prev = 0;
  bool mono = true;

  tap_ok (brig_cgroup_shares_to_weight (2) == 1, "shares 2 -> weight 1");
  tap_ok (brig_cgroup_shares_to_weight (1024) == 100, "shares 1024 -> weight 100 (got %llu)",
          (unsigned long long) brig_cgroup_shares_to_weight (1024));
  tap_ok (brig_cgroup_shares_to_weight (262144) == 10000, "shares 262144 -> weight 10000");
  tap_ok (brig_cgroup_shares_to_weight (0) == 0, "shares 0 -> unset");
  tap_ok (brig_cgroup_shares_to_weight (512) == 59, "shares 512 -> weight 59 (got %llu)",
          (unsigned long long) brig_cgroup_shares_to_weight (512));
  for (uint64_t s = 2; s <= 262144; s += 97)
    {
      uint64_t w = brig_cgroup_shares_to_weight (s);
      if (w < prev || w < 1 || w > 10000)
        mono = false;
      prev = w;
    }
  tap_ok (mono, "shares -> weight is monotonic within [1, 10000]");

  tap_ok (brig_cgroup_blkio_to_io_weight (10) == 1, "blkio 10 -> io 1");
  tap_ok (brig_cgroup_blkio_to_io_weight (1000) == 10000, "blkio 1000 -> io 10000");
  tap_ok (brig_cgroup_blkio_to_io_weight (500) == 4950, "blkio 500 -> io 4950");
  tap_ok (brig_cgroup_blkio_to_io_weight (0) == 0, "blkio 0 -> unset");

  tap_ok (brig_cgroup_v2_swap_value (true, 100, true, 300, buf, sizeof buf, &err) == 0
          && strcmp (buf, "200") == 0, "swap 300 with limit 100 -> memory.swap.max 200");
  tap_ok (brig_cgroup_v2_swap_value (true, 100, true, 100, buf, sizeof buf, &err) == 0
          && strcmp (buf, "0") == 0, "swap == limit -> no swap at all");
  tap_ok (brig_cgroup_v2_swap_value (true, 100, true, -1, buf, sizeof buf, &err) == 0
          && strcmp (buf, "max") == 0, "swap -1 -> max");
  tap_ok (brig_cgroup_v2_swap_value (true, 100, false, 0, buf, sizeof buf, &err) == 0 && *buf == '\0',
          "no swap -> memory.swap.max untouched");
  tap_ok (brig_cgroup_v2_swap_value (true, 300, true, 100, buf, sizeof buf, &err) < 0
          && strstr (err.msg, "below memory.limit"), "swap below limit refused: %s", err.msg);
  brig_error_clear (&err);
  tap_ok (brig_cgroup_v2_swap_value (false, 0, true, 100, buf, sizeof buf, &err) < 0,
          "swap without a memory limit refused");
  brig_error_clear (&err);

  brig_cgroup_max_value (-1, buf, sizeof buf);
  tap_ok (strcmp (buf, "max") == 0, "-1 -> max");
  brig_cgroup_max_value (4096, buf, sizeof buf);
  tap_ok (strcmp (buf, "4096") == 0, "4096 stays");

  tap_ok (brig_cgroup_hugepage_name ("2MB", buf, sizeof buf, &err) == 0 && strcmp (buf, "2MB") == 0,
          "hugepage 2MB");
  tap_ok (brig_cgroup_hugepage_name ("2M", buf, sizeof buf, &err) < 0, "hugepage 2M refused");
  brig_error_clear (&err);
}

/* ---- a tiny interpreter for the instructions the device program uses ---- */
static int
run_bpf (const struct bpf_insn *p, size_t n, char type, unsigned acc, uint32_t major, uint32_t minor)
{
  struct bpf_cgroup_dev_ctx ctx = {
    .access_type = (uint32_t) ((type == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR)
                               | (acc << 16)),
    .major = major, .minor = minor,
  };
  uint64_t reg[11] = { 0 };
  for (size_t pc = 0; pc < n; pc++)
    {
      const struct bpf_insn *i = &p[pc];
      switch (i->code)
        {
        case BPF_LDX | BPF_W | BPF_MEM:
          reg[i->dst_reg] = *(const uint32_t *) ((const char *) &ctx + i->off);
          break;
        case BPF_ALU | BPF_AND | BPF_K: reg[i->dst_reg] = (uint32_t) (reg[i->dst_reg] & (uint32_t) i->imm); break;
        case BPF_ALU | BPF_RSH | BPF_K: reg[i->dst_reg] = (uint32_t) reg[i->dst_reg] >> i->imm; break;
        case BPF_ALU | BPF_MOV | BPF_X: reg[i->dst_reg] = (uint32_t) reg[i->src_reg]; break;
        case BPF_ALU64 | BPF_MOV | BPF_K: reg[i->dst_reg] = (uint64_t) (int64_t) i->imm; break;
        case BPF_JMP | BPF_JNE | BPF_K: if (reg[i->dst_reg] != (uint64_t) (int64_t) i->imm) pc += i->off; break;
        case BPF_JMP | BPF_JEQ | BPF_K: if (reg[i->dst_reg] == (uint64_t) (int64_t) i->imm) pc += i->off; break;
        case BPF_JMP | BPF_EXIT: return (int) reg[0];
        default: return -1;
        }
    }
  return -2;  /* fell off the end */
}

enum { R = BPF_DEVCG_ACC_READ, W = BPF_DEVCG_ACC_WRITE, M = BPF_DEVCG_ACC_MKNOD };

static void
test_devices (void)
{
  oci_device_cgroup user[3] = {
    { .allow = true, .has_allow = true, .type = (char *) "b", .major = 8, .has_major = true,
      .minor = 0, .has_minor = true, .access = (char *) "r" },
    { .allow = false, .has_allow = true, .type = (char *) "c", .major = 1, .has_major = true,
      .minor = 9, .has_minor = true, .access = (char *) "w" },
    { .allow = true, .has_allow = true, .type = (char *) "c", .major = 4, .has_major = true,
      .access = (char *) "rw" },
  };
  oci_resources res = { .devices = user, .devices_len = 3 };
  struct brig_dev_rule *rules = NULL;
  struct bpf_insn *prog = NULL;
  size_t n = 0, np = 0;
  brig_error err = { 0 };
  char buf[64];

  tap_ok (brig_cgroup_device_rules (&res, &rules, &n, &err) == 0, "device rules built");
  tap_ok (n == 1 + 3 + 11, "deny-all + 3 user + 11 defaults (got %zu)", n);
  brig_cgroup_device_rule_v1 (&rules[0], buf, sizeof buf);
  tap_ok (strcmp (buf, "a") == 0 && !rules[0].allow, "first rule: deny a");
  brig_cgroup_device_rule_v1 (&rules[1], buf, sizeof buf);
  tap_ok (strcmp (buf, "b 8:0 r") == 0, "v1 format: %s", buf);
  brig_cgroup_device_rule_v1 (&rules[3], buf, sizeof buf);
  tap_ok (strcmp (buf, "c 4:* rw") == 0, "v1 format with wildcard minor: %s", buf);
  brig_cgroup_device_rule_v1 (&rules[4], buf, sizeof buf);
  tap_ok (strcmp (buf, "c *:* m") == 0, "default mknod rule: %s", buf);

  brig_cgroup_devices_program (rules, n, &prog, &np);
  tap_ok (run_bpf (prog, np, 'c', R | W, 1, 3) == 1, "bpf: /dev/null rw allowed");
  tap_ok (run_bpf (prog, np, 'c', R | W, 1, 9) == 1,
          "bpf: /dev/urandom rw allowed (the later default allow wins over the user deny)");
  tap_ok (run_bpf (prog, np, 'b', R, 8, 0) == 1, "bpf: sda read allowed");
  tap_ok (run_bpf (prog, np, 'b', W, 8, 0) == 0, "bpf: sda write denied");
  tap_ok (run_bpf (prog, np, 'b', R, 8, 1) == 0, "bpf: sda1 read denied");
  tap_ok (run_bpf (prog, np, 'b', M, 8, 1) == 1, "bpf: mknod of any block device allowed");
  tap_ok (run_bpf (prog, np, 'c', R | W, 4, 7) == 1, "bpf: c 4:* rw allowed");
  tap_ok (run_bpf (prog, np, 'c', R, 1, 11) == 0 && run_bpf (prog, np, 'c', W, 1, 11) == 0,
          "bpf: a device no rule names (kmsg) denied");
  tap_ok (run_bpf (prog, np, 'c', R | W, 10, 200) == 1, "bpf: /dev/net/tun allowed (runc's list)");
  tap_ok (run_bpf (prog, np, 'c', R, 10, 228) == 0, "bpf: other char device denied");
  free (prog);
  free (rules);

  /* a deny after allow-all: last match wins */
  {
    oci_device_cgroup u2[2] = {
      { .allow = true, .has_allow = true, .access = (char *) "rwm" },
      { .allow = false, .has_allow = true, .type = (char *) "c", .major = 5, .has_major = true,
        .minor = 1, .has_minor = true, .access = (char *) "w" },
    };
    oci_resources r2 = { .devices = u2, .devices_len = 2 };
    brig_cgroup_device_rules (&r2, &rules, &n, &err);
    brig_cgroup_devices_program (rules, n, &prog, &np);
    tap_ok (run_bpf (prog, np, 'b', R | W, 8, 0) == 1, "bpf: allow a opens everything");
    tap_ok (run_bpf (prog, np, 'c', R | W, 5, 1) == 0, "bpf: deny w catches a rw open");
    tap_ok (run_bpf (prog, np, 'c', R, 5, 1) == 1, "bpf: deny w lets a read through");
    free (prog);
    free (rules);
  }
  {
    oci_device_cgroup bad = { .allow = true, .has_allow = true, .type = (char *) "x" };
    oci_resources r3 = { .devices = &bad, .devices_len = 1 };
    tap_ok (brig_cgroup_device_rules (&r3, &rules, &n, &err) < 0
            && strstr (err.msg, "devices[0].type"), "bad device type refused: %s", err.msg);
    brig_error_clear (&err);
  }
}

/* The ownership record: a made line counts only for the path's own
 * directories; shared and foreign lines come back; a bad path is refused. */
static void
test_record (void)
{
  brig_error err = { 0 };
  brig_cgroup *cg = NULL, *cg2 = NULL;
  char *text, *again = NULL;
  bool any_made = false;

  tap_ok (brig_cgroup_load_record ("manager cgroupfs\npath /brig-unit/x\nshared\n"
                                   "made /etc\nforeign 123 456\ninit 9 9\n", -1, &cg, &err) == 0,
          "record: loads");
  tap_ok (cg && brig_cgroup_is_shared (cg), "record: shared");
  tap_ok (cg && cg->n_foreign == 1 && cg->foreign[0].pid == 123
          && cg->foreign[0].start_time == 456, "record: foreign pid and start time");
  for (size_t i = 0; cg && i < cg->n_dirs; i++)
    any_made |= cg->dirs[i].made;
  tap_ok (cg && !any_made, "record: a made line outside the path is ignored");
  if (cg && cg->n_dirs > 0)
    {
      text = xasprintf ("manager cgroupfs\npath /brig-unit/x\nmade %s\n", cg->dirs[0].path);
      brig_cgroup_load_record (text, -1, &cg2, &err);
      again = cg2 ? brig_cgroup_record (cg2) : NULL;
      free (text);
    }
  tap_ok (cg == NULL || cg->n_dirs == 0
          || (cg2 && cg2->dirs[0].made && again && strstr (again, cg->dirs[0].path)),
          "record: a made line of the path counts and round-trips");
  free (again);
  brig_cgroup_free (cg);
  brig_cgroup_free (cg2);
  cg = NULL;
  tap_ok (brig_cgroup_load_record ("manager cgroupfs\npath /a/../b\n", -1, &cg, &err) < 0,
          "record: a path with .. is refused");
  tap_ok (brig_cgroup_load_record ("path /a\n", -1, &cg, &err) < 0, "record: no manager is refused");
  brig_error_clear (&err);
}

/* Which hierarchies a container may be left out of (cgroup/scope.c). */
static void
test_scope (void)
{
  oci_network net = { .has_class_id = true, .class_id = 1 };
  oci_resources none = { 0 }, cls = { .network = &net };
  oci_hugepage_limit h = { .page_size = (char *) "2MB", .limit = 1, .has_limit = true };
  oci_resources huge = { .hugepage_limits = &h, .hugepage_limits_len = 1 };
  oci_cpu cpus = { .cpus = (char *) "0" }, shares = { .shares = 2 };
  oci_resources with_cpus = { .cpu = &cpus }, with_shares = { .cpu = &shares };
  static const char *const always[] = { "cpu", "cpuacct", "cpu,cpuacct", "cpuset", "memory",
                                        "pids", "blkio", "devices", "freezer", "hugetlb",
                                        "name=systemd", "net_cls,cpu" };
  bool ok = true;

  for (size_t i = 0; i < sizeof always / sizeof always[0]; i++)
    ok = ok && !brig_cgroup_dir_optional (always[i]);
  tap_ok (ok, "scope: resource, device, freezer and named hierarchies are always joined");
  tap_ok (brig_cgroup_dir_optional ("net_cls,net_prio") && brig_cgroup_dir_optional ("perf_event")
          && brig_cgroup_dir_optional ("rdma") && brig_cgroup_dir_optional ("misc"),
          "scope: net_cls, net_prio, perf_event, rdma and misc may be left out");
  tap_ok (!brig_cgroup_dir_optional (NULL), "scope: a hybrid host's cgroup2 is always joined");
  tap_ok (!brig_cgroup_dir_used ("net_cls,net_prio", &none, false)
          && brig_cgroup_dir_used ("net_cls,net_prio", &cls, false)
          && !brig_cgroup_dir_used ("perf_event", &cls, false), "scope: classID uses net_cls");
  tap_ok (brig_cgroup_dir_used (NULL, &huge, false) && !brig_cgroup_dir_used (NULL, &huge, true)
          && !brig_cgroup_dir_used (NULL, NULL, false),
          "scope: hugepageLimits use cgroup2 only where v1 has no hugetlb");
  tap_ok (brig_cgroup_dir_used ("cpuset", &with_cpus, false)
          && !brig_cgroup_dir_used ("cpuset", &with_shares, false)
          && !brig_cgroup_dir_used ("cpuset", &none, false),
          "scope: cpus or mems use cpuset (issue 25), shares do not");
}

int
main (void)
{
  tap_plan (82);
  test_mountinfo ();
  test_paths ();
  test_systemd_names ();
  test_conversions ();
  test_devices ();
  test_record ();
  test_scope ();
  return tap_done ();
}
