/* The mount option table. Each option either changes mount(2) flags (and
 * the matching mount_setattr(2) attribute used for bind mounts), adds a
 * propagation change, sets a recursive attribute, or marks a runtime
 * extension; everything else is filesystem data. */
#include <string.h>
#include <sys/mount.h>

#include "rootfs/mounts.h"
#include "paths.h"
#include "utils.h"

#ifndef MS_NOSYMFOLLOW
#define MS_NOSYMFOLLOW 256
#endif
#ifndef MOUNT_ATTR_NOSYMFOLLOW
#define MOUNT_ATTR_NOSYMFOLLOW 0x00200000
#endif

enum opt_kind {
  OPT_SET,        /* set ms / attr */
  OPT_CLEAR,      /* clear ms / attr */
  OPT_ATIME,      /* set ms, clear the other atime flags; attr is the atime value */
  OPT_PROPAGATION,
  OPT_REC_SET,    /* recursive attribute set */
  OPT_REC_CLEAR,  /* recursive attribute clear */
  OPT_REC_ATIME,  /* recursive atime value */
  OPT_BIND,
  OPT_RBIND,
  OPT_IDMAP,
  OPT_RIDMAP,
  OPT_TMPCOPYUP,
  OPT_IGNORE,     /* mount(8)-only options that never reach the kernel */
};

struct opt {
  const char *name;
  enum opt_kind kind;
  unsigned long ms;
  uint64_t attr;
};

#define ATIME_MS (MS_NOATIME | MS_RELATIME | MS_STRICTATIME)

/* The atime options without an attr (atime, norelatime, nostrictatime) only
 * clear a mount(2) flag; on a bind mount they leave the atime mode as it is,
 * like a bind remount without atime flags does. */
