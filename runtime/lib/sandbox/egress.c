/* The egress policy: parse the run.brig.egress annotations into prefix
 * rules, resolve hostnames (once, here: /etc/hosts first, then brig's own
 * DNS client, dns.c, since a static binary has no NSS; nothing is resolved
 * when the policy names no hostname),
 * check that the process cannot bypass what the kernel enforces, and
 * describe the result for the state. The kernel side is egress_bpf.c. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>

#include "sandbox/dns.h"
#include "sandbox/egress.h"
#include "sandbox/egress_addr.h"
#include "utils.h"

#define MAX_ENTRIES 256

bool
brig_egress_requested (const oci_map *a)
{
  for (size_t i = 0; a && i < a->len; i++)
    if (strncmp (a->keys[i], BRIG_EGRESS_KEY, sizeof BRIG_EGRESS_KEY - 1) == 0)
      return true;
  return false;
}

void
brig_egress_policy_free (brig_egress_policy *p)
{
  if (p == NULL)
    return;
  free (p->rules);
  if (p->pinned)
    {
      for (size_t i = 0; i < p->pinned->len; i++)
        {
          free (p->pinned->keys[i]);
          free (p->pinned->values[i]);
        }
      free (p->pinned->keys);
      free (p->pinned->values);
      free (p->pinned);
    }
  free (p);
}

static void
add_rule (brig_egress_policy *p, int family, const void *addr, unsigned prefix, uint16_t port,
          bool allow, enum brig_egress_source src)
{
  struct brig_egress_rule *r;
  unsigned bytes = family == AF_INET ? 4 : 16;

  p->rules = xrealloc (p->rules, (p->n_rules + 1) * sizeof *p->rules);
  r = &p->rules[p->n_rules++];
  memset (r, 0, sizeof *r);
  r->family = family;
  memcpy (r->addr, addr, bytes);
  /* clear the host bits so equal prefixes compare equal */
  for (unsigned b = prefix; b < bytes * 8; b++)
    r->addr[b / 8] &= (uint8_t) ~(0x80u >> (b % 8));
  r->prefix = prefix;
  r->port = port;
  r->allow = allow;
  r->source = src;
}

/* A rule for what an address or prefix stands for: one in a translated
 * IPv6 form (egress_addr.h) becomes a rule for its IPv4 prefix, which the
 * programs apply to the IPv4 address and to every form of it. A prefix in
 * 64:ff9b::/32 outside the /96 carries no IPv4 brig can read: allowing one
 * is refused (the programs deny the range). what names the entry for
 * errors. */
static int
add_addr_rule (brig_egress_policy *p, int family, const uint8_t *addr, unsigned prefix,
               uint16_t port, bool allow, enum brig_egress_source src, const char *key,
               const char *what, brig_error *err)
{
  enum brig_addr_form f;
  uint8_t v4[4];
  unsigned v4_prefix;

  if (family == AF_INET6)
    {
      f = brig_addr_unwrap (addr, prefix, v4, &v4_prefix);
      if (brig_addr_form_has_v4 (f))
        {
          add_rule (p, AF_INET, v4, v4_prefix, port, allow, src);
          return 0;
        }
      if (f == BRIG_ADDR_NAT64_LOCAL && allow)
        return brig_error_say (err, EINVAL, "annotation %s: \"%s\" is in 64:ff9b::/32 outside "
                               "64:ff9b::/96 (local-use NAT64), where the IPv4 address "
                               "depends on the network's prefix length: brig denies that "
                               "range; allow the IPv4 address", key, what);
    }
  add_rule (p, family, addr, prefix, port, allow, src);
  return 0;
}

/* A literal CIDR as text: "a.b.c.d/n" or "x::/n". */
static void
add_builtin (brig_egress_policy *p, const char *cidr, bool allow)
{
  char buf[64];
  uint8_t a[16];
  char *slash;
  int family;

  snprintf (buf, sizeof buf, "%s", cidr);
  slash = strchr (buf, '/');
  *slash = '\0';
  family = strchr (buf, ':') ? AF_INET6 : AF_INET;
  if (inet_pton (family, buf, a) != 1)
    abort ();
  add_rule (p, family, a, (unsigned) atoi (slash + 1), 0, allow, BRIG_EGRESS_BUILTIN);
}

