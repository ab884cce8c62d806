/* The tenant of tests/integration/sandbox_reset.bats, run inside the
 * container (static, for the busybox rootfs).
 *
 *   reset_tenant leave   leave what busybox cannot: SysV shm, sem and msg
 *                        objects, a POSIX message queue, a key in the
 *                        session keyring, a listening TCP socket on
 *                        127.0.0.1:7777 and an established connection to
 *                        it, held by a daemon (double fork, new session,
 *                        SIGTERM ignored); prints "left"
 *   reset_tenant check   print one line per thing of a tenant still there
 *                        (or "clean") and exit 1 when something is
 *   reset_tenant metrics-leave N
 *                        end N TCP connections to 127.77.1.1..N on
 *                        loopback without leaving a socket or TIME_WAIT
 *                        (the TIME_WAIT is recycled by a new SYN of the
 *                        same four-tuple, which is then reset): only
 *                        their entries in the TCP metrics cache remain;
 *                        prints "left N"
 *   reset_tenant metrics-read
 *                        print the 127.77.x.y destinations in the TCP
 *                        metrics cache (generic netlink, unprivileged),
 *                        one per line, then "metrics N"
 *   reset_tenant flowlabel-leave N
 *                        make N shared IPv6 flow labels 0x77001..N to ::1
 *                        that linger 150 s after their socket is closed
 *                        (listed in /proc/net/ip6_flowlabel); prints
 *                        "left N"
 *   reset_tenant mq-leave NAME
 *                        make the POSIX message queue /NAME in the ipc
 *                        namespace (and so in every mqueue mount of it);
 *                        prints "left NAME"
 *   reset_tenant key-serial
 *                        print the serial of the session keyring
 *   reset_tenant key-join NAME
 *                        join the session keyring NAME (a new one if none
 *                        is found) and print its serial
 *   reset_tenant key-plant ID
 *                        add the key brig-tenant to the session keyring,
 *                        and plant keyrings named as the next init's might
 *                        be ("_ses.ID", "_ses.ID.0" .. ".3", and the name
 *                        of this session keyring), each searchable by its
 *                        owner, holding brig-tenant and linked into the
 *                        user's persistent keyring (they outlive the
 *                        tenant's processes);
 *                        prints "planted N"
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/in6.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/tcp_metrics.h>
#include <mqueue.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#define KEY_SPEC_SESSION_KEYRING -3
#define KEYCTL_SEARCH 10
#define IPC_KEY 0x7e5e7

static long
add_key (const char *type, const char *desc, const void *payload, size_t len, int ring)
{
  return syscall (SYS_add_key, type, desc, payload, len, ring);
}

static int
leave (void)
{
  struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons (7777) };
  int one = 1, l, c, a, p[2];
  char ok;

  if (shmget (IPC_KEY, 4096, IPC_CREAT | 0600) < 0 || semget (IPC_KEY, 1, IPC_CREAT | 0600) < 0
      || msgget (IPC_KEY, IPC_CREAT | 0600) < 0)
    {
      perror ("sysv ipc");
      return 1;
    }
  {
    mqd_t q = mq_open ("/brig-tenant", O_CREAT | O_RDWR, 0600, NULL);
    if (q == (mqd_t) -1)
      {
        perror ("mq_open");
        return 1;
      }
    mq_close (q);
  }
  if (add_key ("user", "brig-tenant", "secret", 6, KEY_SPEC_SESSION_KEYRING) < 0
      || syscall (SYS_keyctl, KEYCTL_SEARCH, KEY_SPEC_SESSION_KEYRING, "user", "brig-tenant", 0) < 0)
    {
      perror ("add_key");
      return 1;
    }
  if (pipe (p) < 0)
    return 1;
  if (fork () == 0)
    {
      /* the daemon: new session, second fork, SIGTERM ignored */
      setsid ();
      if (fork () != 0)
        _exit (0);
      signal (SIGTERM, SIG_IGN);
      inet_pton (AF_INET, "127.0.0.1", &sa.sin_addr);
      l = socket (AF_INET, SOCK_STREAM, 0);
      setsockopt (l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      if (l < 0 || bind (l, (struct sockaddr *) &sa, sizeof sa) < 0 || listen (l, 4) < 0)
        _exit (1);
      c = socket (AF_INET, SOCK_STREAM, 0);
      if (c < 0 || connect (c, (struct sockaddr *) &sa, sizeof sa) < 0)
        _exit (1);
      a = accept (l, NULL, NULL);
      if (a < 0 || write (c, "x", 1) != 1)
        _exit (1);
      if (write (p[1], "k", 1) != 1)
        _exit (1);
      close (p[1]);
      close (0);
      close (1);
      close (2);
      for (;;)
        pause ();
    }
  close (p[1]);
  if (read (p[0], &ok, 1) != 1)
    {
      fprintf (stderr, "the daemon failed\n");
      return 1;
    }
  puts ("left");
  return 0;
}

