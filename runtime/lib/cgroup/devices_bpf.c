/* The cgroup v2 device controller is an eBPF program of type
 * BPF_PROG_TYPE_CGROUP_DEVICE attached to the cgroup. brig writes the
 * instructions itself from the effective rule list (cgroup/convert.c):
 *
 *   r2 = ctx->access_type & 0xffff   (1 block, 2 char)
 *   r3 = ctx->access_type >> 16      (1 mknod, 2 read, 4 write)
 *   r4 = ctx->major, r5 = ctx->minor
 *   one block per rule, the last rule first (the last matching rule
 *   decides, as in the v1 devices files), each ending in "r0 = allow; exit"
 *   and jumping over itself when the rule does not match;
 *   r0 = 0; exit                     (nothing matched: deny)
 *
 * An allow rule matches when every requested access is in the rule; a deny
 * rule when any of them is. */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bpf_insn.h"
#include "cgroup/internal.h"
#include "log.h"
#include "utils.h"


#define LDX_W(dst, src, off) brig_bpf_insn (BPF_LDX | BPF_W | BPF_MEM, dst, src, off, 0)
#define ALU32_IMM(op, dst, imm) brig_bpf_insn (BPF_ALU | (op) | BPF_K, dst, 0, 0, imm)
#define MOV32_REG(dst, src) brig_bpf_insn (BPF_ALU | BPF_MOV | BPF_X, dst, src, 0, 0)
#define MOV64_IMM(dst, imm) brig_bpf_insn (BPF_ALU64 | BPF_MOV | BPF_K, dst, 0, 0, imm)
#define JMP_IMM(op, dst, imm, off) brig_bpf_insn (BPF_JMP | (op) | BPF_K, dst, 0, off, imm)
#define EXIT() brig_bpf_insn (BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

/* The kernel's access bits for ours. */
static int32_t
bpf_access (unsigned a)
{
  return ((a & BRIG_DEV_MKNOD) ? BPF_DEVCG_ACC_MKNOD : 0)
         | ((a & BRIG_DEV_READ) ? BPF_DEVCG_ACC_READ : 0)
         | ((a & BRIG_DEV_WRITE) ? BPF_DEVCG_ACC_WRITE : 0);
}

static void
emit (struct bpf_insn **v, size_t *n, struct bpf_insn i)
{
  *v = xrealloc (*v, (*n + 1) * sizeof **v);
  (*v)[(*n)++] = i;
}

int
brig_cgroup_devices_program (const struct brig_dev_rule *rules, size_t n_rules,
                             struct bpf_insn **out, size_t *count)
{
  const int32_t all = BPF_DEVCG_ACC_MKNOD | BPF_DEVCG_ACC_READ | BPF_DEVCG_ACC_WRITE;
  struct bpf_insn *v = NULL;
  size_t n = 0;
  bool unconditional = false;

  emit (&v, &n, LDX_W (BPF_REG_2, BPF_REG_1, offsetof (struct bpf_cgroup_dev_ctx, access_type)));
  emit (&v, &n, ALU32_IMM (BPF_AND, BPF_REG_2, 0xffff));
  emit (&v, &n, LDX_W (BPF_REG_3, BPF_REG_1, offsetof (struct bpf_cgroup_dev_ctx, access_type)));
  emit (&v, &n, ALU32_IMM (BPF_RSH, BPF_REG_3, 16));
  emit (&v, &n, LDX_W (BPF_REG_4, BPF_REG_1, offsetof (struct bpf_cgroup_dev_ctx, major)));
  emit (&v, &n, LDX_W (BPF_REG_5, BPF_REG_1, offsetof (struct bpf_cgroup_dev_ctx, minor)));

  for (size_t k = n_rules; k-- > 0 && !unconditional;)
    {
      const struct brig_dev_rule *r = &rules[k];
      int32_t acc = bpf_access (r->access);
      bool check_type = r->type == 'b' || r->type == 'c';
      bool check_acc = acc != all;
      bool check_major = check_type && r->major >= 0;
      bool check_minor = check_type && r->minor >= 0;
      int16_t len = (int16_t) ((check_type ? 1 : 0) + (check_acc ? 3 : 0) + (check_major ? 1 : 0)
                               + (check_minor ? 1 : 0) + 2);
      int16_t pos = 0;

      if (acc == 0)
        continue;  /* a rule for no access matches nothing */
      if (check_type)
        emit (&v, &n, JMP_IMM (BPF_JNE, BPF_REG_2,
                               r->type == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR,
                               (int16_t) (len - ++pos)));
      if (check_acc)
        {
          emit (&v, &n, MOV32_REG (BPF_REG_1, BPF_REG_3));
          pos++;
          if (r->allow)
            {
              /* requested & ~rule must be empty */
              emit (&v, &n, ALU32_IMM (BPF_AND, BPF_REG_1, ~acc & all));
              pos++;
              emit (&v, &n, JMP_IMM (BPF_JNE, BPF_REG_1, 0, (int16_t) (len - ++pos)));
            }
          else
            {
              /* requested & rule must not be empty */
              emit (&v, &n, ALU32_IMM (BPF_AND, BPF_REG_1, acc));
              pos++;
              emit (&v, &n, JMP_IMM (BPF_JEQ, BPF_REG_1, 0, (int16_t) (len - ++pos)));
            }
        }
      if (check_major)
        emit (&v, &n, JMP_IMM (BPF_JNE, BPF_REG_4, (int32_t) r->major, (int16_t) (len - ++pos)));
      if (check_minor)
        emit (&v, &n, JMP_IMM (BPF_JNE, BPF_REG_5, (int32_t) r->minor, (int16_t) (len - ++pos)));
      emit (&v, &n, MOV64_IMM (BPF_REG_0, r->allow ? 1 : 0));
      emit (&v, &n, EXIT ());
      /* a rule that matches everything makes the earlier ones dead code */
      unconditional = !check_type && !check_acc;
    }
  if (!unconditional)
    {
      emit (&v, &n, MOV64_IMM (BPF_REG_0, 0));
      emit (&v, &n, EXIT ());
    }
  *out = v;
  *count = n;
  return 0;
}


