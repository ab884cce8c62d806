/* linux.seccomp: validation, compilation to BPF (parent), loading (init).
 *
 * The parent validates every name in the profile and compiles it with
 * libseccomp, or takes the program from the cache; the container init only
 * calls seccomp(2) with the ready program, so a broken profile fails
 * `create` before anything exists, and the init needs no libseccomp work. */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "seccomp/seccomp.h"
#include "seccomp/internal.h"
#include "utils.h"

#ifndef SECCOMP_FILTER_FLAG_TSYNC_ESRCH
#define SECCOMP_FILTER_FLAG_TSYNC_ESRCH (1UL << 4)
#endif
#ifndef SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV
#define SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV (1UL << 5)
#endif

/* Profiles with more syscall names than this get libseccomp's binary-tree
 * layout: a linear filter costs every syscall a walk through all rules. */
#ifndef BRIG_SECCOMP_TREE_THRESHOLD
#define BRIG_SECCOMP_TREE_THRESHOLD 32
#endif

enum act_errno { ERRNO_NONE, ERRNO_TAKES };

static const struct {
  const char *name;
  uint32_t action;     /* SCMP_ACT_* without its data */
  enum act_errno data; /* whether errnoRet is meaningful */
} actions[] = {
  { "SCMP_ACT_KILL", SCMP_ACT_KILL_THREAD, ERRNO_NONE },
  { "SCMP_ACT_KILL_PROCESS", SCMP_ACT_KILL_PROCESS, ERRNO_NONE },
  { "SCMP_ACT_KILL_THREAD", SCMP_ACT_KILL_THREAD, ERRNO_NONE },
  { "SCMP_ACT_TRAP", SCMP_ACT_TRAP, ERRNO_NONE },
  { "SCMP_ACT_ERRNO", 0x00050000U, ERRNO_TAKES },
  { "SCMP_ACT_TRACE", 0x7ff00000U, ERRNO_TAKES },
  { "SCMP_ACT_ALLOW", SCMP_ACT_ALLOW, ERRNO_NONE },
  { "SCMP_ACT_LOG", SCMP_ACT_LOG, ERRNO_NONE },
  { "SCMP_ACT_NOTIFY", SCMP_ACT_NOTIFY, ERRNO_NONE },
};

static const struct {
  const char *name;
  enum scmp_compare op;
} operators[] = {
  { "SCMP_CMP_NE", SCMP_CMP_NE },
  { "SCMP_CMP_LT", SCMP_CMP_LT },
  { "SCMP_CMP_LE", SCMP_CMP_LE },
  { "SCMP_CMP_EQ", SCMP_CMP_EQ },
  { "SCMP_CMP_GE", SCMP_CMP_GE },
  { "SCMP_CMP_GT", SCMP_CMP_GT },
  { "SCMP_CMP_MASKED_EQ", SCMP_CMP_MASKED_EQ },
};

static const struct {
  const char *name;
  uint32_t token;
} archs[] = {
  { "SCMP_ARCH_X86", SCMP_ARCH_X86 },
  { "SCMP_ARCH_X86_64", SCMP_ARCH_X86_64 },
  { "SCMP_ARCH_X32", SCMP_ARCH_X32 },
  { "SCMP_ARCH_ARM", SCMP_ARCH_ARM },
  { "SCMP_ARCH_AARCH64", SCMP_ARCH_AARCH64 },
  { "SCMP_ARCH_MIPS", SCMP_ARCH_MIPS },
  { "SCMP_ARCH_MIPS64", SCMP_ARCH_MIPS64 },
  { "SCMP_ARCH_MIPS64N32", SCMP_ARCH_MIPS64N32 },
  { "SCMP_ARCH_MIPSEL", SCMP_ARCH_MIPSEL },
  { "SCMP_ARCH_MIPSEL64", SCMP_ARCH_MIPSEL64 },
  { "SCMP_ARCH_MIPSEL64N32", SCMP_ARCH_MIPSEL64N32 },
  { "SCMP_ARCH_PPC", SCMP_ARCH_PPC },
  { "SCMP_ARCH_PPC64", SCMP_ARCH_PPC64 },
  { "SCMP_ARCH_PPC64LE", SCMP_ARCH_PPC64LE },
  { "SCMP_ARCH_S390", SCMP_ARCH_S390 },
  { "SCMP_ARCH_S390X", SCMP_ARCH_S390X },
  { "SCMP_ARCH_PARISC", SCMP_ARCH_PARISC },
  { "SCMP_ARCH_PARISC64", SCMP_ARCH_PARISC64 },
  { "SCMP_ARCH_RISCV64", SCMP_ARCH_RISCV64 },
#ifdef SCMP_ARCH_LOONGARCH64
  { "SCMP_ARCH_LOONGARCH64", SCMP_ARCH_LOONGARCH64 },
#endif
#ifdef SCMP_ARCH_M68K
  { "SCMP_ARCH_M68K", SCMP_ARCH_M68K },
#endif
#ifdef SCMP_ARCH_SHEB
  { "SCMP_ARCH_SHEB", SCMP_ARCH_SHEB },
#endif
#ifdef SCMP_ARCH_SH
  { "SCMP_ARCH_SH", SCMP_ARCH_SH },
#endif
};

