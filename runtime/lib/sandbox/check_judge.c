/* Judge the thing, not its name (docs/sandbox.md): what `brig check` and
 * the node policy decide about a config's names is decided by what they
 * reach. A linux.namespaces path by the namespace it opens (its type and
 * inode against the host's); an egress allow entry by the address ranges
 * it covers once every translated IPv6 form is unwrapped to the IPv4
 * range it names; a hostname entry by the addresses create pinned for it. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "namespaces.h"
#include "sandbox/check_internal.h"
#include "sandbox/egress_addr.h"
#include "sandbox/pod.h"
#include "utils.h"

/* ---- namespaces ---- */

enum check_ns_verdict
check_ns_judge (const oci_namespace *ns, const struct brig_check_input *in, char *why,
                size_t size)
{
  int t = ns->type ? brig_ns_from_name (ns->type) : -1;
  int fd = -1, kind = -1, r;
  _cleanup_close_ int own = -1;

  if (t < 0)
    {
      snprintf (why, size, "unknown namespace type: create refuses it");
      return CHECK_NS_UNCHECKED;
    }
  if (in->ns_fd)
    fd = in->ns_fd[t];
  if (fd < 0)
    {
      r = brig_ns_open_path (ns->path, &own, &kind);
      if (r == -EINVAL)
        {
          snprintf (why, size, "%s is not a namespace: create refuses it", ns->path);
          return CHECK_NS_UNCHECKED;
        }
      if (r < 0)
        {
          snprintf (why, size, "%s cannot be opened here (%s): not checked", ns->path,
                    strerror (-r));
          return CHECK_NS_UNCHECKED;
        }
      if (kind != t)
        {
          char host[80];
          /* what it really is: the host's pid namespace under "network" */
          r = brig_ns_is_host (own, (enum brig_ns_type) kind, host, sizeof host);
          snprintf (why, size, "%s is a %s namespace (%s), not %s: create refuses it", ns->path,
                    brig_ns_proc_name ((enum brig_ns_type) kind), r > 0 ? host : "not the host's",
                    ns->type);
          return CHECK_NS_UNCHECKED;
        }
      fd = own;
    }
  r = brig_ns_is_host (fd, (enum brig_ns_type) t, why, size);
  if (r < 0)
    {
      snprintf (why, size, "%s cannot be compared with the host's (%s): not checked", ns->path,
                strerror (-r));
      return CHECK_NS_UNCHECKED;
    }
  return r ? CHECK_NS_HOST : CHECK_NS_OTHER;
}

/* Whether the container's loopback is its own: a network namespace that is
 * new, or joined and judged not the host's. */
static bool
own_loopback (const oci_config *cfg, const struct brig_check_input *in)
{
  const oci_linux *l = cfg->linux;
  char why[256];

  if (in->egress)
    return in->egress->own_netns;
  for (size_t i = 0; l && i < l->namespaces_len; i++)
    if (l->namespaces[i].type && strcmp (l->namespaces[i].type, "network") == 0)
      return l->namespaces[i].path == NULL || *l->namespaces[i].path == '\0'
             || check_ns_judge (&l->namespaces[i], in, why, sizeof why) == CHECK_NS_OTHER;
  return false;
}

/* ---- addresses ---- */

static bool
overlaps (const struct brig_egress_cidr *a, const struct brig_egress_cidr *b)
{
  return a->family == b->family
         && brig_addr_in_prefix (a->addr, a->prefix < b->prefix ? a->prefix : b->prefix, b->addr);
}

/* a lies inside b. */
static bool
inside (const struct brig_egress_cidr *a, const struct brig_egress_cidr *b)
{
  return a->family == b->family && a->prefix >= b->prefix
         && brig_addr_in_prefix (b->addr, b->prefix, a->addr);
}