/* Lines of a /proc table beyond its header. */
static int
rows (const char *path)
{
  FILE *f = fopen (path, "r");
  char line[512];
  int n = -1;
  if (f == NULL)
    return 0;
  while (fgets (line, sizeof line, f))
    n++;
  fclose (f);
  return n < 0 ? 0 : n;
}

static int
check (void)
{
  static const char *const tables[] = { "/proc/sysvipc/shm", "/proc/sysvipc/sem",
                                        "/proc/sysvipc/msg", "/proc/net/tcp", "/proc/net/tcp6",
                                        "/proc/net/udp", "/proc/net/unix" };
  int bad = 0;
  mqd_t q;

  for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++)
    {
      int n = rows (tables[i]);
      if (n > 0)
        {
          printf ("%s: %d\n", tables[i], n);
          bad = 1;
        }
    }
  q = mq_open ("/brig-tenant", O_RDONLY);
  if (q != (mqd_t) -1)
    {
      puts ("mqueue /brig-tenant");
      bad = 1;
    }
  if (syscall (SYS_keyctl, KEYCTL_SEARCH, KEY_SPEC_SESSION_KEYRING, "user", "brig-tenant", 0) >= 0)
    {
      puts ("key brig-tenant in the session keyring");
      bad = 1;
    }
  if (!bad)
    puts ("clean");
  return bad;
}

