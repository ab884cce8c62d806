/* The two pieces every hand-written eBPF program of brig needs (the cgroup
 * v2 device program, the egress programs): the bpf(2) call and one
 * instruction. brig writes its programs itself, so it links no libbpf. */
#ifndef BRIG_BPF_INSN_H
#define BRIG_BPF_INSN_H

#include <linux/bpf.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* bpf(2): the return value, -1 with errno on failure. */
static inline int
brig_bpf (int cmd, union bpf_attr *attr)
{
  return (int) syscall (__NR_bpf, cmd, attr, sizeof *attr);
}

/* One instruction, its padding zeroed (the verifier checks it). */
static inline struct bpf_insn
brig_bpf_insn (uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
  struct bpf_insn i;
  memset (&i, 0, sizeof i);
  i.code = code;
  i.dst_reg = dst & 0xf;
  i.src_reg = src & 0xf;
  i.off = off;
  i.imm = imm;
  return i;
}

#endif