static const struct {
  const char *name;
  unsigned long flag;
} filter_flags[] = {
  { "SECCOMP_FILTER_FLAG_TSYNC", SECCOMP_FILTER_FLAG_TSYNC },
  { "SECCOMP_FILTER_FLAG_LOG", SECCOMP_FILTER_FLAG_LOG },
  { "SECCOMP_FILTER_FLAG_SPEC_ALLOW", SECCOMP_FILTER_FLAG_SPEC_ALLOW },
  { "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV", SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV },
};

/* The init hands the listener fd to brig with the very first syscall after
 * seccomp(2) (seccomp/notify.c): sendmsg with SCM_RIGHTS, or, when the
 * profile notifies sendmsg, write(2) of the fd's number for pidfd_getfd.
 * A notify rule on that one call would wait for an agent that has no fd
 * yet; every later call of the init may be notified. socketcall is how
 * some 32-bit ABIs reach sendmsg. */
static const char *const handover_sendmsg[] = { "sendmsg", "socketcall" };
static const char *const handover_write[] = { "write" };

static bool
name_in (const char *name, const char *const *set, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (strcmp (name, set[i]) == 0)
      return true;
  return false;
}

/* Resolve an action name plus optional errno into an SCMP_ACT_* value. */
static int
parse_action (const char *name, bool has_errno, uint32_t errno_ret, const char *path,
              const char *errno_path, uint32_t *out, brig_error *err)
{
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (actions); i++)
    {
      if (strcmp (actions[i].name, name) != 0)
        continue;
      if (actions[i].data == ERRNO_NONE)
        {
          if (has_errno)
            return brig_error_set (err, 0, "%s: action %s does not take an errno value", errno_path,
                                   name);
          *out = actions[i].action;
          return 0;
        }
      if (has_errno && errno_ret > 0xffff)
        return brig_error_set (err, 0, "%s: %u is out of range (0-65535)", errno_path, errno_ret);
      *out = actions[i].action | (has_errno ? errno_ret : (uint32_t) EPERM);
      return 0;
    }
  return brig_error_set (err, 0, "%s: unknown action \"%s\"", path, name);
}

static bool
is_notify (uint32_t act)
{
  return act == SCMP_ACT_NOTIFY;
}

static int
parse_operator (const char *name, const char *path, enum scmp_compare *out, brig_error *err)
{
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (operators); i++)
    if (strcmp (operators[i].name, name) == 0)
      {
        *out = operators[i].op;
        return 0;
      }
  return brig_error_set (err, 0, "%s: unknown operator \"%s\"", path, name);
}

static int
parse_arch (const char *name, const char *path, uint32_t *out, brig_error *err)
{
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (archs); i++)
    if (strcmp (archs[i].name, name) == 0)
      {
        *out = archs[i].token;
        return 0;
      }
  return brig_error_set (err, 0, "%s: unknown architecture \"%s\"", path, name);
}

static int
parse_flag (const char *name, const char *path, unsigned long *out, brig_error *err)
{
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (filter_flags); i++)
    if (strcmp (filter_flags[i].name, name) == 0)
      {
        *out = filter_flags[i].flag;
        return 0;
      }
  return brig_error_set (err, 0, "%s: unknown flag \"%s\"", path, name);
}

