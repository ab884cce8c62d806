/* What a network namespace is configured with, as a text a reset compares
 * (docs/sandbox.md "The network namespace"): a pinned namespace is reused
 * only when its description is the one taken when it was fresh (the new
 * init waiting for start, before any tenant code ran), so that a tenant
 * that could change it (CAP_NET_ADMIN the decision did not know of, a
 * way the rules missed) hands nothing on. Judged on the namespace itself,
 * not on what the config says the tenant could do.
 *
 * One line per object: "WHAT KEY... #HASH", the hash (FNV-1a, 64 bits)
 * over the object's netlink message without what only counts traffic or
 * time (statistics, cache info): every interface with its flags, MTU,
 * queue length, addresses and per-device settings; every address, route
 * (all tables, all families), policy rule, neighbour entry, nexthop,
 * namespace id, device configuration (netconf) and queueing discipline;
 * nftables tables; legacy iptables tables with their entry counts; IPsec
 * states and policies. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_link.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/xfrm.h>
#include <netinet/in.h>

#include "sandbox/reset_internal.h"
#include "utils.h"

#ifndef RTM_GETNEXTHOP
#define RTM_GETNEXTHOP 106
#endif

/* The lines so far (sorted at the end). */
struct desc {
  char **v;
  size_t n;
};

static void
add_line (struct desc *d, char *line)
{
  d->v = xrealloc (d->v, (d->n + 1) * sizeof *d->v);
  d->v[d->n++] = line;
}

static uint64_t
fnv (uint64_t h, const void *p, size_t len)
{
  const unsigned char *b = p;
  for (size_t i = 0; i < len; i++)
    h = (h ^ b[i]) * UINT64_C (0x100000001b3);
  return h;
}

#define FNV_START UINT64_C (0xcbf29ce484222325)

/* One kind of object and how its messages are read. */
struct kind {
  const char *what;
  int proto;
  uint16_t type;
  size_t hdr;                     /* the fixed header after nlmsghdr */
  const unsigned short *skip;     /* attributes that count, not configure */
  size_t nskip;
  void (*label) (const struct nlmsghdr *m, char *buf, size_t size);
};

static bool
skipped (const struct kind *k, unsigned short type)
{
  for (size_t i = 0; i < k->nskip; i++)
    if (k->skip[i] == type)
      return true;
  return false;
}

static const struct rtattr *
attr (const struct nlmsghdr *m, size_t hdr, unsigned short type)
{
  int left = (int) m->nlmsg_len - (int) NLMSG_LENGTH (hdr);
  const struct rtattr *a = (const struct rtattr *) ((const char *) NLMSG_DATA (m)
                                                    + NLMSG_ALIGN (hdr));
  for (; left > 0 && RTA_OK (a, left); a = RTA_NEXT (a, left))
    if ((a->rta_type & NLA_TYPE_MASK) == type)
      return a;
  return NULL;
}

static void
addr_text (int family, const struct rtattr *a, char *buf, size_t size)
{
  if (a == NULL)
    snprintf (buf, size, "-");
  else if (inet_ntop (family, RTA_DATA (a), buf, (socklen_t) size) == NULL)
    snprintf (buf, size, "?");
}

static void
label_link (const struct nlmsghdr *m, char *buf, size_t size)
{
  const struct ifinfomsg *i = NLMSG_DATA (m);
  const struct rtattr *name = attr (m, sizeof *i, IFLA_IFNAME), *mtu = attr (m, sizeof *i, IFLA_MTU);
  snprintf (buf, size, "link %d %s flags 0x%x mtu %u", i->ifi_index,
            name ? (const char *) RTA_DATA (name) : "?", i->ifi_flags,
            mtu ? *(const unsigned *) RTA_DATA (mtu) : 0);
}

static void
label_addr (const struct nlmsghdr *m, char *buf, size_t size)
{
  const struct ifaddrmsg *i = NLMSG_DATA (m);
  const struct rtattr *a = attr (m, sizeof *i, IFA_LOCAL);
  char s[INET6_ADDRSTRLEN];
  addr_text (i->ifa_family, a ? a : attr (m, sizeof *i, IFA_ADDRESS), s, sizeof s);
  snprintf (buf, size, "address %s/%u dev %u", s, i->ifa_prefixlen, i->ifa_index);
}