static const struct opt opts[] = {
  { "async", OPT_CLEAR, MS_SYNCHRONOUS, 0 },
  { "atime", OPT_CLEAR, MS_NOATIME, 0 },
  { "bind", OPT_BIND, MS_BIND, 0 },
  { "defaults", OPT_IGNORE, 0, 0 },
  { "dev", OPT_CLEAR, MS_NODEV, MOUNT_ATTR_NODEV },
  { "diratime", OPT_CLEAR, MS_NODIRATIME, MOUNT_ATTR_NODIRATIME },
  { "dirsync", OPT_SET, MS_DIRSYNC, 0 },
  { "exec", OPT_CLEAR, MS_NOEXEC, MOUNT_ATTR_NOEXEC },
  { "iversion", OPT_SET, MS_I_VERSION, 0 },
  { "lazytime", OPT_SET, MS_LAZYTIME, 0 },
  { "loud", OPT_CLEAR, MS_SILENT, 0 },
  { "mand", OPT_SET, MS_MANDLOCK, 0 },
  { "noatime", OPT_ATIME, MS_NOATIME, MOUNT_ATTR_NOATIME },
  { "nodev", OPT_SET, MS_NODEV, MOUNT_ATTR_NODEV },
  { "nodiratime", OPT_SET, MS_NODIRATIME, MOUNT_ATTR_NODIRATIME },
  { "noexec", OPT_SET, MS_NOEXEC, MOUNT_ATTR_NOEXEC },
  { "noiversion", OPT_CLEAR, MS_I_VERSION, 0 },
  { "nolazytime", OPT_CLEAR, MS_LAZYTIME, 0 },
  { "nomand", OPT_CLEAR, MS_MANDLOCK, 0 },
  { "norelatime", OPT_CLEAR, MS_RELATIME, 0 },
  { "nostrictatime", OPT_CLEAR, MS_STRICTATIME, 0 },
  { "nosuid", OPT_SET, MS_NOSUID, MOUNT_ATTR_NOSUID },
  { "nosymfollow", OPT_SET, MS_NOSYMFOLLOW, MOUNT_ATTR_NOSYMFOLLOW },
  { "private", OPT_PROPAGATION, MS_PRIVATE, 0 },
  { "ratime", OPT_REC_ATIME, 0, MOUNT_ATTR_RELATIME },
  { "rbind", OPT_RBIND, MS_BIND | MS_REC, 0 },
  { "rdev", OPT_REC_CLEAR, 0, MOUNT_ATTR_NODEV },
  { "rdiratime", OPT_REC_CLEAR, 0, MOUNT_ATTR_NODIRATIME },
  { "relatime", OPT_ATIME, MS_RELATIME, MOUNT_ATTR_RELATIME },
  { "remount", OPT_SET, MS_REMOUNT, 0 },
  { "rexec", OPT_REC_CLEAR, 0, MOUNT_ATTR_NOEXEC },
  { "ridmap", OPT_RIDMAP, 0, 0 },
  { "idmap", OPT_IDMAP, 0, 0 },
  { "rnoatime", OPT_REC_ATIME, 0, MOUNT_ATTR_NOATIME },
  { "rnodev", OPT_REC_SET, 0, MOUNT_ATTR_NODEV },
  { "rnodiratime", OPT_REC_SET, 0, MOUNT_ATTR_NODIRATIME },
  { "rnoexec", OPT_REC_SET, 0, MOUNT_ATTR_NOEXEC },
  { "rnorelatime", OPT_REC_ATIME, 0, MOUNT_ATTR_STRICTATIME },
  { "rnostrictatime", OPT_REC_ATIME, 0, MOUNT_ATTR_RELATIME },
  { "rnosuid", OPT_REC_SET, 0, MOUNT_ATTR_NOSUID },
  { "rnosymfollow", OPT_REC_SET, 0, MOUNT_ATTR_NOSYMFOLLOW },
  { "ro", OPT_SET, MS_RDONLY, MOUNT_ATTR_RDONLY },
  { "rprivate", OPT_PROPAGATION, MS_PRIVATE | MS_REC, 0 },
  { "rrelatime", OPT_REC_ATIME, 0, MOUNT_ATTR_RELATIME },
  { "rro", OPT_REC_SET, 0, MOUNT_ATTR_RDONLY },
  { "rrw", OPT_REC_CLEAR, 0, MOUNT_ATTR_RDONLY },
  { "rshared", OPT_PROPAGATION, MS_SHARED | MS_REC, 0 },
  { "rslave", OPT_PROPAGATION, MS_SLAVE | MS_REC, 0 },
  { "rstrictatime", OPT_REC_ATIME, 0, MOUNT_ATTR_STRICTATIME },
  { "rsuid", OPT_REC_CLEAR, 0, MOUNT_ATTR_NOSUID },
  { "rsymfollow", OPT_REC_CLEAR, 0, MOUNT_ATTR_NOSYMFOLLOW },
  { "runbindable", OPT_PROPAGATION, MS_UNBINDABLE | MS_REC, 0 },
  { "rw", OPT_CLEAR, MS_RDONLY, MOUNT_ATTR_RDONLY },
  { "shared", OPT_PROPAGATION, MS_SHARED, 0 },
  { "silent", OPT_SET, MS_SILENT, 0 },
  { "slave", OPT_PROPAGATION, MS_SLAVE, 0 },
  { "strictatime", OPT_ATIME, MS_STRICTATIME, MOUNT_ATTR_STRICTATIME },
  { "suid", OPT_CLEAR, MS_NOSUID, MOUNT_ATTR_NOSUID },
  { "symfollow", OPT_CLEAR, MS_NOSYMFOLLOW, MOUNT_ATTR_NOSYMFOLLOW },
  { "sync", OPT_SET, MS_SYNCHRONOUS, 0 },
  { "tmpcopyup", OPT_TMPCOPYUP, 0, 0 },
  { "unbindable", OPT_PROPAGATION, MS_UNBINDABLE, 0 },
  /* fstab-only options of mount(8): filesystems would reject them as data */
  { "auto", OPT_IGNORE, 0, 0 },
  { "noauto", OPT_IGNORE, 0, 0 },
  { "nofail", OPT_IGNORE, 0, 0 },
  { "_netdev", OPT_IGNORE, 0, 0 },
  { "user", OPT_IGNORE, 0, 0 },
  { "nouser", OPT_IGNORE, 0, 0 },
  { "users", OPT_IGNORE, 0, 0 },
  { "owner", OPT_IGNORE, 0, 0 },
  { "group", OPT_IGNORE, 0, 0 },
};