/* The cloud metadata endpoints: denied in every mode unless an allow entry
 * names them exactly (same prefix, where the user's rule ranks higher). */
static const char *const metadata[] = {
  "169.254.169.254/32", "169.254.170.2/32", "100.100.100.200/32", "fd00:ec2::254/128",
};

/* Destinations that are not the public internet (issue #12): the host's
 * loopback, private, shared, link-local, multicast and reserved ranges. */
static const char *const non_public[] = {
  "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "169.254.0.0/16", "172.16.0.0/12",
  "192.168.0.0/16", "224.0.0.0/4", "240.0.0.0/4", "::/128", "fc00::/7", "fe80::/10",
  "ff00::/8",
};

/* IPv6 forms the programs judge as IPv6 but that may still reach IPv4
 * (egress_addr.h): the deprecated IPv4-compatible ::a.b.c.d, which a sit
 * tunnel sends to a.b.c.d, and 64:ff9b::/32 outside the well-known /96
 * (local-use NAT64 among it), whose embedding brig cannot read. Denied in
 * every mode (:: and ::1 have rules of their own, 64:ff9b::/96 is looked
 * up as IPv4). */
static const char *const translated_deny[] = { "::/96", "64:ff9b::/32" };

static int
parse_port (const char *s, uint16_t *port)
{
  char *end;
  long v;
  if (!isdigit ((unsigned char) *s))
    return -1;
  v = strtol (s, &end, 10);
  if (*end || v < 1 || v > 65535)
    return -1;
  *port = (uint16_t) v;
  return 0;
}

/* "a.b.c.d[/n]" or "x:y::[/n]" -> family, address, prefix. */
static int
parse_cidr (const char *s, int *family, uint8_t *addr, unsigned *prefix)
{
  char buf[INET6_ADDRSTRLEN + 8];
  char *slash;
  unsigned max;

  if (strlen (s) >= sizeof buf)
    return -1;
  strcpy (buf, s);
  slash = strchr (buf, '/');
  if (slash)
    *slash = '\0';
  *family = strchr (buf, ':') ? AF_INET6 : AF_INET;
  if (inet_pton (*family, buf, addr) != 1)
    return -1;
  max = *family == AF_INET ? 32 : 128;
  *prefix = max;
  if (slash)
    {
      char *end;
      long v;
      if (!isdigit ((unsigned char) slash[1]))
        return -1;
      v = strtol (slash + 1, &end, 10);
      if (*end || v < 0 || v > (long) max)
        return -1;
      *prefix = (unsigned) v;
    }
  return 0;
}

static bool
valid_hostname (const char *s)
{
  size_t n = strlen (s);
  if (n == 0 || n > 253 || *s == '-' || *s == '.')
    return false;
  for (const char *c = s; *c; c++)
    if (!isalnum ((unsigned char) *c) && *c != '-' && *c != '.' && *c != '_')
      return false;
  return true;
}

/* An address a DNS answer must not pin: the host's loopback and
 * unspecified ranges and the metadata endpoints, also in a translated form
 * (64:ff9b::a9fe:a9fe is 169.254.169.254), and the IPv4-mapped,
 * IPv4-compatible and local-use NAT64 forms, which are no one's real AAAA
 * record. An allow rule for one would beat the built-in deny, so only the
 * operator may name them (as an address or in /etc/hosts), not whoever
 * answers or spoofs a query. *form names a translated form (static). */
static bool
dns_forbidden (const struct brig_dns_addr *a, const char **form)
{
  static const uint8_t zero[15] = { 0 };
  const uint8_t *ip = a->addr;
  int family = a->family;
  uint8_t v4[4];
  char text[INET6_ADDRSTRLEN + 4];

  *form = NULL;
  if (family == AF_INET6)
    {
      enum brig_addr_form f = brig_addr_unwrap (a->addr, 128, v4, NULL);
      if (f != BRIG_ADDR_NATIVE)
        *form = brig_addr_form_name (f);
      if (f == BRIG_ADDR_MAPPED || f == BRIG_ADDR_COMPAT || f == BRIG_ADDR_NAT64_LOCAL)
        return true;
      if (brig_addr_form_has_v4 (f))
        {
          ip = v4;
          family = AF_INET;
        }
    }
  if (family == AF_INET && (ip[0] == 127 || ip[0] == 0))
    return true;
  if (family == AF_INET6 && memcmp (ip, zero, 15) == 0)
    return true;
  inet_ntop (family, ip, text, sizeof text);
  strcat (text, family == AF_INET ? "/32" : "/128");
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (metadata); i++)
    if (strcmp (text, metadata[i]) == 0)
      return true;
  return false;
}