static void
label_route (const struct nlmsghdr *m, char *buf, size_t size)
{
  const struct rtmsg *r = NLMSG_DATA (m);
  const struct rtattr *t = attr (m, sizeof *r, RTA_TABLE), *o = attr (m, sizeof *r, RTA_OIF);
  char s[INET6_ADDRSTRLEN];
  addr_text (r->rtm_family, attr (m, sizeof *r, RTA_DST), s, sizeof s);
  snprintf (buf, size, "route family %u table %u %s/%u type %u dev %d", r->rtm_family,
            t ? *(const unsigned *) RTA_DATA (t) : r->rtm_table, s, r->rtm_dst_len, r->rtm_type,
            o ? *(const int *) RTA_DATA (o) : 0);
}

static void
label_rule (const struct nlmsghdr *m, char *buf, size_t size)
{
  const struct rtmsg *r = NLMSG_DATA (m);
  const struct rtattr *p = attr (m, sizeof *r, 6 /* FRA_PRIORITY */);
  snprintf (buf, size, "rule family %u priority %u table %u", r->rtm_family,
            p ? *(const unsigned *) RTA_DATA (p) : 0, r->rtm_table);
}

static void
label_neigh (const struct nlmsghdr *m, char *buf, size_t size)
{
  const struct ndmsg *n = NLMSG_DATA (m);
  char s[INET6_ADDRSTRLEN];
  addr_text (n->ndm_family, attr (m, sizeof *n, NDA_DST), s, sizeof s);
  snprintf (buf, size, "neighbour %s dev %d", s, n->ndm_ifindex);
}

static void
label_qdisc (const struct nlmsghdr *m, char *buf, size_t size)
{
  const struct tcmsg *t = NLMSG_DATA (m);
  const struct rtattr *k = attr (m, sizeof *t, TCA_KIND);
  snprintf (buf, size, "qdisc dev %d %s handle 0x%x", t->tcm_ifindex,
            k ? (const char *) RTA_DATA (k) : "?", t->tcm_handle);
}

static void
label_plain (const struct nlmsghdr *m, char *buf, size_t size)
{
  (void) m;
  snprintf (buf, size, "object");
}

static void
label_nft (const struct nlmsghdr *m, char *buf, size_t size)
{
  const struct nfgenmsg *g = NLMSG_DATA (m);
  const struct rtattr *n = attr (m, sizeof *g, NFTA_TABLE_NAME);
  snprintf (buf, size, "table family %u %s", g->nfgen_family,
            n ? (const char *) RTA_DATA (n) : "?");
}

/* What counts traffic or time, per kind (the rest is configuration). */
static const unsigned short link_skip[] = { IFLA_STATS, IFLA_STATS64 };
static const unsigned short addr_skip[] = { IFA_CACHEINFO };
static const unsigned short route_skip[] = { RTA_CACHEINFO, RTA_EXPIRES };
static const unsigned short neigh_skip[] = { NDA_CACHEINFO, NDA_PROBES };
static const unsigned short qdisc_skip[] = { TCA_STATS, TCA_XSTATS, TCA_STATS2 };

#define SKIP(a) a, BRIG_ARRAY_SIZE (a)
static const struct kind kinds[] = {
  { "link", NETLINK_ROUTE, RTM_GETLINK, sizeof (struct ifinfomsg), SKIP (link_skip), label_link },
  { "address", NETLINK_ROUTE, RTM_GETADDR, sizeof (struct ifaddrmsg), SKIP (addr_skip), label_addr },
  { "route", NETLINK_ROUTE, RTM_GETROUTE, sizeof (struct rtmsg), SKIP (route_skip), label_route },
  { "rule", NETLINK_ROUTE, RTM_GETRULE, sizeof (struct rtmsg), NULL, 0, label_rule },
  { "neighbour", NETLINK_ROUTE, RTM_GETNEIGH, sizeof (struct ndmsg), SKIP (neigh_skip), label_neigh },
  { "netconf", NETLINK_ROUTE, RTM_GETNETCONF, sizeof (struct rtgenmsg) + 3, NULL, 0, label_plain },
  { "qdisc", NETLINK_ROUTE, RTM_GETQDISC, sizeof (struct tcmsg), SKIP (qdisc_skip), label_qdisc },
  { "nexthop", NETLINK_ROUTE, RTM_GETNEXTHOP, 8 /* struct nhmsg */, NULL, 0, label_plain },
  { "nsid", NETLINK_ROUTE, RTM_GETNSID, sizeof (struct rtgenmsg) + 3, NULL, 0, label_plain },
};