static const struct opt *
opt_lookup (const char *name)
{
  /* The first byte first: a config's mounts are parsed several times per
     create, each option against every entry. */
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (opts); i++)
    if (opts[i].name[0] == name[0] && strcmp (opts[i].name, name) == 0)
      return &opts[i];
  /* mount(8) keeps x-* and comment= for userspace helpers */
  if (strncmp (name, "x-", 2) == 0 || strncmp (name, "comment=", 8) == 0)
    {
      static const struct opt ignore = { "", OPT_IGNORE, 0, 0 };
      return &ignore;
    }
  return NULL;
}

bool
brig_mount_option_known (const char *name)
{
  return name && opt_lookup (name) != NULL;
}

char **
brig_mount_option_names (size_t *len)
{
  char **v = xmalloc0 ((BRIG_ARRAY_SIZE (opts) + 1) * sizeof *v);
  size_t n = 0;
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (opts); i++)
    if (opts[i].kind != OPT_IGNORE)
      v[n++] = xstrdup (opts[i].name);
  *len = n;
  return v;
}

unsigned long
brig_mount_propagation_parse (const char *name)
{
  const struct opt *o = name ? opt_lookup (name) : NULL;
  return o && o->kind == OPT_PROPAGATION ? o->ms : 0;
}

unsigned long
brig_mount_attr_flags (void)
{
  return MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC | ATIME_MS | MS_NODIRATIME
         | MS_NOSYMFOLLOW;
}

uint64_t
brig_mount_implied_clr (const struct brig_mount_options *o)
{
  if (o == NULL || !(o->attr_set || o->attr_clr) || (o->attr_set & MOUNT_ATTR_RDONLY))
    return 0;
  return MOUNT_ATTR_RDONLY;
}

static void
set_atime_attr (uint64_t *set, uint64_t *clr, uint64_t value)
{
  *clr |= MOUNT_ATTR__ATIME;
  *set = (*set & ~(uint64_t) MOUNT_ATTR__ATIME) | value;
}

/* A bind's atime, as runc (and a classic bind remount) sets it: an option
 * that sets an atime flag (noatime, relatime, strictatime, nodiratime)
 * replaces the whole atime setting of the source, mode and nodiratime
 * alike, with relatime unless noatime or strictatime says otherwise
 * ("nodiratime" on a noatime source gives relatime,nodiratime); the
 * options that only clear one (atime, norelatime, nostrictatime, diratime)
 * change nothing, the source's setting stays. */
static void
bind_atime (struct brig_mount_options *o)
{
  const uint64_t atime_attrs = MOUNT_ATTR__ATIME | MOUNT_ATTR_NODIRATIME;
  uint64_t mode;

  if (!(o->flags & (ATIME_MS | MS_NODIRATIME)))
    {
      o->attr_set &= ~atime_attrs;
      o->attr_clr &= ~atime_attrs;
      return;
    }
  mode = o->flags & MS_NOATIME       ? MOUNT_ATTR_NOATIME
         : o->flags & MS_STRICTATIME ? MOUNT_ATTR_STRICTATIME
                                     : MOUNT_ATTR_RELATIME;
  o->attr_clr |= atime_attrs;
  o->attr_set = (o->attr_set & ~atime_attrs) | mode
                | (o->flags & MS_NODIRATIME ? MOUNT_ATTR_NODIRATIME : 0);
}

