/* net_probe: a static test program for the egress policy tests
 * (sandbox_egress.bats). Run inside containers it tries one kind of
 * network send and prints what the kernel said and how long it took; run
 * in the test's "outside" network namespace it serves TCP.
 *
 *   net_probe tcp ADDR PORT       connect(), 3 s timeout: "tcp: ok|ERRNO MS"
 *   net_probe udp ADDR PORT       connect() then send(): "udp: ok|ERRNO MS"
 *   net_probe sendto ADDR PORT    unconnected sendto(): "sendto: ok|ERRNO MS"
 *   net_probe ping ADDR           ICMP echo over a ping socket, waits 2 s for
 *                                 the reply: "ping: ok|ERRNO MS"
 *   net_probe detach DIR          try to detach the cgroup BPF programs of
 *                                 the cgroup directory DIR (as the container
 *                                 sees it), without and with an fd of the
 *                                 program: "detach TYPE: ok|ERRNO", "getfd
 *                                 TYPE: ...", "detach-fd TYPE: ..." per type
 *   net_probe trie-add DIR        (host root) add 198.51.100.0/24 to the IPv4
 *                                 trie of the egress programs attached to the
 *                                 cgroup directory DIR, as only the host
 *                                 could: "trie-add: ok|ERRNO" (the reset's
 *                                 egress.policy check must see it)
 *   net_probe serve PORT          accept TCP on [::]:PORT (v4 too) forever
 *   net_probe udpserve PORT       receive UDP on [::]:PORT (v4 too) forever,
 *                                 printing "got ADDR" per datagram
 *   net_probe raw IFACE MAC ADDR PORT
 *                                 one IPv4 UDP datagram to ADDR:PORT in an
 *                                 Ethernet frame to MAC out of IFACE, through
 *                                 an AF_PACKET socket (needs CAP_NET_RAW):
 *                                 "raw: ok|ERRNO MS"
 *   net_probe vxlan NAME ID REMOTE PORT DEV
 *                                 make a VXLAN device NAME (VNI ID) over DEV
 *                                 whose packets go to REMOTE:PORT, through
 *                                 rtnetlink (needs CAP_NET_ADMIN over the
 *                                 network namespace): "vxlan: ok|ERRNO MS"
 *   net_probe accept FD           accept one connection on the listening
 *                                 socket FD (socket activation, issue 26),
 *                                 send it "hello from the container\n",
 *                                 print "accepted on fd FD" (exit 1 if not)
 *
 * Exit status 0 unless the arguments are wrong. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/if_packet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/ip_icmp.h>
#include <netinet/icmp6.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static const char *
ename (int e)
{
  switch (e)
    {
    case EPERM: return "EPERM";
    case EACCES: return "EACCES";
    case ECONNREFUSED: return "ECONNREFUSED";
    case ETIMEDOUT: return "ETIMEDOUT";
    case ENETUNREACH: return "ENETUNREACH";
    case EHOSTUNREACH: return "EHOSTUNREACH";
    case EINVAL: return "EINVAL";
    case EBADF: return "EBADF";
    case ENOENT: return "ENOENT";
    case ENOSYS: return "ENOSYS";
    case ENOTDIR: return "ENOTDIR";
    case EAFNOSUPPORT: return "EAFNOSUPPORT";
    default: return "EOTHER";
    }
}

static long
ms_since (const struct timespec *t0)
{
  struct timespec t;
  clock_gettime (CLOCK_MONOTONIC, &t);
  return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

static int
addr_of (const char *s, int port, struct sockaddr_storage *ss, socklen_t *len)
{
  struct sockaddr_in *a4 = (struct sockaddr_in *) ss;
  struct sockaddr_in6 *a6 = (struct sockaddr_in6 *) ss;
  memset (ss, 0, sizeof *ss);
  if (inet_pton (AF_INET, s, &a4->sin_addr) == 1)
    {
      a4->sin_family = AF_INET;
      a4->sin_port = htons ((uint16_t) port);
      *len = sizeof *a4;
      return AF_INET;
    }
  if (inet_pton (AF_INET6, s, &a6->sin6_addr) == 1)
    {
      a6->sin6_family = AF_INET6;
      a6->sin6_port = htons ((uint16_t) port);
      *len = sizeof *a6;
      return AF_INET6;
    }
  fprintf (stderr, "net_probe: bad address %s\n", s);
  exit (2);
}

static void
report (const char *what, int e, const struct timespec *t0)
{
  printf ("%s: %s %ldms\n", what, e ? ename (e) : "ok", ms_since (t0));
}

static void
do_tcp (const char *addr, int port)
{
  struct sockaddr_storage ss;
  socklen_t len;
  struct timespec t0;
  int fam = addr_of (addr, port, &ss, &len), e = 0;
  int s = socket (fam, SOCK_STREAM | SOCK_NONBLOCK, 0);
  clock_gettime (CLOCK_MONOTONIC, &t0);
  if (connect (s, (struct sockaddr *) &ss, len) < 0)
    {
      e = errno;
      if (e == EINPROGRESS)
        {
          struct pollfd p = { .fd = s, .events = POLLOUT };
          socklen_t el = sizeof e;
          if (poll (&p, 1, 3000) == 0)
            e = ETIMEDOUT;
          else
            getsockopt (s, SOL_SOCKET, SO_ERROR, &e, &el);
        }
    }
  report ("tcp", e, &t0);
}

static void
do_udp (const char *addr, int port, bool connected)
{
  struct sockaddr_storage ss;
  socklen_t len;
  struct timespec t0;
  int fam = addr_of (addr, port, &ss, &len), e = 0;
  int s = socket (fam, SOCK_DGRAM, 0);
  clock_gettime (CLOCK_MONOTONIC, &t0);
  if (connected)
    {
      if (connect (s, (struct sockaddr *) &ss, len) < 0 || send (s, "x", 1, 0) < 0)
        e = errno;
    }
  else if (sendto (s, "x", 1, 0, (struct sockaddr *) &ss, len) < 0)
    e = errno;
  report (connected ? "udp" : "sendto", e, &t0);
}

static void
do_ping (const char *addr)
{
  struct sockaddr_storage ss;
  socklen_t len;
  struct timespec t0;
  int fam = addr_of (addr, 0, &ss, &len), e = 0;
  int s = socket (fam, SOCK_DGRAM, fam == AF_INET ? IPPROTO_ICMP : IPPROTO_ICMPV6);
  unsigned char pkt[16] = { 0 };
  clock_gettime (CLOCK_MONOTONIC, &t0);
  pkt[0] = fam == AF_INET ? ICMP_ECHO : ICMP6_ECHO_REQUEST;
  if (s < 0 || sendto (s, pkt, sizeof pkt, 0, (struct sockaddr *) &ss, len) < 0)
    e = errno;
  else
    {
      struct pollfd p = { .fd = s, .events = POLLIN };
      if (poll (&p, 1, 2000) <= 0)
        e = ETIMEDOUT;
    }
  report ("ping", e, &t0);
}

static void
do_detach (const char *dir)
{
  static const struct { const char *name; int type; } t[] = {
    { "connect4", BPF_CGROUP_INET4_CONNECT }, { "connect6", BPF_CGROUP_INET6_CONNECT },
    { "sendmsg4", BPF_CGROUP_UDP4_SENDMSG }, { "sendmsg6", BPF_CGROUP_UDP6_SENDMSG },
    { "egress", BPF_CGROUP_INET_EGRESS },
  };
  int cg = open (dir, O_RDONLY | O_DIRECTORY);
  if (cg < 0)
    {
      printf ("detach: open %s: %s\n", dir, ename (errno));
      return;
    }
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
    {
      union bpf_attr a;
      long r;
      memset (&a, 0, sizeof a);
      a.target_fd = (uint32_t) cg;
      a.attach_type = (uint32_t) t[i].type;
      r = syscall (__NR_bpf, BPF_PROG_DETACH, &a, sizeof a);
      printf ("detach %s: %s\n", t[i].name, r < 0 ? ename (errno) : "ok");
      /* the way with the program's fd: its id from a query, then an fd */
      {
        uint32_t ids[8];
        memset (&a, 0, sizeof a);
        a.query.target_fd = (uint32_t) cg;
        a.query.attach_type = (uint32_t) t[i].type;
        a.query.prog_ids = (uint64_t) (uintptr_t) ids;
        a.query.prog_cnt = 8;
        r = syscall (__NR_bpf, BPF_PROG_QUERY, &a, sizeof a);
        if (r < 0 || a.query.prog_cnt == 0)
          {
            printf ("query %s: %s\n", t[i].name, r < 0 ? ename (errno) : "none");
            continue;
          }
        memset (&a, 0, sizeof a);
        a.prog_id = ids[0];
        r = syscall (__NR_bpf, BPF_PROG_GET_FD_BY_ID, &a, sizeof a);
        printf ("getfd %s: %s\n", t[i].name, r < 0 ? ename (errno) : "ok");
        if (r < 0)
          continue;
        memset (&a, 0, sizeof a);
        a.target_fd = (uint32_t) cg;
        a.attach_bpf_fd = (uint32_t) r;
        a.attach_type = (uint32_t) t[i].type;
        r = syscall (__NR_bpf, BPF_PROG_DETACH, &a, sizeof a);
        printf ("detach-fd %s: %s\n", t[i].name, r < 0 ? ename (errno) : "ok");
      }
    }
}