static int
tcp_pair (int l, const struct sockaddr_in *dst, struct sockaddr_in *src, int rst)
{
  int one = 1, c = socket (AF_INET, SOCK_STREAM, 0), a;
  socklen_t sl = sizeof *src;
  char b[64];

  if (c < 0)
    return -1;
  if (src->sin_port)
    {
      setsockopt (c, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
      if (bind (c, (const struct sockaddr *) src, sizeof *src) < 0)
        return -1;
    }
  if (connect (c, (const struct sockaddr *) dst, sizeof *dst) < 0
      || getsockname (c, (struct sockaddr *) src, &sl) < 0 || (a = accept (l, NULL, NULL)) < 0)
    return -1;
  if (rst)
    {
      struct linger lg = { 1, 0 };
      setsockopt (c, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
      close (c);
      usleep (20000);
      close (a);
      return 0;
    }
  /* data both ways (an RTT to save), the server closes first: its side
   * goes to TIME_WAIT, the client's through LAST_ACK saves the metrics */
  if (write (c, "x", 1) != 1 || read (a, b, 1) != 1 || write (a, "y", 1) != 1
      || read (c, b, 1) != 1)
    return -1;
  close (a);
  usleep (20000);
  close (c);
  usleep (20000);
  return 0;
}

static int
metrics_leave (int n)
{
  struct sockaddr_in any = { .sin_family = AF_INET, .sin_port = htons (7778) };
  int one = 1, l = socket (AF_INET, SOCK_STREAM, 0);

  setsockopt (l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (l < 0 || bind (l, (struct sockaddr *) &any, sizeof any) < 0 || listen (l, 4) < 0)
    return 1;
  for (int i = 1; i <= n; i++)
    {
      struct sockaddr_in dst = any, src = { .sin_family = AF_INET };
      dst.sin_addr.s_addr = htonl (0x7f4d0100 | (uint32_t) i);   /* 127.77.1.i */
      inet_pton (AF_INET, "127.0.0.1", &src.sin_addr);
      if (tcp_pair (l, &dst, &src, 0) < 0 || tcp_pair (l, &dst, &src, 1) < 0)
        {
          perror ("metrics-leave");
          return 1;
        }
    }
  close (l);
  printf ("left %d\n", n);
  return 0;
}

/* One generic netlink request; the answer's messages go to cb. */
static int
gnl (int fd, void *req, size_t len, void (*cb) (struct nlmsghdr *m, void *arg), void *arg)
{
  static char buf[16384] __attribute__ ((aligned (4)));
  if (send (fd, req, len, 0) < 0)
    return -1;
  for (;;)
    {
      ssize_t got = recv (fd, buf, sizeof buf, 0);
      unsigned int n = (unsigned int) got;
      if (got <= 0)
        return -1;
      for (struct nlmsghdr *m = (struct nlmsghdr *) buf; NLMSG_OK (m, n); m = NLMSG_NEXT (m, n))
        {
          if (m->nlmsg_type == NLMSG_DONE)
            return 0;
          if (m->nlmsg_type == NLMSG_ERROR)
            return ((struct nlmsgerr *) NLMSG_DATA (m))->error ? -1 : 0;
          cb (m, arg);
          if (!(m->nlmsg_flags & NLM_F_MULTI))
            return 0;
        }
    }
}

struct gnl_msg {
  struct nlmsghdr h;
  struct genlmsghdr g;
  char attrs[64];
};

static void
each_attr (struct nlmsghdr *m, void (*f) (struct nlattr *a, void *arg), void *arg)
{
  struct nlattr *a = (struct nlattr *) ((char *) NLMSG_DATA (m) + GENL_HDRLEN);
  int left = (int) m->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;
  while (left >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= left)
    {
      f (a, arg);
      left -= NLA_ALIGN (a->nla_len);
      a = (struct nlattr *) ((char *) a + NLA_ALIGN (a->nla_len));
    }
}

static void
family_attr (struct nlattr *a, void *arg)
{
  if ((a->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_FAMILY_ID)
    memcpy (arg, (char *) a + NLA_HDRLEN, sizeof (uint16_t));
}

static void
family_cb (struct nlmsghdr *m, void *arg)
{
  each_attr (m, family_attr, arg);
}

static void
metric_attr (struct nlattr *a, void *arg)
{
  uint32_t addr;
  if ((a->nla_type & NLA_TYPE_MASK) != TCP_METRICS_ATTR_ADDR_IPV4)
    return;
  memcpy (&addr, (char *) a + NLA_HDRLEN, sizeof addr);
  if ((ntohl (addr) & 0xffff0000) == 0x7f4d0000)
    {
      char s[INET_ADDRSTRLEN];
      puts (inet_ntop (AF_INET, &addr, s, sizeof s));
      (*(int *) arg)++;
    }
}

static void
metric_cb (struct nlmsghdr *m, void *arg)
{
  each_attr (m, metric_attr, arg);
}

static int
metrics_read (void)
{
  int fd = socket (AF_NETLINK, SOCK_RAW, NETLINK_GENERIC), n = 0;
  struct gnl_msg q = { .h = { .nlmsg_type = GENL_ID_CTRL, .nlmsg_flags = NLM_F_REQUEST },
                       .g = { .cmd = CTRL_CMD_GETFAMILY, .version = 1 } };
  struct nlattr *a = (struct nlattr *) q.attrs;
  uint16_t family = 0;

  a->nla_type = CTRL_ATTR_FAMILY_NAME;
  a->nla_len = NLA_HDRLEN + sizeof TCP_METRICS_GENL_NAME;
  memcpy (q.attrs + NLA_HDRLEN, TCP_METRICS_GENL_NAME, sizeof TCP_METRICS_GENL_NAME);
  q.h.nlmsg_len = NLMSG_LENGTH (GENL_HDRLEN + NLA_ALIGN (a->nla_len));
  if (fd < 0 || gnl (fd, &q, q.h.nlmsg_len, family_cb, &family) < 0 || family == 0)
    {
      perror ("tcp_metrics family");
      return 1;
    }
  memset (&q, 0, sizeof q);
  q.h.nlmsg_type = family;
  q.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  q.h.nlmsg_len = NLMSG_LENGTH (GENL_HDRLEN);
  q.g.cmd = TCP_METRICS_CMD_GET;
  q.g.version = TCP_METRICS_GENL_VERSION;
  if (gnl (fd, &q, q.h.nlmsg_len, metric_cb, &n) < 0)
    {
      perror ("tcp_metrics dump");
      return 1;
    }
  printf ("metrics %d\n", n);
  return 0;
}

static int
flowlabel_leave (int n)
{
  int fd = socket (AF_INET6, SOCK_DGRAM, 0);
  if (fd < 0)
    {
      perror ("socket AF_INET6");
      return 1;
    }
  for (int i = 1; i <= n; i++)
    {
      struct in6_flowlabel_req r = { .flr_dst = IN6ADDR_LOOPBACK_INIT,
                                     .flr_label = htonl (0x77000 | (uint32_t) i),
                                     .flr_action = IPV6_FL_A_GET, .flr_share = IPV6_FL_S_ANY,
                                     .flr_flags = IPV6_FL_F_CREATE, .flr_linger = 150 };
      if (setsockopt (fd, IPPROTO_IPV6, IPV6_FLOWLABEL_MGR, &r, sizeof r) < 0)
        {
          perror ("IPV6_FLOWLABEL_MGR");
          return 1;
        }
    }
  close (fd);
  printf ("left %d\n", n);
  return 0;
}

static int
mq_leave (const char *name)
{
  char path[256];
  mqd_t q;

  snprintf (path, sizeof path, "/%s", name);
  q = mq_open (path, O_CREAT | O_RDWR, 0600, NULL);
  if (q == (mqd_t) -1)
    {
      perror ("mq_open");
      return 1;
    }
  mq_close (q);
  printf ("left %s\n", name);
  return 0;
}

#define KEY_SPEC_USER_KEYRING -4
#define KEYCTL_GET_KEYRING_ID 0
#define KEYCTL_DESCRIBE 6
#define KEYCTL_SETPERM 5
#define KEYCTL_GET_PERSISTENT 22

static int key_serial (void);

static int
key_join (const char *name)
{
  if (syscall (SYS_keyctl, 1 /* KEYCTL_JOIN_SESSION_KEYRING */, name) < 0)
    {
      perror ("keyctl join");
      return 1;
    }
  return key_serial ();
}

static int
key_serial (void)
{
  long id = syscall (SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0);
  if (id < 0)
    {
      perror ("keyctl get_keyring_id");
      return 1;
    }
  printf ("%ld\n", id);
  return 0;
}

/* A keyring named name linked into dest (the user's persistent keyring:
 * it outlives every process of the tenant), searchable by its owner, with
 * the key brig-tenant in it. */
static int
plant (const char *name, long dest)
{
  long ring = add_key ("keyring", name, NULL, 0, (int) dest);
  if (ring < 0)
    {
      fprintf (stderr, "add_key keyring %s: %m\n", name);
      return -1;
    }
  syscall (SYS_keyctl, KEYCTL_SETPERM, ring, 0x3f3f0000);
  return add_key ("user", "brig-tenant", "secret", 6, (int) ring) < 0 ? -1 : 0;
}

static int
key_plant (const char *id)
{
  char name[512], desc[512];
  long dest;
  int n = 0;

  if (add_key ("user", "brig-tenant", "secret", 6, KEY_SPEC_SESSION_KEYRING) < 0)
    {
      perror ("add_key");
      return 1;
    }
  dest = syscall (SYS_keyctl, KEYCTL_GET_PERSISTENT, -1, KEY_SPEC_SESSION_KEYRING);
  if (dest < 0)
    {
      perror ("keyctl get_persistent");
      return 1;
    }
  snprintf (name, sizeof name, "_ses.%s", id);
  n += plant (name, dest) == 0;
  for (int i = 0; i < 4; i++)
    {
      snprintf (name, sizeof name, "_ses.%s.%d", id, i);
      n += plant (name, dest) == 0;
    }
  /* "keyring;UID;GID;PERM;NAME" */
  if (syscall (SYS_keyctl, KEYCTL_DESCRIBE, KEY_SPEC_SESSION_KEYRING, desc, sizeof desc) > 0
      && strrchr (desc, ';'))
    n += plant (strrchr (desc, ';') + 1, dest) == 0;
  printf ("planted %d\n", n);
  return 0;
}

int
main (int argc, char **argv)
{
  if (argc == 2 && strcmp (argv[1], "key-serial") == 0)
    return key_serial ();
  if (argc == 3 && strcmp (argv[1], "key-join") == 0)
    return key_join (argv[2]);
  if (argc == 3 && strcmp (argv[1], "key-plant") == 0)
    return key_plant (argv[2]);
  if (argc == 3 && strcmp (argv[1], "mq-leave") == 0)
    return mq_leave (argv[2]);
  if (argc == 3 && strcmp (argv[1], "flowlabel-leave") == 0)
    return flowlabel_leave (atoi (argv[2]));
  if (argc == 3 && strcmp (argv[1], "metrics-leave") == 0)
    return metrics_leave (atoi (argv[2]));
  if (argc == 2 && strcmp (argv[1], "metrics-read") == 0)
    return metrics_read ();
  if (argc == 2 && strcmp (argv[1], "leave") == 0)
    return leave ();
  if (argc == 2 && strcmp (argv[1], "check") == 0)
    return check ();
  fprintf (stderr, "usage: reset_tenant leave|check|metrics-leave N|metrics-read|flowlabel-leave N"
           "|mq-leave NAME|key-serial|key-join NAME|key-plant ID\n");
  return 2;
}