static void
append_data (char **data, size_t *len, const char *opt)
{
  size_t n = strlen (opt);
  *data = xrealloc (*data, *len + n + 2);
  if (*len)
    (*data)[(*len)++] = ',';
  memcpy (*data + *len, opt, n + 1);
  *len += n;
}

int
brig_mount_options_parse (char *const *options, size_t n,
                          struct brig_mount_options *out, brig_error *err)
{
  size_t data_len = 0;

  memset (out, 0, sizeof (*out));
  for (size_t i = 0; options && i < n && options[i]; i++)
    {
      const char *name = options[i];
      const struct opt *o;

      if (*name == '\0')
        {
          brig_mount_options_free (out);
          return brig_error_say (err, EINVAL, "options[%zu]: empty mount option", i);
        }
      o = opt_lookup (name);
      if (o == NULL)
        {
          append_data (&out->data, &data_len, name);
          continue;
        }
      switch (o->kind)
        {
        case OPT_SET:
          out->flags |= o->ms;
          out->cleared &= ~o->ms;
          if (o->attr)
            {
              out->attr_set |= o->attr;
              out->attr_clr &= ~o->attr;
            }
          break;
        case OPT_CLEAR:
          out->flags &= ~o->ms;
          out->cleared |= o->ms;
          if (o->attr)
            {
              out->attr_clr |= o->attr;
              out->attr_set &= ~o->attr;
            }
          break;
        case OPT_ATIME:
          out->flags = (out->flags & ~ATIME_MS) | o->ms;
          out->cleared = (out->cleared | ATIME_MS) & ~o->ms;
          set_atime_attr (&out->attr_set, &out->attr_clr, o->attr);
          break;
        case OPT_PROPAGATION:
          if (out->n_propagation == BRIG_MOUNT_MAX_PROPAGATION)
            {
              brig_mount_options_free (out);
              return brig_error_say (err, EINVAL, "options[%zu]: too many propagation options", i);
            }
          out->propagation[out->n_propagation++] = o->ms;
          break;
        case OPT_REC_SET:
          out->rec_attr_set |= o->attr;
          out->rec_attr_clr &= ~o->attr;
          break;
        case OPT_REC_CLEAR:
          out->rec_attr_clr |= o->attr;
          out->rec_attr_set &= ~o->attr;
          break;
        case OPT_REC_ATIME:
          set_atime_attr (&out->rec_attr_set, &out->rec_attr_clr, o->attr);
          break;
        case OPT_BIND:
          out->flags |= MS_BIND;
          out->bind = true;
          break;
        case OPT_RBIND:
          out->flags |= MS_BIND | MS_REC;
          out->bind = out->recursive = true;
          break;
        case OPT_IDMAP:
          out->idmap = true;
          break;
        case OPT_RIDMAP:
          out->idmap = out->ridmap = true;
          break;
        case OPT_TMPCOPYUP:
          out->tmpcopyup = true;
          break;
        case OPT_IGNORE:
          break;
        }
    }
  bind_atime (out);
  return 0;
}

void
brig_mount_options_free (struct brig_mount_options *o)
{
  if (o == NULL)
    return;
  free (o->data);
  o->data = NULL;
}

bool
brig_config_mounts_at (const oci_config *cfg, const char *dest, const char *type)
{
  for (size_t i = 0; i < cfg->mounts_len; i++)
    {
      const oci_mount *m = &cfg->mounts[i];
      _cleanup_free_ char *clean = NULL;
      if (m->destination == NULL || (type && (m->type == NULL || strcmp (m->type, type) != 0)))
        continue;
      clean = brig_path_clean (m->destination);
      if (strcmp (clean, dest) == 0)
        return true;
    }
  return false;
}

bool
brig_config_mounts_type (const oci_config *cfg, const char *type)
{
  for (size_t i = 0; i < cfg->mounts_len; i++)
    if (cfg->mounts[i].type && strcmp (cfg->mounts[i].type, type) == 0)
      return true;
  return false;
}
