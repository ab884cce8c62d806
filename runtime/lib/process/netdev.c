/* linux.netDevices over rtnetlink (RTM_NEWLINK with IFLA_NET_NS_FD and
 * IFLA_IFNAME), without libnl or ip(8).
 *
 * The kernel flushes a device's addresses when it changes namespace, and
 * the spec wants the permanent global ones kept: they are read before the
 * move and added again inside. The container side is reached through an
 * rtnetlink socket created in the container's namespace (a socket keeps the
 * namespace it was made in), so brig itself stays in its own. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/if_addr.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include "log.h"
#include "process/netdev.h"
#include "utils.h"

#define NL_RECV_BUF 65536

/* One rtnetlink socket with its receive buffer (cap bytes: a dump needs
 * the large one; an ACK fits in a small one on the stack). */
struct nl {
  int fd;
  uint32_t seq;
  char *buf;
  size_t cap;
  bool own_buf;
};

/* A request being built: header, fixed body, attributes. */
struct nl_req {
  union {
    struct nlmsghdr h;
    char bytes[512];
  };
};

struct link_info {
  int index;
  unsigned flags;
  char name[IFNAMSIZ];
};

/* An address as RTM_NEWADDR needs it again. */
struct saved_addr {
  struct ifaddrmsg ifa;
  uint32_t flags;
  unsigned char local[16], address[16], broadcast[16];
  uint8_t local_len, address_len, broadcast_len;
};

struct moved {
  char host_name[IFNAMSIZ];
  unsigned host_flags;      /* before the move (IFF_UP given back on undo) */
  int index;                /* in the container's namespace; 0: unknown */
  struct saved_addr *addrs;
  size_t addrs_len;
};

struct brig_netdevs {
  int host_ns, ctr_ns;
  struct nl host, ctr;
  struct moved *moved;
  size_t moved_len;
};

/* ---- rtnetlink plumbing ---- */