static void
do_trie_add (const char *dir)
{
  uint32_t ids[4], map_ids[8];
  struct bpf_prog_info pi;
  union bpf_attr a;
  int cg = open (dir, O_RDONLY | O_DIRECTORY), pfd;
  long r;

  memset (&a, 0, sizeof a);
  a.query.target_fd = (uint32_t) cg;
  a.query.attach_type = BPF_CGROUP_INET4_CONNECT;
  a.query.prog_ids = (uint64_t) (uintptr_t) ids;
  a.query.prog_cnt = 4;
  if (cg < 0 || syscall (__NR_bpf, BPF_PROG_QUERY, &a, sizeof a) < 0 || a.query.prog_cnt == 0)
    {
      printf ("trie-add: %s\n", ename (errno));
      return;
    }
  memset (&a, 0, sizeof a);
  a.prog_id = ids[0];
  pfd = (int) syscall (__NR_bpf, BPF_PROG_GET_FD_BY_ID, &a, sizeof a);
  memset (&pi, 0, sizeof pi);
  pi.nr_map_ids = 8;
  pi.map_ids = (uint64_t) (uintptr_t) map_ids;
  memset (&a, 0, sizeof a);
  a.info.bpf_fd = (uint32_t) pfd;
  a.info.info_len = sizeof pi;
  a.info.info = (uint64_t) (uintptr_t) &pi;
  r = pfd < 0 ? -1 : syscall (__NR_bpf, BPF_OBJ_GET_INFO_BY_FD, &a, sizeof a);
  for (uint32_t i = 0; r == 0 && i < pi.nr_map_ids && i < 8; i++)
    {
      struct bpf_map_info mi;
      memset (&a, 0, sizeof a);
      a.map_id = map_ids[i];
      int mfd = (int) syscall (__NR_bpf, BPF_MAP_GET_FD_BY_ID, &a, sizeof a);
      memset (&mi, 0, sizeof mi);
      memset (&a, 0, sizeof a);
      a.info.bpf_fd = (uint32_t) mfd;
      a.info.info_len = sizeof mi;
      a.info.info = (uint64_t) (uintptr_t) &mi;
      if (mfd < 0 || syscall (__NR_bpf, BPF_OBJ_GET_INFO_BY_FD, &a, sizeof a) < 0
          || strcmp (mi.name, "brig_egress_v4") != 0)
        continue;
      /* key: prefix length, address; value: every port allowed */
      uint8_t key[8] = { 24, 0, 0, 0, 198, 51, 100, 0 };
      uint32_t value[17];
      memset (value, 0xff, sizeof value);
      value[0] = 1;
      for (int k = 9; k < 17; k++)
        value[k] = 0;
      memset (&a, 0, sizeof a);
      a.map_fd = (uint32_t) mfd;
      a.key = (uint64_t) (uintptr_t) key;
      a.value = (uint64_t) (uintptr_t) value;
      r = syscall (__NR_bpf, BPF_MAP_UPDATE_ELEM, &a, sizeof a);
      printf ("trie-add: %s\n", r < 0 ? ename (errno) : "ok");
      return;
    }
  printf ("trie-add: %s\n", r < 0 ? ename (errno) : "no trie");
}