/* A name /etc/hosts does not know: ask DNS (dns.c), as rules. */
static int
resolve_dns (brig_egress_policy *p, const char *name, uint16_t port, brig_error *err)
{
  struct brig_dns_addr a[BRIG_DNS_MAX_ADDRS];
  _cleanup_free_ char *list = NULL;
  size_t n;
  int r;

  r = brig_dns_resolve (name, &p->dns_deadline, a, &n, err);
  if (r < 0)
    return brig_error_wrap (err, "annotation " BRIG_EGRESS_ALLOW_KEY);
  for (size_t i = 0; i < n; i++)
    {
      char text[INET6_ADDRSTRLEN], *old = list;
      const char *form;
      inet_ntop (a[i].family, a[i].addr, text, sizeof text);
      if (dns_forbidden (&a[i], &form))
        return brig_error_say (err, EPERM, "annotation " BRIG_EGRESS_ALLOW_KEY ": host \"%s\" resolves "
                               "through DNS to %s%s%s%s, which only an address or /etc/hosts "
                               "may allow", name, text, form ? " (" : "", form ? form : "",
                               form ? " form)" : "");
      r = add_addr_rule (p, a[i].family, a[i].addr, a[i].family == AF_INET ? 32 : 128, port,
                         true, BRIG_EGRESS_USER_ALLOW, BRIG_EGRESS_ALLOW_KEY, name, err);
      if (r < 0)
        return r;
      list = old ? xasprintf ("%s,%s", old, text) : xstrdup (text);
      free (old);
    }
  if (oci_map_get (p->pinned, name) == NULL)
    oci_map_set (&p->pinned, name, list);
  return 0;
}

/* Every address /etc/hosts gives name (case-insensitive), as rules;
 * a name it does not know goes to DNS ("hosts: files dns"). */
/* name from p->use_pinned: the addresses create resolved, nothing asked. */
static int
resolve_pinned (brig_egress_policy *p, const char *name, uint16_t port, brig_error *err)
{
  const char *v = oci_map_get (p->use_pinned, name);
  _cleanup_free_ char *copy = v ? xstrdup (v) : NULL;
  char *save = NULL;

  if (v == NULL)
    return brig_error_say (err, ENOENT, "annotation " BRIG_EGRESS_ALLOW_KEY ": host \"%s\" has "
                           "no pinned address", name);
  for (char *a = strtok_r (copy, ",", &save); a; a = strtok_r (NULL, ",", &save))
    {
      uint8_t b[16];
      int family = strchr (a, ':') ? AF_INET6 : AF_INET;
      int r;
      if (inet_pton (family, a, b) != 1)
        return brig_error_say (err, EINVAL, "host \"%s\": pinned address \"%s\"", name, a);
      r = add_addr_rule (p, family, b, family == AF_INET ? 32 : 128, port, true,
                         BRIG_EGRESS_USER_ALLOW, BRIG_EGRESS_ALLOW_KEY, name, err);
      if (r < 0)
        return r;
    }
  if (oci_map_get (p->pinned, name) == NULL)
    oci_map_set (&p->pinned, name, v);
  return 0;
}