/* buf NULL: a heap buffer of NL_RECV_BUF bytes; else the caller's. */
static int
nl_open_buf (struct nl *nl, char *buf, size_t cap)
{
  nl->fd = socket (AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (nl->fd < 0)
    return -errno;
  nl->own_buf = buf == NULL;
  nl->buf = buf ? buf : xrealloc (NULL, NL_RECV_BUF);
  nl->cap = buf ? cap : NL_RECV_BUF;
  return 0;
}

static int
nl_open (struct nl *nl)
{
  return nl_open_buf (nl, NULL, 0);
}

static void
nl_close (struct nl *nl)
{
  if (nl->fd >= 0)
    close (nl->fd);
  nl->fd = -1;
  if (nl->own_buf)
    free (nl->buf);
  nl->buf = NULL;
}

static struct nlmsghdr *
req_init (struct nl_req *r, uint16_t type, uint16_t flags, const void *body, size_t len)
{
  memset (r, 0, sizeof *r);
  r->h.nlmsg_len = NLMSG_LENGTH (len);
  r->h.nlmsg_type = type;
  r->h.nlmsg_flags = NLM_F_REQUEST | flags;
  memcpy (NLMSG_DATA (&r->h), body, len);
  return &r->h;
}

static void
req_attr (struct nl_req *r, unsigned short type, const void *data, size_t len)
{
  size_t off = NLMSG_ALIGN (r->h.nlmsg_len);
  struct rtattr *a = (struct rtattr *) (r->bytes + off);

  if (off + RTA_SPACE (len) > sizeof r->bytes)
    abort ();   /* the requests here are small and fixed */
  a->rta_type = type;
  a->rta_len = (unsigned short) RTA_LENGTH (len);
  memcpy (RTA_DATA (a), data, len);
  r->h.nlmsg_len = (uint32_t) (off + RTA_SPACE (len));
}

typedef int (*nl_cb) (struct nlmsghdr *m, void *arg);

/* Send one request and read its answer to the end (the ACK, or DONE of a
 * dump); data messages go to cb. 0, or the kernel's (or cb's) -errno. */
static int
nl_call (struct nl *nl, struct nl_req *r, nl_cb cb, void *arg)
{
  struct sockaddr_nl sa = { .nl_family = AF_NETLINK };
  int ret = 0;

  r->h.nlmsg_seq = ++nl->seq;
  if ((r->h.nlmsg_flags & NLM_F_DUMP) != NLM_F_DUMP)
    r->h.nlmsg_flags |= NLM_F_ACK;
  while (sendto (nl->fd, &r->h, r->h.nlmsg_len, 0, (struct sockaddr *) &sa, sizeof sa) < 0)
    if (errno != EINTR)
      return -errno;
  for (;;)
    {
      /* MSG_TRUNC: the datagram's whole length, so one larger than the
         buffer is an error instead of a message cut short. */
      ssize_t n = recv (nl->fd, nl->buf, nl->cap, MSG_TRUNC);
      if (n < 0 && errno == EINTR)
        continue;
      if (n < 0)
        return -errno;
      if (n == 0)
        return -EPIPE;
      if ((size_t) n > nl->cap)
        return -EMSGSIZE;
      char *p = nl->buf;
      size_t left = (size_t) n;
      while (left >= sizeof (struct nlmsghdr))
        {
          struct nlmsghdr *m = (struct nlmsghdr *) p;
          size_t step;
          if (m->nlmsg_len < sizeof *m || m->nlmsg_len > left)
            return -EPROTO;
          step = NLMSG_ALIGN (m->nlmsg_len) < left ? NLMSG_ALIGN (m->nlmsg_len) : left;
          p += step;
          left -= step;
          if (m->nlmsg_seq != r->h.nlmsg_seq)
            continue;
          if (m->nlmsg_type == NLMSG_ERROR)
            {
              struct nlmsgerr *e = NLMSG_DATA (m);
              if (m->nlmsg_len < NLMSG_LENGTH (sizeof *e))
                return -EPROTO;
              return e->error < 0 ? e->error : ret;
            }
          if (m->nlmsg_type == NLMSG_DONE)
            {
              if (m->nlmsg_len >= NLMSG_LENGTH (sizeof (int)) && *(int *) NLMSG_DATA (m) < 0)
                return *(int *) NLMSG_DATA (m);
              return ret;
            }
          if (ret == 0 && cb)
            ret = cb (m, arg);
        }
    }
}

static int
parse_link (struct nlmsghdr *m, struct link_info *li)
{
  struct ifinfomsg *ifi = NLMSG_DATA (m);
  int len = (int) IFLA_PAYLOAD (m);

  if (m->nlmsg_type != RTM_NEWLINK || len < 0)
    return -1;
  memset (li, 0, sizeof *li);
  li->index = ifi->ifi_index;
  li->flags = ifi->ifi_flags;
  for (struct rtattr *a = IFLA_RTA (ifi); RTA_OK (a, len); a = RTA_NEXT (a, len))
    if (a->rta_type == IFLA_IFNAME)
      snprintf (li->name, sizeof li->name, "%.*s", (int) RTA_PAYLOAD (a), (char *) RTA_DATA (a));
  return 0;
}

static int
link_one_cb (struct nlmsghdr *m, void *arg)
{
  parse_link (m, arg);
  return 0;
}

/* The link called name: 0, -ENODEV, or another -errno. */
static int
link_by_name (struct nl *nl, const char *name, struct link_info *li)
{
  struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
  struct nl_req r;

  memset (li, 0, sizeof *li);
  req_init (&r, RTM_GETLINK, 0, &ifi, sizeof ifi);
  req_attr (&r, IFLA_IFNAME, name, strlen (name) + 1);
  int ret = nl_call (nl, &r, link_one_cb, li);
  if (ret == 0 && li->index <= 0)
    ret = -ENODEV;
  return ret;
}

struct link_list {
  struct link_info *v;
  size_t len;
};

static int
link_list_cb (struct nlmsghdr *m, void *arg)
{
  struct link_list *l = arg;
  struct link_info li;

  if (parse_link (m, &li) < 0)
    return 0;
  l->v = xrealloc (l->v, (l->len + 1) * sizeof *l->v);
  l->v[l->len++] = li;
  return 0;
}

static int
link_dump (struct nl *nl, struct link_list *out)
{
  struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC };
  struct nl_req r;

  out->v = NULL;
  out->len = 0;
  req_init (&r, RTM_GETLINK, NLM_F_DUMP, &ifi, sizeof ifi);
  return nl_call (nl, &r, link_list_cb, out);
}

/* Move link index into the namespace ns_fd, named name there (NULL: as it is). */
static int
link_move (struct nl *nl, int index, int ns_fd, const char *name)
{
  struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC, .ifi_index = index };
  uint32_t fd = (uint32_t) ns_fd;
  struct nl_req r;

  req_init (&r, RTM_NEWLINK, 0, &ifi, sizeof ifi);
  req_attr (&r, IFLA_NET_NS_FD, &fd, sizeof fd);
  if (name)
    req_attr (&r, IFLA_IFNAME, name, strlen (name) + 1);
  return nl_call (nl, &r, NULL, NULL);
}

