/* Conversions between the OCI (cgroup v1 shaped) resource values and the
 * cgroup v2 files, and the device rule list. Pure functions; the unit
 * tests cover each one.
 *
 *   cpu.shares -> cpu.weight   weight = ceil(10^((L^2 + 125 L) / 612 - 7/34)),
 *                              L = log2(shares); maps 2 -> 1, 1024 (the v1
 *                              default) -> 100 (the v2 default), 262144 -> 10000.
 *   blkio.weight -> io.weight  1 + (weight - 10) * 9999 / 990: [10,1000] onto
 *                              [1,10000] linearly (io.bfq.weight takes the v1
 *                              value unchanged).
 *   memory.swap                OCI swap is memory+swap (the v1 memsw file);
 *                              v2 memory.swap.max is swap alone: swap - limit;
 *                              -1 stays "max"; a swap below the limit, or a
 *                              swap without a memory limit, is an error.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cgroup/internal.h"
#include "utils.h"

/* libm-free log and exp: brig does not link libm for one formula. */
static double
ln_1_2 (double m)  /* ln(m), m in [1, 2) */
{
  double t = (m - 1) / (m + 1), t2 = t * t, term = t, sum = 0;
  for (int k = 1; k < 60; k += 2)
    {
      sum += term / k;
      term *= t2;
    }
  return 2 * sum;
}

static double
exp_small (double x)  /* e^x */
{
  static const double LN2 = 0.69314718055994530942;
  int k = (int) (x / LN2);
  double r = x - k * LN2, term = 1, sum = 1;
  for (int i = 1; i < 40; i++)
    {
      term *= r / i;
      sum += term;
    }
  while (k > 0)
    sum *= 2, k--;
  while (k < 0)
    sum /= 2, k++;
  return sum;
}

uint64_t
brig_cgroup_shares_to_weight (uint64_t shares)
{
  static const double LN2 = 0.69314718055994530942, LN10 = 2.30258509299404568402;
  double m = (double) shares, l, e, w;
  int exp2 = 0;
  uint64_t wi;

  if (shares == 0)
    return 0;
  if (shares <= 2)
    return 1;
  if (shares >= 262144)
    return 10000;
  while (m >= 2)
    m /= 2, exp2++;
  l = exp2 + ln_1_2 (m) / LN2;
  e = (l * l + 125 * l) / 612.0 - 7.0 / 34.0;
  w = exp_small (e * LN10);
  wi = (uint64_t) w;
  /* ceil, but an exact power of two must not round up on float noise */
  if (w - (double) wi > 1e-6)
    wi++;
  if (wi < 1)
    wi = 1;
  if (wi > 10000)
    wi = 10000;
  return wi;
}

uint64_t
brig_cgroup_blkio_to_io_weight (uint64_t weight)
{
  if (weight == 0)
    return 0;
  if (weight < 10)
    weight = 10;
  if (weight > 1000)
    weight = 1000;
  return 1 + (weight - 10) * 9999 / 990;
}

void
brig_cgroup_max_value (int64_t v, char *buf, size_t len)
{
  if (v < 0)
    snprintf (buf, len, "max");
  else
    snprintf (buf, len, "%" PRId64, v);
}

int
brig_cgroup_v2_swap_value (bool has_limit, int64_t limit, bool has_swap, int64_t swap,
                           char *buf, size_t len, brig_error *err)
{
  *buf = '\0';
  if (!has_swap || swap == 0)
    return 0;  /* not asked for: leave memory.swap.max alone */
  if (swap < 0)
    {
      snprintf (buf, len, "max");
      return 0;
    }
  if (!has_limit || limit <= 0)
    return brig_error_set (err, 0,
                           "linux.resources.memory.swap %" PRId64 ": a swap limit needs a memory limit",
                           swap);
  if (swap < limit)
    return brig_error_set (err, 0,
                           "linux.resources.memory.swap %" PRId64 " is below memory.limit %" PRId64
                           " (swap counts memory+swap)", swap, limit);
  snprintf (buf, len, "%" PRId64, swap - limit);
  return 0;
}

/* runc's rules for an access string: any order, repeats allowed, empty
 * refused (it would match no access in one cgroup version and every access
 * in the other). A character other than r, w, m is refused too: runc's v2
 * filter refuses it, and a rule must never mean less than it says. */
static int
parse_access (const char *access, size_t i, unsigned *out, brig_error *err)
{
  unsigned a = 0;
  if (access == NULL)
    {
      *out = BRIG_DEV_READ | BRIG_DEV_WRITE | BRIG_DEV_MKNOD;
      return 0;
    }
  if (*access == '\0')
    return brig_error_set (err, 0, "linux.resources.devices[%zu].access: must not be empty "
                           "(\"rwm\" is every access)", i);
  for (const char *p = access; *p; p++)
    switch (*p)
      {
      case 'r': a |= BRIG_DEV_READ; break;
      case 'w': a |= BRIG_DEV_WRITE; break;
      case 'm': a |= BRIG_DEV_MKNOD; break;
      default:
        return brig_error_set (err, 0, "linux.resources.devices[%zu].access \"%s\": unknown '%c' "
                               "(expected r, w and m)", i, access, *p);
      }
  *out = a;
  return 0;
}