/* The hash of one message: its fixed header, then every attribute but
 * the skipped ones. Inside a link's per-family settings (IFLA_AF_SPEC),
 * IPv6's statistics and timers are counters too. */
static uint64_t
message_hash (const struct kind *k, const struct nlmsghdr *m)
{
  uint64_t h = fnv (FNV_START, NLMSG_DATA (m), k->hdr);

  /* (IPsec objects are only counted: a fresh namespace has none, and
   * their headers carry lifetimes.) */
  if (k->hdr == 0)
    return 0;
  int left = (int) m->nlmsg_len - (int) NLMSG_LENGTH (k->hdr);
  const struct rtattr *a = (const struct rtattr *) ((const char *) NLMSG_DATA (m)
                                                    + NLMSG_ALIGN (k->hdr));

  for (; left > 0 && RTA_OK (a, left); a = RTA_NEXT (a, left))
    {
      unsigned short type = a->rta_type & NLA_TYPE_MASK;
      if (skipped (k, type))
        continue;
      if (k->type == RTM_GETLINK && type == IFLA_AF_SPEC)
        {
          int fl = (int) RTA_PAYLOAD (a);
          for (const struct rtattr *f = RTA_DATA (a); RTA_OK (f, fl); f = RTA_NEXT (f, fl))
            {
              int il = (int) RTA_PAYLOAD (f);
              h = fnv (h, &f->rta_type, sizeof f->rta_type);
              if ((f->rta_type & NLA_TYPE_MASK) != AF_INET6)
                {
                  h = fnv (h, RTA_DATA (f), RTA_PAYLOAD (f));
                  continue;
                }
              for (const struct rtattr *i = RTA_DATA (f); RTA_OK (i, il); i = RTA_NEXT (i, il))
                {
                  unsigned short it = i->rta_type & NLA_TYPE_MASK;
                  if (it == IFLA_INET6_STATS || it == IFLA_INET6_ICMP6STATS
                      || it == IFLA_INET6_CACHEINFO)
                    continue;
                  h = fnv (h, i, i->rta_len);
                }
            }
          continue;
        }
      h = fnv (h, a, a->rta_len);
    }
  return h;
}

/* Dump one kind into d. A dump that fails is a line too: the same failure
 * on both sides compares equal, a new one does not. */
static void
dump_kind (int fd, const struct kind *k, uint16_t family, struct desc *d)
{
  static char buf[65536] __attribute__ ((aligned (4)));
  struct {
    struct nlmsghdr h;
    char body[64];
  } req;
  int r = 0;

  memset (&req, 0, sizeof req);
  req.h.nlmsg_len = (uint32_t) NLMSG_LENGTH (k->hdr);
  req.h.nlmsg_type = k->type;
  req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  req.h.nlmsg_seq = k->type;
  req.body[0] = (char) family;   /* every header starts with its family */
  if (k->proto == NETLINK_NETFILTER)
    ((struct nfgenmsg *) req.body)->version = NFNETLINK_V0;
  if (send (fd, &req, req.h.nlmsg_len, 0) < 0)
    r = -errno;
  while (r == 0)
    {
      ssize_t got = recv (fd, buf, sizeof buf, 0);
      unsigned int n = (unsigned int) got;
      if (got < 0 && errno == EINTR)
        continue;
      if (got <= 0)
        {
          r = got < 0 ? -errno : -EPROTO;
          break;
        }
      for (struct nlmsghdr *m = (struct nlmsghdr *) buf; NLMSG_OK (m, n); m = NLMSG_NEXT (m, n))
        {
          char label[160];
          if (m->nlmsg_type == NLMSG_DONE)
            return;
          if (m->nlmsg_type == NLMSG_ERROR)
            {
              r = ((struct nlmsgerr *) NLMSG_DATA (m))->error;
              if (r == 0)
                return;
              break;
            }
          if (m->nlmsg_len < NLMSG_LENGTH (k->hdr))
            continue;
          k->label (m, label, sizeof label);
          add_line (d, xasprintf ("%s: %s #%016llx", k->what, label,
                                  (unsigned long long) message_hash (k, m)));
        }
    }
  add_line (d, xasprintf ("%s: dump failed: %s", k->what, strerror (-r)));
}

/* Legacy iptables: the tables this namespace has (instantiated on first
 * use) and their entry counts. */