static int
link_set_up (struct nl *nl, int index)
{
  struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC, .ifi_index = index, .ifi_flags = IFF_UP,
                           .ifi_change = IFF_UP };
  struct nl_req r;

  req_init (&r, RTM_NEWLINK, 0, &ifi, sizeof ifi);
  return nl_call (nl, &r, NULL, NULL);
}

int
brig_netdev_loopback_up (brig_error *err)
{
  struct ifinfomsg ifi = { .ifi_family = AF_UNSPEC, .ifi_flags = IFF_UP, .ifi_change = IFF_UP };
  struct nl nl = { .fd = -1 };
  struct nl_req r;
  /* The answer is one ACK (an error echoes the request, under 512 bytes):
     no 64 KiB buffer to fault in, in the init of every container. */
  char buf[1024] __attribute__ ((aligned (8)));
  int ret;

  ret = nl_open_buf (&nl, buf, sizeof buf);
  if (ret < 0)
    return brig_error_set (err, -ret, "bring up lo: open rtnetlink");
  /* By name: no lookup round trip, and no reliance on lo's index. */
  req_init (&r, RTM_NEWLINK, 0, &ifi, sizeof ifi);
  req_attr (&r, IFLA_IFNAME, "lo", sizeof "lo");
  ret = nl_call (&nl, &r, NULL, NULL);
  nl_close (&nl);
  if (ret < 0)
    return brig_error_set (err, -ret, "bring up lo in the new network namespace");
  return 0;
}

/* ---- addresses ---- */

struct addr_list {
  int index;
  struct saved_addr *v;
  size_t len;
};

static void
copy_attr (const struct rtattr *a, unsigned char dst[16], uint8_t *len)
{
  size_t n = RTA_PAYLOAD (a);
  if (n > 16)
    return;
  memcpy (dst, RTA_DATA (a), n);
  *len = (uint8_t) n;
}

/* Keep what the spec names: permanent addresses of global scope. */
static int
addr_list_cb (struct nlmsghdr *m, void *arg)
{
  struct addr_list *l = arg;
  struct ifaddrmsg *ifa = NLMSG_DATA (m);
  int len = (int) IFA_PAYLOAD (m);
  struct saved_addr s = { .ifa = *ifa, .flags = ifa->ifa_flags };

  if (m->nlmsg_type != RTM_NEWADDR || len < 0 || (int) ifa->ifa_index != l->index)
    return 0;
  for (struct rtattr *a = IFA_RTA (ifa); RTA_OK (a, len); a = RTA_NEXT (a, len))
    switch (a->rta_type)
      {
      case IFA_FLAGS:
        if (RTA_PAYLOAD (a) >= sizeof (uint32_t))
          memcpy (&s.flags, RTA_DATA (a), sizeof (uint32_t));
        break;
      case IFA_LOCAL:
        copy_attr (a, s.local, &s.local_len);
        break;
      case IFA_ADDRESS:
        copy_attr (a, s.address, &s.address_len);
        break;
      case IFA_BROADCAST:
        copy_attr (a, s.broadcast, &s.broadcast_len);
        break;
      }
  if (!(s.flags & IFA_F_PERMANENT) || ifa->ifa_scope != RT_SCOPE_UNIVERSE)
    return 0;
  l->v = xrealloc (l->v, (l->len + 1) * sizeof *l->v);
  l->v[l->len++] = s;
  return 0;
}

static int
addr_dump (struct nl *nl, int index, struct addr_list *out)
{
  struct ifaddrmsg ifa = { .ifa_family = AF_UNSPEC };
  struct nl_req r;

  out->index = index;
  out->v = NULL;
  out->len = 0;
  req_init (&r, RTM_GETADDR, NLM_F_DUMP, &ifa, sizeof ifa);
  return nl_call (nl, &r, addr_list_cb, out);
}