/* Check every name in the profile; fill the load flags and notify bit. */
static int
validate (const oci_seccomp *s, uint32_t *def_act, struct brig_seccomp *sc, brig_error *err)
{
  bool notify_sendmsg = false, notify_write = false;
  char path[96];
  int r;

  r = parse_action (s->default_action, s->has_default_errno_ret, s->default_errno_ret,
                    "linux.seccomp.defaultAction", "linux.seccomp.defaultErrnoRet", def_act, err);
  if (r < 0)
    return r;
  /* As in runc: a notifying default would take both calls the init could
   * hand the listener fd over with. */
  if (is_notify (*def_act))
    return brig_error_set (err, 0, "linux.seccomp.defaultAction: SCMP_ACT_NOTIFY cannot be the "
                                   "default action (the runtime itself would be notified)");

  for (size_t i = 0; i < s->architectures_len; i++)
    {
      uint32_t token;
      snprintf (path, sizeof path, "linux.seccomp.architectures[%zu]", i);
      r = parse_arch (s->architectures[i], path, &token, err);
      if (r < 0)
        return r;
    }

  sc->flags = 0;
  for (size_t i = 0; i < s->flags_len; i++)
    {
      unsigned long f = 0;
      snprintf (path, sizeof path, "linux.seccomp.flags[%zu]", i);
      r = parse_flag (s->flags[i], path, &f, err);
      if (r < 0)
        return r;
      sc->flags |= f;
    }

  sc->notify = false;
  for (size_t i = 0; i < s->syscalls_len; i++)
    {
      const oci_syscall *sys = &s->syscalls[i];
      char epath[96];
      uint32_t act;

      snprintf (path, sizeof path, "linux.seccomp.syscalls[%zu].action", i);
      snprintf (epath, sizeof epath, "linux.seccomp.syscalls[%zu].errnoRet", i);
      r = parse_action (sys->action, sys->has_errno_ret, sys->errno_ret, path, epath, &act, err);
      if (r < 0)
        return r;
      if (sys->names_len == 0)
        return brig_error_set (err, 0, "linux.seccomp.syscalls[%zu].names: must not be empty", i);
      if (is_notify (act))
        {
          sc->notify = true;
          for (size_t n = 0; n < sys->names_len; n++)
            {
              if (name_in (sys->names[n], handover_sendmsg, BRIG_ARRAY_SIZE (handover_sendmsg)))
                notify_sendmsg = true;
              else if (name_in (sys->names[n], handover_write, BRIG_ARRAY_SIZE (handover_write)))
                notify_write = true;
              else
                continue;
              if (notify_sendmsg && notify_write)
                return brig_error_set (err, 0,
                                       "linux.seccomp.syscalls[%zu].names[%zu]: SCMP_ACT_NOTIFY "
                                       "cannot be used for both sendmsg and write (the runtime "
                                       "needs one of them to hand the listener fd over)", i, n);
            }
        }
      for (size_t a = 0; a < sys->args_len; a++)
        {
          enum scmp_compare op;
          snprintf (path, sizeof path, "linux.seccomp.syscalls[%zu].args[%zu].op", i, a);
          r = parse_operator (sys->args[a].op, path, &op, err);
          if (r < 0)
            return r;
          if (sys->args[a].index > 5)
            return brig_error_set (err, 0, "linux.seccomp.syscalls[%zu].args[%zu].index: %u is "
                                           "out of range (0-5)", i, a, sys->args[a].index);
        }
    }

  sc->handover_write = notify_sendmsg;
  if (sc->notify && s->listener_path == NULL)
    return brig_error_set (err, 0, "linux.seccomp.listenerPath: required when SCMP_ACT_NOTIFY is used");
  if (s->listener_metadata != NULL && s->listener_path == NULL)
    return brig_error_set (err, 0, "linux.seccomp.listenerMetadata: set without listenerPath");
  return 0;
}

static void
seccomp_releasep (scmp_filter_ctx *ctx)
{
  if (*ctx != NULL)
    seccomp_release (*ctx);
}

/* Add the rules of one syscalls[] entry for one syscall number. Arguments
 * that repeat an index cannot all hold at once, so (as runc does) each of
 * them becomes a rule of its own; distinct indexes are ANDed in one rule. */
static int
add_rules (scmp_filter_ctx ctx, uint32_t act, int nr, const oci_syscall *sys, size_t i,
           const char *name, brig_error *err)
{
  struct scmp_arg_cmp cmps[6];
  bool repeated = false;
  unsigned seen = 0;
  int r;

  if (sys->args_len == 0)
    {
      r = seccomp_rule_add_array (ctx, act, nr, 0, NULL);
      goto out;
    }
  for (size_t a = 0; a < sys->args_len; a++)
    {
      if (seen & (1u << sys->args[a].index))
        repeated = true;
      seen |= 1u << sys->args[a].index;
    }
  for (size_t a = 0; a < sys->args_len; a++)
    {
      const oci_syscall_arg *arg = &sys->args[a];
      struct scmp_arg_cmp *c = &cmps[repeated ? 0 : a];
      enum scmp_compare op = SCMP_CMP_EQ;

      (void) parse_operator (arg->op, "", &op, NULL);
      c->arg = arg->index;
      c->op = op;
      /* For MASKED_EQ the spec's value is the mask, valueTwo the datum. */
      c->datum_a = arg->value;
      c->datum_b = arg->has_value_two ? arg->value_two : 0;
      if (repeated)
        {
          r = seccomp_rule_add_array (ctx, act, nr, 1, cmps);
          if (r < 0)
            goto out;
        }
    }
  r = repeated ? 0 : seccomp_rule_add_array (ctx, act, nr, (unsigned) sys->args_len, cmps);
out:
  if (r < 0)
    return brig_error_set (err, -r, "linux.seccomp.syscalls[%zu]: add rule for %s", i, name);
  return 0;
}