static void
do_serve (int port)
{
  struct sockaddr_in6 a = { .sin6_family = AF_INET6, .sin6_port = htons ((uint16_t) port) };
  int one = 1, zero = 0;
  int s = socket (AF_INET6, SOCK_STREAM, 0);
  setsockopt (s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  setsockopt (s, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
  if (bind (s, (struct sockaddr *) &a, sizeof a) < 0 || listen (s, 64) < 0)
    {
      perror ("net_probe serve");
      exit (1);
    }
  for (;;)
    {
      int c = accept (s, NULL, NULL);
      if (c >= 0)
        close (c);
    }
}

static void
do_udpserve (int port)
{
  struct sockaddr_in6 a = { .sin6_family = AF_INET6, .sin6_port = htons ((uint16_t) port) };
  int zero = 0;
  int s = socket (AF_INET6, SOCK_DGRAM, 0);
  setsockopt (s, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
  if (bind (s, (struct sockaddr *) &a, sizeof a) < 0)
    {
      perror ("net_probe udpserve");
      exit (1);
    }
  for (;;)
    {
      struct sockaddr_in6 from;
      socklen_t fl = sizeof from;
      char buf[64], text[INET6_ADDRSTRLEN];
      if (recvfrom (s, buf, sizeof buf, 0, (struct sockaddr *) &from, &fl) < 0)
        continue;
      inet_ntop (AF_INET6, &from.sin6_addr, text, sizeof text);
      printf ("got %s\n", text);
    }
}

/* The Internet checksum of n bytes (n even). */
static uint16_t
ip_sum (const uint8_t *b, size_t n)
{
  uint32_t sum = 0;
  for (size_t i = 0; i < n; i += 2)
    sum += (uint32_t) (b[i] << 8 | b[i + 1]);
  while (sum >> 16)
    sum = (sum & 0xffff) + (sum >> 16);
  return (uint16_t) ~sum;
}

static void
do_raw (const char *ifname, const char *mac, const char *addr, int port)
{
  struct sockaddr_ll ll = { .sll_family = AF_PACKET, .sll_protocol = htons (ETH_P_IP),
                            .sll_halen = 6 };
  uint8_t pkt[32] = { 0x45, 0, 0, sizeof pkt, 0, 0, 0x40, 0, 64, IPPROTO_UDP };
  struct in_addr dst;
  struct timespec t0;
  unsigned m[6];
  uint16_t sum;
  int s, e = 0;

  if (sscanf (mac, "%x:%x:%x:%x:%x:%x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) != 6
      || inet_pton (AF_INET, addr, &dst) != 1)
    {
      fprintf (stderr, "net_probe: bad MAC or address\n");
      exit (2);
    }
  for (int i = 0; i < 6; i++)
    ll.sll_addr[i] = (uint8_t) m[i];
  ll.sll_ifindex = (int) if_nametoindex (ifname);
  /* from 10.203.0.2 (the test's inside address), UDP without a checksum */
  memcpy (pkt + 12, "\x0a\xcb\x00\x02", 4);
  memcpy (pkt + 16, &dst, 4);
  sum = ip_sum (pkt, 20);
  pkt[10] = (uint8_t) (sum >> 8);
  pkt[11] = (uint8_t) sum;
  pkt[20] = 0x30;
  pkt[21] = 0x39;
  pkt[22] = (uint8_t) (port >> 8);
  pkt[23] = (uint8_t) port;
  pkt[25] = sizeof pkt - 20;
  memcpy (pkt + 28, "brig", 4);
  clock_gettime (CLOCK_MONOTONIC, &t0);
  s = socket (AF_PACKET, SOCK_DGRAM, htons (ETH_P_IP));
  if (s < 0 || sendto (s, pkt, sizeof pkt, 0, (struct sockaddr *) &ll, sizeof ll) < 0)
    e = errno;
  report ("raw", e, &t0);
}

/* one rtnetlink attribute at the end of the message; returns it */
static struct rtattr *
nl_attr (struct nlmsghdr *n, unsigned short type, const void *data, size_t len)
{
  struct rtattr *a = (struct rtattr *) ((char *) n + NLMSG_ALIGN (n->nlmsg_len));
  a->rta_type = type;
  a->rta_len = (unsigned short) RTA_LENGTH (len);
  if (len)
    memcpy (RTA_DATA (a), data, len);
  n->nlmsg_len = NLMSG_ALIGN (n->nlmsg_len) + RTA_ALIGN (a->rta_len);
  return a;
}

static void
nl_end (struct nlmsghdr *n, struct rtattr *nest)
{
  nest->rta_len = (unsigned short) ((char *) n + n->nlmsg_len - (char *) nest);
}

static void
do_vxlan (const char *name, int id, const char *remote, int port, const char *dev)
{
  union { struct nlmsghdr n; char buf[512]; } req, ack;
  struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
  struct ifinfomsg *ifi;
  struct rtattr *info, *data;
  struct in_addr group;
  struct timespec t0;
  uint32_t vni = (uint32_t) id, link = if_nametoindex (dev);
  uint16_t be_port = htons ((uint16_t) port);
  int s, e = 0;

  if (inet_pton (AF_INET, remote, &group) != 1)
    {
      fprintf (stderr, "net_probe: bad address %s\n", remote);
      exit (2);
    }
  memset (&req, 0, sizeof req);
  req.n.nlmsg_len = NLMSG_LENGTH (sizeof *ifi);
  req.n.nlmsg_type = RTM_NEWLINK;
  req.n.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL;
  ifi = NLMSG_DATA (&req.n);
  ifi->ifi_family = AF_UNSPEC;
  nl_attr (&req.n, IFLA_IFNAME, name, strlen (name) + 1);
  info = nl_attr (&req.n, IFLA_LINKINFO, NULL, 0);
  nl_attr (&req.n, IFLA_INFO_KIND, "vxlan", 5);
  data = nl_attr (&req.n, IFLA_INFO_DATA, NULL, 0);
  nl_attr (&req.n, IFLA_VXLAN_ID, &vni, sizeof vni);
  nl_attr (&req.n, IFLA_VXLAN_GROUP, &group, sizeof group);
  nl_attr (&req.n, IFLA_VXLAN_PORT, &be_port, sizeof be_port);
  nl_attr (&req.n, IFLA_VXLAN_LINK, &link, sizeof link);
  nl_end (&req.n, data);
  nl_end (&req.n, info);
  clock_gettime (CLOCK_MONOTONIC, &t0);
  s = socket (AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  if (s < 0 || sendto (s, &req, req.n.nlmsg_len, 0, (struct sockaddr *) &kernel,
                       sizeof kernel) < 0
      || recv (s, &ack, sizeof ack, 0) < 0)
    e = errno;
  else if (ack.n.nlmsg_type == NLMSG_ERROR)
    e = -((struct nlmsgerr *) NLMSG_DATA (&ack.n))->error;
  report ("vxlan", e, &t0);
}

static void
do_accept (int fd)
{
  static const char hello[] = "hello from the container\n";
  int c = accept (fd, NULL, NULL);
  if (c < 0 || write (c, hello, sizeof hello - 1) != (ssize_t) sizeof hello - 1)
    {
      printf ("accept on fd %d: %s\n", fd, ename (errno));
      exit (1);
    }
  close (c);
  printf ("accepted on fd %d\n", fd);
}

int
main (int argc, char **argv)
{
  setvbuf (stdout, NULL, _IONBF, 0);
  if (argc == 4 && strcmp (argv[1], "tcp") == 0)
    do_tcp (argv[2], atoi (argv[3]));
  else if (argc == 4 && strcmp (argv[1], "udp") == 0)
    do_udp (argv[2], atoi (argv[3]), true);
  else if (argc == 4 && strcmp (argv[1], "sendto") == 0)
    do_udp (argv[2], atoi (argv[3]), false);
  else if (argc == 3 && strcmp (argv[1], "ping") == 0)
    do_ping (argv[2]);
  else if (argc == 3 && strcmp (argv[1], "detach") == 0)
    do_detach (argv[2]);
  else if (argc == 3 && strcmp (argv[1], "trie-add") == 0)
    do_trie_add (argv[2]);
  else if (argc == 3 && strcmp (argv[1], "serve") == 0)
    do_serve (atoi (argv[2]));
  else if (argc == 3 && strcmp (argv[1], "udpserve") == 0)
    do_udpserve (atoi (argv[2]));
  else if (argc == 6 && strcmp (argv[1], "raw") == 0)
    do_raw (argv[2], argv[3], argv[4], atoi (argv[5]));
  else if (argc == 7 && strcmp (argv[1], "vxlan") == 0)
    do_vxlan (argv[2], atoi (argv[3]), argv[4], atoi (argv[5]), argv[6]);
  else if (argc == 3 && strcmp (argv[1], "accept") == 0)
    do_accept (atoi (argv[2]));
  else
    {
      fprintf (stderr, "usage: net_probe tcp|udp|sendto ADDR PORT | ping ADDR | detach DIR | trie-add DIR | "
               "serve PORT | udpserve PORT | raw IFACE MAC ADDR PORT | "
               "vxlan NAME ID REMOTE PORT DEV | accept FD\n");
      return 2;
    }
  return 0;
}