static int
addr_add (struct nl *nl, int index, const struct saved_addr *s)
{
  struct ifaddrmsg ifa = s->ifa;
  struct nl_req r;

  ifa.ifa_index = (uint32_t) index;
  req_init (&r, RTM_NEWADDR, NLM_F_CREATE | NLM_F_REPLACE, &ifa, sizeof ifa);
  if (s->local_len)
    req_attr (&r, IFA_LOCAL, s->local, s->local_len);
  if (s->address_len)
    req_attr (&r, IFA_ADDRESS, s->address, s->address_len);
  if (s->broadcast_len)
    req_attr (&r, IFA_BROADCAST, s->broadcast, s->broadcast_len);
  req_attr (&r, IFA_FLAGS, &s->flags, sizeof s->flags);
  return nl_call (nl, &r, NULL, NULL);
}

/* "10.1.2.3/24" for messages. */
static void
addr_format (const struct saved_addr *s, char *buf, size_t size)
{
  char a[INET6_ADDRSTRLEN] = "?";
  const unsigned char *p = s->local_len ? s->local : s->address;
  inet_ntop (s->ifa.ifa_family, p, a, sizeof a);
  snprintf (buf, size, "%s/%u", a, s->ifa.ifa_prefixlen);
}

/* ---- validation ---- */

/* The kernel's rules for interface names (dev_valid_name); a template
 * for the kernel to number has exactly one "%d". NULL when fine. */
static const char *
ifname_problem (const char *s, bool template_ok)
{
  const char *pct;

  if (s == NULL || *s == '\0')
    return "must not be empty";
  if (strlen (s) >= IFNAMSIZ)
    return "longer than 15 characters";
  if (strcmp (s, ".") == 0 || strcmp (s, "..") == 0)
    return "not a valid interface name";
  for (const char *p = s; *p; p++)
    if (*p == '/' || *p == ':' || isspace ((unsigned char) *p))
      return "must not contain '/', ':' or whitespace";
  pct = strchr (s, '%');
  if (pct && !template_ok)
    return "must not contain '%'";
  if (pct && (pct[1] != 'd' || strchr (pct + 2, '%')))
    return "a name template takes exactly one \"%d\"";
  return NULL;
}

static const char *
target_name (const oci_linux *lx, size_t i)
{
  const oci_net_device *d = &lx->net_devices[i];
  return d->name ? d->name : lx->net_devices_keys[i];
}

int
brig_netdev_validate (const oci_linux *lx, const struct brig_ns_plan *ns, brig_error *err)
{
  const char *why;

  if (lx == NULL || lx->net_devices_len == 0)
    return 0;
  for (size_t i = 0; i < lx->net_devices_len; i++)
    {
      const char *key = lx->net_devices_keys[i];
      const oci_net_device *d = &lx->net_devices[i];
      if ((why = ifname_problem (key, false)) != NULL)
        return brig_error_say (err, EINVAL, "linux.netDevices%s%s: host interface name \"%s\": %s",
                               *key ? "." : "", key, key, why);
      if (d->name && (why = ifname_problem (d->name, true)) != NULL)
        return brig_error_say (err, EINVAL, "linux.netDevices.%s.name: \"%s\": %s", key,
                               d->name, why);
      for (size_t j = 0; j < i; j++)
        if (strcmp (target_name (lx, i), target_name (lx, j)) == 0
            && strchr (target_name (lx, i), '%') == NULL)
          return brig_error_say (err, EINVAL, "linux.netDevices.%s: name \"%s\" is also the "
                                 "name of linux.netDevices.%s in the container", key,
                                 target_name (lx, i), lx->net_devices_keys[j]);
    }
  if (ns->join_fd[BRIG_NS_NET] >= 0)
    {
      struct stat a, b;
      if (fstat (ns->join_fd[BRIG_NS_NET], &a) == 0 && stat ("/proc/self/ns/net", &b) == 0
          && a.st_dev == b.st_dev && a.st_ino == b.st_ino)
        return brig_error_say (err, EINVAL, "linux.netDevices.%s: the network namespace to join "
                               "is the host's; the devices need the container's own",
                               lx->net_devices_keys[0]);
    }
  else if (!(ns->new_flags & CLONE_NEWNET))
    return brig_error_say (err, EINVAL, "linux.netDevices.%s: needs a network namespace "
                           "(linux.namespaces has no \"network\" entry)",
                           lx->net_devices_keys[0]);
  /* Fail before anything exists when an interface is missing (the move
   * checks again). */
  for (size_t i = 0; i < lx->net_devices_len; i++)
    if (if_nametoindex (lx->net_devices_keys[i]) == 0)
      return brig_error_set (err, errno == 0 || errno == ENXIO ? ENODEV : errno,
                             "linux.netDevices: host interface \"%s\"",
                             lx->net_devices_keys[i]);
  return 0;
}