/* Export the compiled filter through a memfd: libseccomp 2.5 can only
 * write the program to an fd. */
static int
export_bpf (scmp_filter_ctx ctx, void **bpf, size_t *len, brig_error *err)
{
  _cleanup_close_ int fd = memfd_create ("brig-seccomp", MFD_CLOEXEC);
  _cleanup_free_ char *buf = NULL;
  off_t size;
  int r;

  if (fd < 0)
    return brig_error_errno (err, "seccomp: memfd_create");
  r = seccomp_export_bpf (ctx, fd);
  if (r < 0)
    return brig_error_set (err, -r, "seccomp: export BPF");
  size = lseek (fd, 0, SEEK_CUR);
  if (size <= 0 || size % sizeof (struct sock_filter) != 0)
    return brig_error_say (err, EINVAL, "seccomp: exported BPF has size %lld", (long long) size);
  buf = xmalloc0 ((size_t) size);
  if (pread (fd, buf, (size_t) size, 0) != size)
    return brig_error_errno (err, "seccomp: read exported BPF");
  *bpf = brig_steal_ptr (buf);
  *len = (size_t) size;
  return 0;
}

static int
compile (const oci_seccomp *s, uint32_t def_act, void **bpf, size_t *len, brig_error *err)
{
  __attribute__ ((cleanup (seccomp_releasep))) scmp_filter_ctx ctx = seccomp_init (def_act);
  size_t nnames = 0;
  int r;

  if (ctx == NULL)
    return brig_error_set (err, ENOMEM, "seccomp: init filter");
  /* brig loads the program itself; never let libseccomp set no_new_privs. */
  r = seccomp_attr_set (ctx, SCMP_FLTATR_CTL_NNP, 0);
  if (r < 0)
    return brig_error_set (err, -r, "seccomp: disable NNP attribute");

  for (size_t i = 0; i < s->architectures_len; i++)
    {
      uint32_t token = 0;
      (void) parse_arch (s->architectures[i], "", &token, NULL);
      r = seccomp_arch_add (ctx, token);
      if (r < 0 && r != -EEXIST)
        return brig_error_set (err, -r, "linux.seccomp.architectures[%zu]: add %s", i,
                               s->architectures[i]);
    }

  for (size_t i = 0; i < s->syscalls_len; i++)
    nnames += s->syscalls[i].names_len;
  if (nnames > BRIG_SECCOMP_TREE_THRESHOLD)
    {
      r = seccomp_attr_set (ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
      if (r < 0)
        brig_debug ("seccomp: binary tree optimisation unavailable: %s", strerror (-r));
    }

  for (size_t i = 0; i < s->syscalls_len; i++)
    {
      const oci_syscall *sys = &s->syscalls[i];
      uint32_t act = 0;

      (void) parse_action (sys->action, sys->has_errno_ret, sys->errno_ret, "", "", &act, NULL);
      /* libseccomp refuses rules that repeat the default action. */
      if (act == def_act)
        continue;
      for (size_t n = 0; n < sys->names_len; n++)
        {
          int nr = seccomp_syscall_resolve_name (sys->names[n]);
          if (nr == __NR_SCMP_ERROR)
            {
              brig_debug ("seccomp: unknown syscall \"%s\" skipped", sys->names[n]);
              continue;
            }
          r = add_rules (ctx, act, nr, sys, i, sys->names[n], err);
          if (r < 0)
            return r;
        }
    }
  return export_bpf (ctx, bpf, len, err);
}

int
brig_seccomp_prepare (const oci_seccomp *s, const char *cache_dir, brig_seccomp **out,
                      brig_error *err)
{
  struct brig_seccomp *sc = xmalloc0 (sizeof *sc);
  _cleanup_free_ char *key = NULL;
  size_t key_len = 0;
  uint32_t def_act = 0;
  int r;

  *out = NULL;
  r = validate (s, &def_act, sc, err);
  if (r < 0)
    goto fail;

  if (cache_dir != NULL)
    {
      key = brig_seccomp_cache_key (s, &key_len);
      if (brig_seccomp_cache_get (cache_dir, key, key_len, &sc->bpf, &sc->bpf_len) > 0)
        {
          *out = sc;
          return 0;
        }
    }
  r = compile (s, def_act, &sc->bpf, &sc->bpf_len, err);
  if (r < 0)
    goto fail;
  if (cache_dir != NULL)
    brig_seccomp_cache_put (cache_dir, key, key_len, sc->bpf, sc->bpf_len);
  *out = sc;
  return 0;

fail:
  brig_seccomp_free (sc);
  return r;
}

int
brig_seccomp_load (brig_seccomp *sc, int *notify_fd, brig_error *err)
{
  struct sock_fprog prog;
  unsigned long flags;
  long r;

  if (notify_fd != NULL)
    *notify_fd = -1;
  if (sc == NULL)
    return 0;
  prog.len = (unsigned short) (sc->bpf_len / sizeof (struct sock_filter));
  prog.filter = sc->bpf;
  flags = sc->flags;
  if (sc->notify)
    {
      flags |= SECCOMP_FILTER_FLAG_NEW_LISTENER;
      /* With TSYNC the kernel reports a failed sync as a thread id, which
       * would be indistinguishable from the listener fd. */
      if (flags & SECCOMP_FILTER_FLAG_TSYNC)
        flags |= SECCOMP_FILTER_FLAG_TSYNC_ESRCH;
    }
  r = syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER, flags, &prog);
  if (r < 0)
    {
      if (errno == EACCES)
        return brig_error_errno (err, "load seccomp filter (without noNewPrivileges it needs "
                                      "CAP_SYS_ADMIN)");
      return brig_error_errno (err, "load seccomp filter");
    }
  if (sc->notify)
    {
      if (notify_fd != NULL)
        *notify_fd = (int) r;
      else
        close ((int) r);
    }
  return 0;
}