static int
resolve_hosts (brig_egress_policy *p, const char *name, uint16_t port, brig_error *err)
{
  _cleanup_free_ char *buf = NULL;
  _cleanup_free_ char *list = NULL;
  char *save = NULL;
  size_t found = 0;

  if (p->use_pinned)
    return resolve_pinned (p, name, port, err);

  if (brig_read_file_at (AT_FDCWD, "/etc/hosts", &buf, NULL, err) < 0)
    return brig_error_wrap (err, "annotation " BRIG_EGRESS_ALLOW_KEY ": resolve \"%s\"", name);
  for (char *line = strtok_r (buf, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      char *hash = strchr (line, '#'), *ws = NULL, *addr, *tok;
      uint8_t a[16];
      int family;
      if (hash)
        *hash = '\0';
      addr = strtok_r (line, " \t", &ws);
      if (addr == NULL)
        continue;
      family = strchr (addr, ':') ? AF_INET6 : AF_INET;
      if (inet_pton (family, addr, a) != 1)
        continue;
      while ((tok = strtok_r (NULL, " \t", &ws)))
        if (strcasecmp (tok, name) == 0)
          {
            char *old = list;
            int r = add_addr_rule (p, family, a, family == AF_INET ? 32 : 128, port, true,
                                   BRIG_EGRESS_USER_ALLOW, BRIG_EGRESS_ALLOW_KEY, name, err);
            if (r < 0)
              return r;
            list = old ? xasprintf ("%s,%s", old, addr) : xstrdup (addr);
            free (old);
            found++;
            break;
          }
    }
  if (found == 0)
    return resolve_dns (p, name, port, err);
  if (oci_map_get (p->pinned, name) == NULL)
    oci_map_set (&p->pinned, name, list);
  return 0;
}

int
brig_egress_entry_parse (const char *key, const char *entry, bool allow,
                         struct brig_egress_cidr *c, char *host_out, size_t size,
                         brig_error *err)
{
  char buf[300];
  char *host = buf, *port_s = NULL;

  memset (c, 0, sizeof *c);
  if (strlen (entry) >= sizeof buf)
    return brig_error_say (err, EINVAL, "annotation %s: entry \"%.40s...\" is too long", key, entry);
  strcpy (buf, entry);
  if (buf[0] == '[')
    {
      char *close = strchr (buf, ']');
      if (close == NULL || (close[1] != '\0' && close[1] != ':'))
        return brig_error_say (err, EINVAL, "annotation %s: \"%s\" is not [IPv6-CIDR]:port", key, entry);
      *close = '\0';
      host = buf + 1;
      if (close[1] == ':')
        port_s = close + 2;
    }
  else if (strchr (buf, ':') == strrchr (buf, ':') && strchr (buf, ':'))
    {
      /* one colon: v4 or hostname with a port (an IPv6 address has more) */
      port_s = strchr (buf, ':');
      *port_s++ = '\0';
    }
  if (port_s && parse_port (port_s, &c->port) < 0)
    return brig_error_say (err, EINVAL, "annotation %s: \"%s\": port must be 1-65535", key, entry);
  if (c->port && !allow)
    return brig_error_say (err, EINVAL, "annotation %s: \"%s\": deny entries are CIDRs without a port",
                           key, entry);
  if (parse_cidr (host, &c->family, c->addr, &c->prefix) == 0)
    return 0;
  if (!allow || !valid_hostname (host) || isdigit ((unsigned char) host[strlen (host) - 1])
      || strchr (host, '/') || strlen (host) >= size)
    return brig_error_say (err, EINVAL, "annotation %s: \"%s\" is not a CIDR%s", key, entry,
                           allow ? ", CIDR:port or hostname[:port]" : "");
  strcpy (host_out, host);
  return 1;
}

/* One entry of allow or deny (brig_egress_entry_parse), hostnames
 * resolved. */
static int
parse_entry (brig_egress_policy *p, const char *key, const char *entry, bool allow,
             brig_error *err)
{
  struct brig_egress_cidr c;
  char host[300];
  int r = brig_egress_entry_parse (key, entry, allow, &c, host, sizeof host, err);

  if (r < 0)
    return r;
  if (r == 1)
    return resolve_hosts (p, host, c.port, err);
  return add_addr_rule (p, c.family, c.addr, c.prefix, c.port, allow,
                        allow ? BRIG_EGRESS_USER_ALLOW : BRIG_EGRESS_USER_DENY, key, entry, err);
}

static int
parse_list (brig_egress_policy *p, const char *key, const char *value, bool allow,
            brig_error *err)
{
  _cleanup_free_ char *copy = xstrdup (value);
  char *save = NULL;
  size_t n = 0;

  for (char *tok = strtok_r (copy, ",", &save); tok; tok = strtok_r (NULL, ",", &save))
    {
      int r;
      while (isspace ((unsigned char) *tok))
        tok++;
      for (char *e = tok + strlen (tok); e > tok && isspace ((unsigned char) e[-1]);)
        *--e = '\0';
      if (*tok == '\0')
        continue;
      if (++n > MAX_ENTRIES)
        return brig_error_say (err, E2BIG, "annotation %s: more than %d entries", key, MAX_ENTRIES);
      r = parse_entry (p, key, tok, allow, err);
      if (r < 0)
        return r;
    }
  return 0;
}

static int egress_parse (const oci_map *ann, bool own_netns, const oci_map *pinned,
                         brig_egress_policy **out, brig_error *err);

int
brig_egress_parse (const oci_map *ann, bool own_netns, brig_egress_policy **out,
                   brig_error *err)
{
  return egress_parse (ann, own_netns, NULL, out, err);
}

int
brig_egress_parse_pinned (const oci_map *ann, bool own_netns, const oci_map *pinned,
                          brig_egress_policy **out, brig_error *err)
{
  static const oci_map none = { NULL, NULL, 0 };
  return egress_parse (ann, own_netns, pinned ? pinned : &none, out, err);
}

static int
egress_parse (const oci_map *ann, bool own_netns, const oci_map *pinned,
              brig_egress_policy **out, brig_error *err)
{
  const char *mode = oci_map_get (ann, BRIG_EGRESS_KEY);
  const char *allow = oci_map_get (ann, BRIG_EGRESS_ALLOW_KEY);
  const char *deny = oci_map_get (ann, BRIG_EGRESS_DENY_KEY);
  const char *hostnet = oci_map_get (ann, BRIG_EGRESS_HOSTNET_KEY);
  brig_egress_policy *p;
  int r;

  *out = NULL;
  /* a misspelt key would silently weaken the policy */
  for (size_t i = 0; ann && i < ann->len; i++)
    {
      const char *k = ann->keys[i];
      if (strncmp (k, BRIG_EGRESS_KEY, sizeof BRIG_EGRESS_KEY - 1) == 0
          && strcmp (k, BRIG_EGRESS_KEY) != 0 && strcmp (k, BRIG_EGRESS_ALLOW_KEY) != 0
          && strcmp (k, BRIG_EGRESS_DENY_KEY) != 0 && strcmp (k, BRIG_EGRESS_HOSTNET_KEY) != 0)
        return brig_error_say (err, EINVAL, "annotation %s: unknown key (known: "
                               BRIG_EGRESS_KEY ", " BRIG_EGRESS_ALLOW_KEY ", "
                               BRIG_EGRESS_DENY_KEY ", " BRIG_EGRESS_HOSTNET_KEY ")", k);
    }
  if (hostnet && strcmp (hostnet, "true") != 0 && strcmp (hostnet, "false") != 0)
    return brig_error_say (err, EINVAL, "annotation " BRIG_EGRESS_HOSTNET_KEY ": \"%s\" is not true or "
                           "false", hostnet);
  if (mode == NULL)
    return brig_error_say (err, EINVAL, "annotation %s: needs " BRIG_EGRESS_KEY
                           " (none, public or allowlist)",
                           allow ? BRIG_EGRESS_ALLOW_KEY : BRIG_EGRESS_DENY_KEY);
  p = xmalloc0 (sizeof *p);
  p->own_netns = own_netns;
  p->use_pinned = pinned;
  if (strcmp (mode, "none") == 0)
    p->mode = BRIG_EGRESS_NONE;
  else if (strcmp (mode, "public") == 0)
    p->mode = BRIG_EGRESS_PUBLIC;
  else if (strcmp (mode, "allowlist") == 0)
    p->mode = BRIG_EGRESS_ALLOWLIST;
  else
    {
      brig_egress_policy_free (p);
      return brig_error_say (err, EINVAL, "annotation " BRIG_EGRESS_KEY ": \"%s\" is not none, public or "
                             "allowlist", mode);
    }
  if (p->mode == BRIG_EGRESS_NONE && allow && *allow)
    {
      brig_egress_policy_free (p);
      return brig_error_say (err, EINVAL, "annotation " BRIG_EGRESS_ALLOW_KEY ": not allowed with "
                             BRIG_EGRESS_KEY "=none (use allowlist)");
    }
  /* The host is more than its loopback: every address of its interfaces,
   * those added later too, and its abstract unix sockets, none of which a
   * program on addresses can hold. Only an explicit opt-in accepts that. */
  if (!own_netns && (hostnet == NULL || strcmp (hostnet, "true") != 0))
    {
      brig_egress_policy_free (p);
      return brig_error_say (err, EPERM, "annotation " BRIG_EGRESS_KEY ": the container would run in the "
                             "host's network namespace, where the addresses of the host's "
                             "interfaces (also those added later) and its abstract unix "
                             "sockets reach the host's services; give it a network namespace "
                             "of its own, or set " BRIG_EGRESS_HOSTNET_KEY "=true to accept "
                             "that");
    }

  /* the default for everything no longer prefix decides */
  add_builtin (p, "0.0.0.0/0", p->mode == BRIG_EGRESS_PUBLIC);
  add_builtin (p, "::/0", p->mode == BRIG_EGRESS_PUBLIC);
  if (p->mode == BRIG_EGRESS_PUBLIC)
    for (size_t i = 0; i < BRIG_ARRAY_SIZE (non_public); i++)
      add_builtin (p, non_public[i], false);
  /* Loopback: the container's own in its own network namespace, else the
   * host's (denied by every mode). */
  add_builtin (p, "127.0.0.0/8", own_netns);
  add_builtin (p, "::1/128", own_netns);
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (metadata); i++)
    add_builtin (p, metadata[i], false);
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (translated_deny); i++)
    add_builtin (p, translated_deny[i], false);

  if ((allow && (r = parse_list (p, BRIG_EGRESS_ALLOW_KEY, allow, true, err)) < 0)
      || (deny && (r = parse_list (p, BRIG_EGRESS_DENY_KEY, deny, false, err)) < 0))
    {
      brig_egress_policy_free (p);
      return r;
    }
  *out = p;
  return 0;
}