/* ---- the move ---- */

/* An rtnetlink socket of the namespace ns_fd: made there, then brig goes
 * back to back_fd. */
static int
nl_open_in (struct nl *nl, int ns_fd, int back_fd, brig_error *err)
{
  int r;

  if (setns (ns_fd, CLONE_NEWNET) < 0)
    return brig_error_errno (err, "linux.netDevices: enter the container's network namespace");
  r = nl_open (nl);
  if (setns (back_fd, CLONE_NEWNET) < 0)
    return brig_error_errno (err, "linux.netDevices: return to brig's network namespace");
  if (r < 0)
    return brig_error_set (err, -r, "linux.netDevices: rtnetlink socket");
  return 0;
}

/* The index the device got inside: the one link that was not there before
 * the move and carries the expected name (or the template's prefix). */
static int
find_moved (struct nl *ctr, const struct link_list *before, const char *target, int *index)
{
  struct link_list after;
  size_t prefix = strcspn (target, "%");
  int r = link_dump (ctr, &after);

  *index = 0;
  for (size_t i = 0; r == 0 && i < after.len && *index == 0; i++)
    {
      bool known = false;
      for (size_t j = 0; j < before->len && !known; j++)
        known = before->v[j].index == after.v[i].index;
      if (!known && (target[prefix] == '%' ? strncmp (after.v[i].name, target, prefix)
                                           : strcmp (after.v[i].name, target)) == 0)
        *index = after.v[i].index;
    }
  free (after.v);
  if (r == 0 && *index == 0)
    r = -ENODEV;
  return r;
}

static int
move_one (brig_netdevs *nd, const oci_linux *lx, size_t i, const struct link_info *host,
          brig_error *err)
{
  const char *key = lx->net_devices_keys[i];
  const char *target = target_name (lx, i);
  struct moved *mv = &nd->moved[nd->moved_len];
  struct addr_list addrs;
  struct link_list before;
  int r;

  r = addr_dump (&nd->host, host->index, &addrs);
  if (r < 0)
    {
      free (addrs.v); /* the caller owns what a dump collected, also half way */
      return brig_error_set (err, -r, "linux.netDevices.%s: read its addresses", key);
    }
  snprintf (mv->host_name, sizeof mv->host_name, "%s", key);
  mv->host_flags = host->flags;
  mv->addrs = addrs.v;
  mv->addrs_len = addrs.len;
  r = link_dump (&nd->ctr, &before);
  if (r == 0)
    r = link_move (&nd->host, host->index, nd->ctr_ns, lx->net_devices[i].name);
  if (r < 0)
    {
      free (before.v);
      free (mv->addrs);
      mv->addrs = NULL;
      return brig_error_set (err, -r, "linux.netDevices.%s: move into the container's "
                             "network namespace", key);
    }
  nd->moved_len++;
  r = find_moved (&nd->ctr, &before, target, &mv->index);
  free (before.v);
  if (r < 0)
    return brig_error_set (err, -r, "linux.netDevices.%s: find it in the container's network "
                           "namespace", key);
  r = link_set_up (&nd->ctr, mv->index);
  if (r < 0)
    return brig_error_set (err, -r, "linux.netDevices.%s: set it up", key);
  for (size_t k = 0; k < mv->addrs_len; k++)
    {
      r = addr_add (&nd->ctr, mv->index, &mv->addrs[k]);
      if (r < 0)
        {
          char a[INET6_ADDRSTRLEN + 8];
          addr_format (&mv->addrs[k], a, sizeof a);
          return brig_error_set (err, -r, "linux.netDevices.%s: add address %s", key, a);
        }
    }
  brig_debug ("linux.netDevices.%s: moved as %s (index %d, %zu addresses)", key, target,
              mv->index, mv->addrs_len);
  return 0;
}

static int
open_netns (pid_t pid, int *fd, brig_error *err)
{
  _cleanup_free_ char *p = pid > 0 ? xasprintf ("/proc/%d/ns/net", (int) pid)
                                   : xstrdup ("/proc/self/ns/net");
  *fd = open (p, O_RDONLY | O_CLOEXEC);
  if (*fd < 0)
    return brig_error_errno (err, "linux.netDevices: open %s", p);
  return 0;
}