static void
push (struct brig_dev_rule **v, size_t *n, bool allow, char type, int64_t major, int64_t minor,
      unsigned access)
{
  *v = xrealloc (*v, (*n + 1) * sizeof **v);
  (*v)[*n] = (struct brig_dev_rule) { allow, type, major, minor, access };
  (*n)++;
}

int
brig_cgroup_device_rules (const oci_resources *r, struct brig_dev_rule **out, size_t *n,
                          brig_error *err)
{
  /* The devices a container always gets (runc's list): mknod of any
   * device node, and null, zero, full, random, urandom, tty, ptmx, the pts
   * (so /dev/console too) and /dev/net/tun (7 = rwm). They come after the
   * user's rules, as in runc, so a deny cannot take them away. Nothing
   * else: a node that linux.devices creates is reachable only when
   * resources.devices allows it, or the config's deny-all would not hold. */
  const unsigned rwm = BRIG_DEV_READ | BRIG_DEV_WRITE | BRIG_DEV_MKNOD;
  static const struct { char type; int64_t major, minor; unsigned access; } defaults[] = {
    { 'c', -1, -1, BRIG_DEV_MKNOD }, { 'b', -1, -1, BRIG_DEV_MKNOD },
    { 'c', 1, 3, 7 }, { 'c', 1, 5, 7 }, { 'c', 1, 7, 7 }, { 'c', 1, 8, 7 }, { 'c', 1, 9, 7 },
    { 'c', 5, 0, 7 }, { 'c', 5, 2, 7 }, { 'c', 136, -1, 7 }, { 'c', 10, 200, 7 },
  };
  struct brig_dev_rule *v = NULL;
  size_t cnt = 0;

  /* everything starts denied; the rules below open what they name */
  push (&v, &cnt, false, 'a', -1, -1, rwm);
  for (size_t i = 0; r && i < r->devices_len; i++)
    {
      const oci_device_cgroup *d = &r->devices[i];
      char type = 'a';
      unsigned access = 0;
      if (d->type && *d->type)
        {
          if (strlen (d->type) != 1 || strchr ("acbu", d->type[0]) == NULL)
            {
              free (v);
              return brig_error_set (err, 0, "linux.resources.devices[%zu].type \"%s\": "
                                     "expected a, c or b", i, d->type);
            }
          /* 'u' (unbuffered) is a char device for the cgroup */
          type = d->type[0] == 'u' ? 'c' : d->type[0];
        }
      if (parse_access (d->access, i, &access, err) < 0)
        {
          free (v);
          return -EINVAL;
        }
      push (&v, &cnt, d->allow, type, d->has_major ? d->major : -1, d->has_minor ? d->minor : -1,
            access);
    }
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (defaults); i++)
    push (&v, &cnt, true, defaults[i].type, defaults[i].major, defaults[i].minor,
          defaults[i].access);
  *out = v;
  *n = cnt;
  return 0;
}

void
brig_cgroup_device_rule_v1 (const struct brig_dev_rule *rule, char *buf, size_t len)
{
  char maj[24], min[24], acc[4];
  size_t k = 0;
  if (rule->major < 0)
    strcpy (maj, "*");
  else
    snprintf (maj, sizeof maj, "%" PRId64, rule->major);
  if (rule->minor < 0)
    strcpy (min, "*");
  else
    snprintf (min, sizeof min, "%" PRId64, rule->minor);
  if (rule->access & BRIG_DEV_READ)
    acc[k++] = 'r';
  if (rule->access & BRIG_DEV_WRITE)
    acc[k++] = 'w';
  if (rule->access & BRIG_DEV_MKNOD)
    acc[k++] = 'm';
  acc[k] = '\0';
  if (rule->type == 'a')
    snprintf (buf, len, "a");
  else
    snprintf (buf, len, "%c %s:%s %s", rule->type, maj, min, acc);
}

int
brig_cgroup_hugepage_name (const char *page_size, char *buf, size_t len, brig_error *err)
{
  char *end;
  unsigned long long v;
  if (page_size == NULL)
    return brig_error_set (err, 0, "linux.resources.hugepageLimits: pageSize is missing");
  errno = 0;
  v = strtoull (page_size, &end, 10);
  if (errno || end == page_size || v == 0
      || (strcmp (end, "KB") && strcmp (end, "MB") && strcmp (end, "GB")))
    return brig_error_set (err, 0, "linux.resources.hugepageLimits: pageSize \"%s\": "
                           "expected a size like 2MB or 1GB", page_size);
  snprintf (buf, len, "%llu%s", v, end);
  return 0;
}