static int
prog_load (const struct bpf_insn *insns, size_t n, brig_error *err)
{
  char log[4096] = "";
  union bpf_attr attr;
  int fd;

  memset (&attr, 0, sizeof attr);
  attr.prog_type = BPF_PROG_TYPE_CGROUP_DEVICE;
  attr.insns = (uint64_t) (uintptr_t) insns;
  attr.insn_cnt = (uint32_t) n;
  attr.license = (uint64_t) (uintptr_t) "GPL";
  attr.log_buf = (uint64_t) (uintptr_t) log;
  attr.log_size = sizeof log;
  attr.log_level = 1;
  fd = brig_bpf (BPF_PROG_LOAD, &attr);
  if (fd < 0 && errno == ENOSPC)
    {
      /* the verifier log did not fit: load again without it */
      attr.log_buf = 0;
      attr.log_size = 0;
      attr.log_level = 0;
      fd = brig_bpf (BPF_PROG_LOAD, &attr);
    }
  if (fd < 0)
    return brig_error_errno (err, "load the device cgroup eBPF program (%zu instructions)%s%s",
                             n, *log ? ": " : "", log);
  return fd;
}

/* The ids of the device programs attached to the cgroup now. */
static int
attached_ids (int cgfd, uint32_t *ids, uint32_t *n)
{
  union bpf_attr attr;
  memset (&attr, 0, sizeof attr);
  attr.query.target_fd = (uint32_t) cgfd;
  attr.query.attach_type = BPF_CGROUP_DEVICE;
  attr.query.prog_ids = (uint64_t) (uintptr_t) ids;
  attr.query.prog_cnt = *n;
  if (brig_bpf (BPF_PROG_QUERY, &attr) < 0)
    return -errno;
  *n = attr.query.prog_cnt;
  return 0;
}

static void
detach_id (int cgfd, uint32_t id)
{
  union bpf_attr attr;
  _cleanup_close_ int fd = -1;

  memset (&attr, 0, sizeof attr);
  attr.prog_id = id;
  fd = brig_bpf (BPF_PROG_GET_FD_BY_ID, &attr);
  if (fd < 0)
    return;
  memset (&attr, 0, sizeof attr);
  attr.target_fd = (uint32_t) cgfd;
  attr.attach_bpf_fd = (uint32_t) fd;
  attr.attach_type = BPF_CGROUP_DEVICE;
  if (brig_bpf (BPF_PROG_DETACH, &attr) < 0)
    brig_debug ("cgroup: detach device program %u: %s", id, strerror (errno));
}

int
brig_cgroup_v2_apply_devices (brig_cgroup *cg, const char *dir, const oci_resources *r,
                              brig_error *err)
{
  _cleanup_free_ struct brig_dev_rule *rules = NULL;
  _cleanup_free_ struct bpf_insn *insns = NULL;
  _cleanup_close_ int cgfd = -1, progfd = -1;
  uint32_t old[64], n_old = BRIG_ARRAY_SIZE (old);
  size_t n_rules = 0, n_insns = 0;
  union bpf_attr attr;
  int ret;

  ret = brig_cgroup_device_rules (r, &rules, &n_rules, err);
  if (ret < 0)
    return ret;
  brig_cgroup_devices_program (rules, n_rules, &insns, &n_insns);
  cgfd = open (dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (cgfd < 0)
    return brig_error_errno (err, "open %s", dir);
  if (attached_ids (cgfd, old, &n_old) < 0)
    n_old = 0;
  progfd = prog_load (insns, n_insns, err);
  if (progfd < 0)
    return progfd;

  /* Attach the new program before detaching the old ones: with
   * BPF_F_ALLOW_MULTI both run for a moment and both must allow, so there
   * is never a moment without a filter. */
  memset (&attr, 0, sizeof attr);
  attr.target_fd = (uint32_t) cgfd;
  attr.attach_bpf_fd = (uint32_t) progfd;
  attr.attach_type = BPF_CGROUP_DEVICE;
  attr.attach_flags = BPF_F_ALLOW_MULTI;
  if (brig_bpf (BPF_PROG_ATTACH, &attr) < 0)
    {
      /* a program attached without ALLOW_MULTI (by another manager) is
       * replaced by a plain attach */
      attr.attach_flags = 0;
      if (brig_bpf (BPF_PROG_ATTACH, &attr) < 0)
        return brig_error_errno (err, "attach the device cgroup eBPF program to %s", dir);
      return 0;
    }
  for (uint32_t i = 0; i < n_old && i < BRIG_ARRAY_SIZE (old); i++)
    detach_id (cgfd, old[i]);
  return 0;
}