static int
netdev_move_all (brig_netdevs *nd, const oci_linux *lx, pid_t pid, brig_error *err)
{
  _cleanup_free_ struct link_info *host = xmalloc0 (lx->net_devices_len * sizeof *host);
  int r;

  if ((r = open_netns (0, &nd->host_ns, err)) < 0 || (r = open_netns (pid, &nd->ctr_ns, err)) < 0)
    return r;
  r = nl_open (&nd->host);
  if (r < 0)
    return brig_error_set (err, -r, "linux.netDevices: rtnetlink socket");
  r = nl_open_in (&nd->ctr, nd->ctr_ns, nd->host_ns, err);
  if (r < 0)
    return r;
  /* Everything that can be checked goes first, so that a bad entry moves
   * nothing. */
  for (size_t i = 0; i < lx->net_devices_len; i++)
    {
      const char *key = lx->net_devices_keys[i];
      const char *target = target_name (lx, i);
      struct link_info li;
      r = link_by_name (&nd->host, key, &host[i]);
      if (r < 0)
        return brig_error_set (err, -r, "linux.netDevices: host interface \"%s\"", key);
      if (strchr (target, '%'))
        continue;
      r = link_by_name (&nd->ctr, target, &li);
      if (r == 0)
        return brig_error_set (err, EEXIST, "linux.netDevices.%s: interface \"%s\" in the "
                               "container's network namespace", key, target);
      if (r != -ENODEV)
        return brig_error_set (err, -r, "linux.netDevices.%s: look up \"%s\" in the "
                               "container's network namespace", key, target);
    }
  for (size_t i = 0; i < lx->net_devices_len; i++)
    {
      r = move_one (nd, lx, i, &host[i], err);
      if (r < 0)
        return r;
    }
  return 0;
}

int
brig_netdev_move (const oci_linux *lx, pid_t pid, brig_netdevs **out, brig_error *err)
{
  brig_netdevs *nd;
  int r;

  *out = NULL;
  if (lx == NULL || lx->net_devices_len == 0)
    return 0;
  nd = xmalloc0 (sizeof *nd);
  nd->host_ns = nd->ctr_ns = nd->host.fd = nd->ctr.fd = -1;
  nd->moved = xmalloc0 (lx->net_devices_len * sizeof *nd->moved);
  r = netdev_move_all (nd, lx, pid, err);
  if (r < 0)
    {
      brig_netdev_undo (nd);
      brig_netdev_free (nd);
      return r;
    }
  *out = nd;
  return 0;
}

void
brig_netdev_undo (brig_netdevs *nd)
{
  if (nd == NULL)
    return;
  for (size_t i = nd->moved_len; i-- > 0;)
    {
      struct moved *mv = &nd->moved[i];
      struct link_info li;
      int r;

      if (mv->index <= 0)
        {
          brig_warn ("linux.netDevices.%s: not found in the container's network namespace; "
                     "left there", mv->host_name);
          continue;
        }
      r = link_move (&nd->ctr, mv->index, nd->host_ns, mv->host_name);
      if (r == 0)
        r = link_by_name (&nd->host, mv->host_name, &li);
      if (r < 0)
        {
          brig_warn ("linux.netDevices.%s: move back to the host: %s", mv->host_name,
                     strerror (-r));
          continue;
        }
      if ((mv->host_flags & IFF_UP) && (r = link_set_up (&nd->host, li.index)) < 0)
        brig_warn ("linux.netDevices.%s: set it up again: %s", mv->host_name, strerror (-r));
      for (size_t k = 0; k < mv->addrs_len; k++)
        if ((r = addr_add (&nd->host, li.index, &mv->addrs[k])) < 0)
          {
            char a[INET6_ADDRSTRLEN + 8];
            addr_format (&mv->addrs[k], a, sizeof a);
            brig_warn ("linux.netDevices.%s: add address %s again: %s", mv->host_name, a,
                       strerror (-r));
          }
    }
  for (size_t i = 0; i < nd->moved_len; i++)
    free (nd->moved[i].addrs);
  nd->moved_len = 0;
}

void
brig_netdev_free (brig_netdevs *nd)
{
  if (nd == NULL)
    return;
  for (size_t i = 0; i < nd->moved_len; i++)
    free (nd->moved[i].addrs);
  free (nd->moved);
  nl_close (&nd->host);
  nl_close (&nd->ctr);
  if (nd->host_ns >= 0)
    close (nd->host_ns);
  if (nd->ctr_ns >= 0)
    close (nd->ctr_ns);
  free (nd);
}