/* The IPv4 range c reaches through a translated IPv6 form (egress_addr.h,
 * the same reading as the runtime's), into *v4 with the form: false when c
 * is no such form. An entry in the local-use NAT64 range, whose IPv4
 * address depends on a prefix length brig cannot know, is taken as every
 * IPv4 address (the runtime refuses it as an allow entry). */
static bool
unwrap_v4 (const struct brig_egress_cidr *c, struct brig_egress_cidr *v4, enum brig_addr_form *f)
{
  unsigned n = 0;

  if (c->family != AF_INET6)
    return false;
  memset (v4, 0, sizeof *v4);
  *f = brig_addr_unwrap (c->addr, c->prefix, v4->addr, &n);
  if (*f == BRIG_ADDR_NATIVE)
    return false;
  if (*f == BRIG_ADDR_NAT64_LOCAL)
    {
      memset (v4->addr, 0, sizeof v4->addr);
      n = 0;
    }
  v4->family = AF_INET;
  v4->prefix = n;
  v4->port = c->port;
  return true;
}

void
check_addr_unwrap (const struct brig_egress_cidr *c, struct brig_egress_cidr *out)
{
  enum brig_addr_form f;

  if (!unwrap_v4 (c, out, &f))
    *out = *c;
}

/* The ranges an allow entry must not cover, worst class first within
 * each family. */
static const struct {
  const char *cidr;
  enum check_cover cls;
  bool loopback;          /* the container's own in its own network namespace */
  const char *what;
} internal[] = {
  { "169.254.169.254/32", CHECK_COVER_METADATA, false, "a cloud metadata endpoint" },
  { "169.254.170.2/32", CHECK_COVER_METADATA, false, "a cloud metadata endpoint" },
  { "100.100.100.200/32", CHECK_COVER_METADATA, false, "a cloud metadata endpoint" },
  { "fd00:ec2::254/128", CHECK_COVER_METADATA, false, "a cloud metadata endpoint" },
  { "10.0.0.0/8", CHECK_COVER_PRIVATE, false, "private" },
  { "172.16.0.0/12", CHECK_COVER_PRIVATE, false, "private" },
  { "192.168.0.0/16", CHECK_COVER_PRIVATE, false, "private" },
  { "100.64.0.0/10", CHECK_COVER_PRIVATE, false, "shared (carrier-grade NAT)" },
  { "169.254.0.0/16", CHECK_COVER_PRIVATE, false, "link-local" },
  { "224.0.0.0/4", CHECK_COVER_PRIVATE, false, "multicast" },
  { "240.0.0.0/4", CHECK_COVER_PRIVATE, false, "reserved and broadcast" },
  { "127.0.0.0/8", CHECK_COVER_PRIVATE, true, "the host's loopback" },
  { "0.0.0.0/8", CHECK_COVER_PRIVATE, true, "this host (0.0.0.0 reaches its loopback)" },
  { "fc00::/7", CHECK_COVER_PRIVATE, false, "unique local (private)" },
  { "fe80::/10", CHECK_COVER_PRIVATE, false, "link-local" },
  { "ff00::/8", CHECK_COVER_PRIVATE, false, "multicast" },
  { "::1/128", CHECK_COVER_PRIVATE, true, "the host's loopback" },
  { "::/128", CHECK_COVER_PRIVATE, true, "this host (:: reaches its loopback)" },
};

static void
range_of (size_t i, struct brig_egress_cidr *r)
{
  char buf[64], *slash;

  snprintf (buf, sizeof buf, "%s", internal[i].cidr);
  slash = strchr (buf, '/');
  *slash = '\0';
  memset (r, 0, sizeof *r);
  r->family = strchr (buf, ':') ? AF_INET6 : AF_INET;
  if (inet_pton (r->family, buf, r->addr) != 1)
    abort ();
  r->prefix = (unsigned) atoi (slash + 1);
}