static void
xtables (const char *names, int family, int level, struct desc *d)
{
  struct xt_info {
    char name[32];
    unsigned int valid_hooks, hook_entry[5], underflow[5], num_entries, size;
  } info;
  _cleanup_free_ char *path = xasprintf ("/proc/thread-self/net/%s", names), *text = NULL;
  _cleanup_close_ int fd = -1;
  char *save = NULL;

  if (brig_read_file_at (AT_FDCWD, path, &text, NULL, NULL) < 0 || *text == '\0')
    return;
  /* Only for tables listed (asking about another could instantiate it). */
  if (level >= 0)
    fd = socket (family, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
  for (char *t = strtok_r (text, "\n", &save); t; t = strtok_r (NULL, "\n", &save))
    {
      socklen_t len = sizeof info;
      memset (&info, 0, sizeof info);
      snprintf (info.name, sizeof info.name, "%s", t);
      if (fd >= 0 && getsockopt (fd, level, 64 /* IPT_SO_GET_INFO, IP6T_SO_GET_INFO */, &info,
                                 &len) == 0)
        add_line (d, xasprintf ("%s: %s entries %u size %u", names, t, info.num_entries,
                                info.size));
      else
        add_line (d, xasprintf ("%s: %s", names, t));
    }
}

/* Whether asking the kernel about subsystem mod cannot load a module:
 * it is there already, or the kernel loads none. */
static bool
present (const char *mod)
{
  _cleanup_free_ char *p = xasprintf ("/sys/module/%s", mod);
  return access ("/proc/modules", F_OK) < 0 || access (p, F_OK) == 0;
}

static int
cmp_str (const void *a, const void *b)
{
  return strcmp (*(char *const *) a, *(char *const *) b);
}

int
reset_netns_describe (char **out)
{
  static const struct kind nft = { "nftables", NETLINK_NETFILTER,
                                   (NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_GETTABLE,
                                   sizeof (struct nfgenmsg), NULL, 0, label_nft };
  static const struct kind xfrm[] = {
    { "ipsec state", NETLINK_XFRM, XFRM_MSG_GETSA, 0, NULL, 0, label_plain },
    { "ipsec policy", NETLINK_XFRM, XFRM_MSG_GETPOLICY, 0, NULL, 0, label_plain },
  };
  struct desc d = { NULL, 0 };
  size_t len = 0;
  char *text;
  int fd;

  fd = socket (AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (fd < 0)
    return -errno;
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (kinds); i++)
    dump_kind (fd, &kinds[i], AF_UNSPEC, &d);
  close (fd);
  if (present ("nf_tables") && (fd = socket (AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC,
                                              NETLINK_NETFILTER)) >= 0)
    {
      dump_kind (fd, &nft, AF_UNSPEC, &d);
      close (fd);
    }
  if (present ("xfrm_user") && (fd = socket (AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC,
                                              NETLINK_XFRM)) >= 0)
    {
      for (size_t i = 0; i < BRIG_ARRAY_SIZE (xfrm); i++)
        dump_kind (fd, &xfrm[i], AF_UNSPEC, &d);
      close (fd);
    }
  xtables ("ip_tables_names", AF_INET, IPPROTO_IP, &d);
  xtables ("ip6_tables_names", AF_INET6, IPPROTO_IPV6, &d);
  xtables ("arp_tables_names", AF_INET, -1, &d);   /* (names only) */

  if (d.n)
    qsort (d.v, d.n, sizeof *d.v, cmp_str);
  for (size_t i = 0; i < d.n; i++)
    len += strlen (d.v[i]) + 1;
  text = xmalloc0 (len + 1);
  len = 0;
  for (size_t i = 0; i < d.n; i++)
    {
      len += (size_t) sprintf (text + len, "%s\n", d.v[i]);
      free (d.v[i]);
    }
  free (d.v);
  *out = text;
  return 0;
}

char *
reset_netns_diff (const char *fresh, const char *now)
{
  /* Both sorted: the first line of either side the other lacks. */
  const char *a = fresh, *b = now;
  while (*a || *b)
    {
      size_t la = strcspn (a, "\n"), lb = strcspn (b, "\n");
      int c = !*a ? 1 : !*b ? -1 : strncmp (a, b, la < lb ? la : lb);
      if (c == 0 && la != lb)
        c = la < lb ? -1 : 1;
      if (c == 0)
        {
          a += la + (a[la] == '\n');
          b += lb + (b[lb] == '\n');
          continue;
        }
      if (c < 0)
        return xasprintf ("gone since it was fresh: %.*s", (int) la, a);
      return xasprintf ("not there when it was fresh: %.*s", (int) lb, b);
    }
  return NULL;
}