void
brig_seccomp_free (brig_seccomp *sc)
{
  if (sc == NULL)
    return;
  free (sc->bpf);
  free (sc);
}

bool
brig_seccomp_uses_notify (const brig_seccomp *sc)
{
  return sc != NULL && sc->notify;
}

char *
brig_seccomp_cache_dir (const char *state_root)
{
  return xasprintf ("%s/@seccomp-cache", state_root);
}

static char **
strv_push (char **v, size_t *len, const char *s)
{
  v = xrealloc (v, (*len + 2) * sizeof *v);
  v[(*len)++] = xstrdup (s);
  v[*len] = NULL;
  return v;
}

/* With a NULL program a known flag fails with EFAULT, an unknown with
 * EINVAL. WAIT_KILLABLE_RECV is only valid together with NEW_LISTENER. */
static bool
flag_supported (unsigned long flag)
{
  if (flag == SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV)
    flag |= SECCOMP_FILTER_FLAG_NEW_LISTENER;
  return syscall (SYS_seccomp, SECCOMP_SET_MODE_FILTER, flag, NULL) < 0 && errno == EFAULT;
}

void
brig_seccomp_features (oci_feat_seccomp *out)
{
  uint32_t native = seccomp_arch_native ();

  out->enabled = out->has_enabled = true;
  out->actions = xmalloc0 (sizeof (char *));
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (actions); i++)
    out->actions = strv_push (out->actions, &out->actions_len, actions[i].name);
  out->operators = xmalloc0 (sizeof (char *));
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (operators); i++)
    out->operators = strv_push (out->operators, &out->operators_len, operators[i].name);
  out->archs = xmalloc0 (sizeof (char *));
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (archs); i++)
    {
      /* seccomp_arch_exist() checks what this libseccomp can build for. */
      scmp_filter_ctx ctx = seccomp_init (SCMP_ACT_ALLOW);
      bool ok = ctx != NULL && (archs[i].token == native
                                || seccomp_arch_add (ctx, archs[i].token) == 0);
      if (ctx != NULL)
        seccomp_release (ctx);
      if (ok)
        out->archs = strv_push (out->archs, &out->archs_len, archs[i].name);
    }
  out->known_flags = xmalloc0 (sizeof (char *));
  out->supported_flags = xmalloc0 (sizeof (char *));
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (filter_flags); i++)
    {
      out->known_flags = strv_push (out->known_flags, &out->known_flags_len, filter_flags[i].name);
      if (flag_supported (filter_flags[i].flag))
        out->supported_flags = strv_push (out->supported_flags, &out->supported_flags_len,
                                          filter_flags[i].name);
    }
}

bool
brig_seccomp_notifies_sendmsg (const brig_seccomp *sc)
{
  return sc && sc->handover_write;
}