enum check_cover
check_egress_covers (const struct brig_egress_cidr *c, bool own_netns, char *what, size_t size)
{
  enum check_cover worst = CHECK_COVER_NONE;

  for (size_t i = 0; i < BRIG_ARRAY_SIZE (internal); i++)
    {
      struct brig_egress_cidr r, v4;
      enum brig_addr_form f;
      const char *via = NULL;
      bool hit;

      if ((own_netns && internal[i].loopback) || internal[i].cls <= worst)
        continue;
      range_of (i, &r);
      hit = overlaps (c, &r);
      if (!hit && r.family == AF_INET && unwrap_v4 (c, &v4, &f) && overlaps (&v4, &r))
        {
          hit = true;
          via = brig_addr_form_name (f);
        }
      if (!hit)
        continue;
      worst = internal[i].cls;
      snprintf (what, size, "%s (%s)%s%s%s", internal[i].cidr, internal[i].what,
                via ? " through its " : "", via ? via : "", via ? " form" : "");
    }
  return worst;
}

/* Whether the node policy's list admits c (inside an entry, the port too). */
static bool
policy_lists (const struct brig_policy_egress *pe, const struct brig_egress_cidr *c)
{
  struct brig_egress_cidr cu, pu;

  check_addr_unwrap (c, &cu);
  for (size_t i = 0; i < pe->n_allow; i++)
    {
      check_addr_unwrap (&pe->allow[i], &pu);
      if (inside (&cu, &pu) && (pe->allow[i].port == 0 || pe->allow[i].port == c->port))
        return true;
    }
  return false;
}

bool
check_policy_admits (const struct brig_policy_egress *pe, const struct brig_egress_cidr *c,
                     bool own_netns)
{
  char what[160];
  return (pe->public_ok && check_egress_covers (c, own_netns, what, sizeof what) == CHECK_COVER_NONE)
         || policy_lists (pe, c);
}

/* ---- the allow entries of a config ---- */

/* Judge one allow entry c (text: how the config names it). */
static void
judge_entry (struct brig_check_report *rep, const struct brig_egress_cidr *c, bool own_netns,
             const char *text)
{
  const struct brig_policy_egress *pe = rep->in->egress_policy;
  char what[160];
  enum check_cover cov = check_egress_covers (c, own_netns, what, sizeof what);

  /* The node operator's word is the last: what the policy's section
   * admits is no finding, what it does not is refused whatever it covers. */
  if (pe && pe->set)
    {
      if (!check_policy_admits (pe, c, own_netns))
        check_add (rep, check_rule_allow_policy, check_rule_allow_policy->severity,
                   xstrdup ("annotations[\"" BRIG_EGRESS_ALLOW_KEY "\"]"),
                   "%s is not inside the node policy's egress.allow", text);
      return;
    }
  if (cov == CHECK_COVER_METADATA)
    check_add (rep, check_rule_allow_metadata, check_rule_allow_metadata->severity,
               xstrdup ("annotations[\"" BRIG_EGRESS_ALLOW_KEY "\"]"), "%s covers %s", text, what);
  else if (cov == CHECK_COVER_PRIVATE)
    check_add (rep, check_rule_allow_private, check_rule_allow_private->severity,
               xstrdup ("annotations[\"" BRIG_EGRESS_ALLOW_KEY "\"]"), "%s covers %s", text, what);
}