static char *
rule_text (const struct brig_egress_rule *r)
{
  char a[INET6_ADDRSTRLEN];
  inet_ntop (r->family, r->addr, a, sizeof a);
  if (r->port == 0)
    return xasprintf ("%s/%u", a, r->prefix);
  if (r->family == AF_INET6)
    return xasprintf ("[%s/%u]:%u", a, r->prefix, r->port);
  return xasprintf ("%s/%u:%u", a, r->prefix, r->port);
}

oci_egress_state *
brig_egress_state (const brig_egress_policy *p, const char *dir)
{
  static const char *const modes[] = { "none", "public", "allowlist" };
  oci_egress_state *s = xmalloc0 (sizeof *s);
  size_t na = 0, nd = 0;

  s->mode = xstrdup (modes[p->mode]);
  /* no cgroup v2 directory: create applied it only where the network
   * namespace alone holds it (mode none, nothing but lo) */
  s->enforcement = dir ? xasprintf ("cgroup-bpf %s", dir)
                       : xstrdup ("netns (a network namespace with only its loopback)");
  s->own_netns = p->own_netns;
  s->has_own_netns = true;
  s->allow = xmalloc0 ((p->n_rules + 1) * sizeof *s->allow);
  s->deny = xmalloc0 ((p->n_rules + 1) * sizeof *s->deny);
  for (size_t i = 0; i < p->n_rules; i++)
    {
      /* the defaults are in the mode */
      if (p->rules[i].prefix == 0)
        continue;
      if (p->rules[i].allow)
        s->allow[na++] = rule_text (&p->rules[i]);
      else
        s->deny[nd++] = rule_text (&p->rules[i]);
    }
  s->allow_len = na;
  s->deny_len = nd;
  for (size_t i = 0; p->pinned && i < p->pinned->len; i++)
    oci_map_set (&s->pinned, p->pinned->keys[i], p->pinned->values[i]);
  return s;
}