/* The hostname create pinned addr (text) for, or NULL. */
static const char *
pinned_name (const brig_egress_policy *eg, const char *addr)
{
  for (size_t i = 0; eg->pinned && i < eg->pinned->len; i++)
    {
      const char *v = eg->pinned->values[i];
      size_t n = strlen (addr);
      for (const char *p = v; (p = strstr (p, addr)); p++)
        if ((p == v || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
          return eg->pinned->keys[i];
    }
  return NULL;
}

/* create, names resolved: every allow rule, pinned addresses included. */
static void
judge_resolved (struct brig_check_report *rep, const brig_egress_policy *eg)
{
  for (size_t i = 0; i < eg->n_rules; i++)
    {
      const struct brig_egress_rule *r = &eg->rules[i];
      struct brig_egress_cidr c = { .family = r->family, .prefix = r->prefix, .port = r->port };
      char addr[INET6_ADDRSTRLEN], text[400];
      const char *name;

      if (r->source != BRIG_EGRESS_USER_ALLOW)
        continue;
      memcpy (c.addr, r->addr, sizeof c.addr);
      inet_ntop (r->family, r->addr, addr, sizeof addr);
      name = r->prefix == (r->family == AF_INET ? 32u : 128u) ? pinned_name (eg, addr) : NULL;
      if (name)
        snprintf (text, sizeof text, "host \"%s\" (pinned to %s)", name, addr);
      else
        snprintf (text, sizeof text, "%s/%u", addr, r->prefix);
      judge_entry (rep, &c, eg->own_netns, text);
    }
}

/* brig check: the annotation as written (no name is resolved here). */
static void
judge_written (struct brig_check_report *rep, const char *allow, bool own_netns)
{
  _cleanup_free_ char *copy = xstrdup (allow);
  char *save = NULL;

  for (char *tok = strtok_r (copy, ",", &save); tok; tok = strtok_r (NULL, ",", &save))
    {
      struct brig_egress_cidr c;
      char host[300];
      int r;

      while (isspace ((unsigned char) *tok))
        tok++;
      for (char *e = tok + strlen (tok); e > tok && isspace ((unsigned char) e[-1]);)
        *--e = '\0';
      /* an entry create refuses runs nowhere */
      r = *tok ? brig_egress_entry_parse (BRIG_EGRESS_ALLOW_KEY, tok, true, &c, host,
                                          sizeof host, NULL) : -EINVAL;
      if (r == 0)
        judge_entry (rep, &c, own_netns, tok);
      else if (r == 1 && !rep->in->names_later && rep->profile >= BRIG_PROFILE_SANDBOX)
        check_add (rep, check_rule_not_checked, BRIG_SEV_MEDIUM,
                   xstrdup ("annotations[\"" BRIG_EGRESS_ALLOW_KEY "\"]"),
                   "host \"%s\" is resolved only at create, where the node policy judges the "
                   "addresses it is pinned to: not checked here", host);
    }
}

/* The mode "public" reaches every public address: the policy's section
 * must say so ("public", or 0.0.0.0/0 and ::/0). */
static bool
policy_admits_public (const struct brig_policy_egress *pe)
{
  struct brig_egress_cidr v4 = { .family = AF_INET }, v6 = { .family = AF_INET6 };
  return pe->public_ok || (policy_lists (pe, &v4) && policy_lists (pe, &v6));
}

void
check_rule_egress_allow (const oci_config *cfg, struct brig_check_report *rep)
{
  const struct brig_policy_egress *pe = rep->in->egress_policy;
  const char *mode = oci_map_get (cfg->annotations, BRIG_EGRESS_KEY);
  const char *allow = oci_map_get (cfg->annotations, BRIG_EGRESS_ALLOW_KEY);

  /* A CRI pause container gets no policy and runs the node's image. */
  if (brig_pod_sandbox_container (cfg->annotations))
    return;
  if (pe && pe->set && (mode == NULL || *mode == '\0'))
    check_add (rep, check_rule_allow_policy, check_rule_allow_policy->severity,
               xstrdup ("annotations[\"" BRIG_EGRESS_KEY "\"]"),
               "no egress policy: every destination is allowed, beyond the node policy's "
               "egress.allow");
  else if (pe && pe->set && strcmp (mode, "public") == 0 && !policy_admits_public (pe))
    check_add (rep, check_rule_allow_policy, check_rule_allow_policy->severity,
               xstrdup ("annotations[\"" BRIG_EGRESS_KEY "\"]"),
               "public reaches every public address, beyond the node policy's egress.allow");
  if (rep->in->egress)
    judge_resolved (rep, rep->in->egress);
  else if (allow && mode && strcmp (mode, "none") != 0)
    judge_written (rep, allow, own_loopback (cfg, rep->in));
}
