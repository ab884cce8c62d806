/* What a tenant leaves in a network namespace without a socket: the TCP
 * metrics cache, IPv6 flow labels and the traffic counters (docs/sandbox.md
 * "The network namespace"). Every TCP
 * connection that ends adds an entry per destination address (RTT, cwnd)
 * to its namespace's cache, kept for an hour, and anyone in the namespace
 * can list it (TCP_METRICS_CMD_GET needs no privilege). A tenant that
 * connects to 127.x.y.z and closes without leaving TIME_WAIT (it recycles
 * it with a new SYN and resets that) passes the socket counters, and the
 * addresses it chose carry its data to the next tenant of a reused
 * namespace. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/tcp_metrics.h>

#include "sandbox/reset_internal.h"
#include "utils.h"

struct gnl_req {
  struct nlmsghdr h;
  struct genlmsghdr g;
  char attrs[64];
};

/* Send one request and walk the replies: the family id of a
 * CTRL_CMD_GETFAMILY answer into *family, else count the messages of
 * type *family (a dump) into *count. */
static int
gnl_talk (int fd, struct gnl_req *req, uint16_t *family, size_t *count)
{
  static char buf[16384] __attribute__ ((aligned (4)));
  bool dump = req->h.nlmsg_flags & NLM_F_DUMP;

  if (send (fd, req, req->h.nlmsg_len, 0) < 0)
    return -errno;
  for (;;)
    {
      ssize_t got = recv (fd, buf, sizeof buf, 0);
      unsigned int n = (unsigned int) got;
      if (got < 0 && errno == EINTR)
        continue;
      if (got <= 0)
        return got < 0 ? -errno : -EPROTO;
      for (struct nlmsghdr *m = (struct nlmsghdr *) buf; NLMSG_OK (m, n); m = NLMSG_NEXT (m, n))
        {
          if (m->nlmsg_type == NLMSG_DONE)
            return 0;
          if (m->nlmsg_type == NLMSG_ERROR)
            {
              struct nlmsgerr *e = NLMSG_DATA (m);
              return e->error;
            }
          if (dump)
            {
              if (m->nlmsg_type == *family)
                (*count)++;
              continue;
            }
          /* CTRL_CMD_NEWFAMILY: find CTRL_ATTR_FAMILY_ID */
          {
            struct nlattr *a = (struct nlattr *) ((char *) NLMSG_DATA (m) + GENL_HDRLEN);
            int left = (int) m->nlmsg_len - NLMSG_HDRLEN - GENL_HDRLEN;
            while (left >= (int) NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= left)
              {
                if ((a->nla_type & NLA_TYPE_MASK) == CTRL_ATTR_FAMILY_ID)
                  {
                    memcpy (family, (char *) a + NLA_HDRLEN, sizeof *family);
                    return 0;
                  }
                left -= NLA_ALIGN (a->nla_len);
                a = (struct nlattr *) ((char *) a + NLA_ALIGN (a->nla_len));
              }
            return -EPROTO;
          }
        }
    }
}

int
reset_tcp_metrics (size_t *count)
{
  _cleanup_close_ int fd = socket (AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
  struct gnl_req req = { 0 };
  struct nlattr *a = (struct nlattr *) req.attrs;
  uint16_t family = 0;
  size_t len = sizeof TCP_METRICS_GENL_NAME;
  int r;

  *count = 0;
  if (fd < 0)
    return -errno;
  req.h.nlmsg_type = GENL_ID_CTRL;
  req.h.nlmsg_flags = NLM_F_REQUEST;
  req.h.nlmsg_seq = 1;
  req.g.cmd = CTRL_CMD_GETFAMILY;
  req.g.version = 1;
  a->nla_type = CTRL_ATTR_FAMILY_NAME;
  a->nla_len = (uint16_t) (NLA_HDRLEN + len);
  memcpy (req.attrs + NLA_HDRLEN, TCP_METRICS_GENL_NAME, len);
  req.h.nlmsg_len = NLMSG_LENGTH (GENL_HDRLEN + NLA_ALIGN (a->nla_len));
  r = gnl_talk (fd, &req, &family, count);
  if (r == -ENOENT)
    return 0;   /* no tcp_metrics in this kernel: nothing is cached */
  if (r < 0)
    return r;
  memset (&req, 0, sizeof req);
  req.h.nlmsg_type = family;
  req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
  req.h.nlmsg_seq = 2;
  req.h.nlmsg_len = NLMSG_LENGTH (GENL_HDRLEN);
  req.g.cmd = TCP_METRICS_CMD_GET;
  req.g.version = TCP_METRICS_GENL_VERSION;
  return gnl_talk (fd, &req, &family, count);
}

int
reset_flowlabels (size_t *count)
{
  /* A shared flow label lingers up to 150 s after its last socket closed,
   * unprivileged, with the 20-bit label its maker chose, and every process
   * of the namespace reads the table. */
  _cleanup_free_ char *text = NULL;
  int r = brig_read_file_at (AT_FDCWD, "/proc/thread-self/net/ip6_flowlabel", &text, NULL, NULL);

  *count = 0;
  if (r == -ENOENT)
    return 0;   /* no IPv6 */
  if (r < 0)
    return r;
  for (char *l = strchr (text, '\n'); l && l[1]; l = strchr (l + 1, '\n'))
    (*count)++;
  return 0;
}

/* Fields of /proc/net/snmp that are settings, not counters: the same in
 * every namespace the tenant could not change (read-only /proc/sys). */
static bool
snmp_setting (const char *name)
{
  static const char *const names[] = { "Forwarding", "DefaultTTL", "RtoAlgorithm", "RtoMin",
                                       "RtoMax", "MaxConn" };
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (names); i++)
    if (strcmp (name, names[i]) == 0)
      return true;
  return false;
}

/* snmp and netstat: a line of names, then one of values, per protocol
 * ("Tcp: RtoAlgorithm ..." / "Tcp: 1 ..."). The first counter not 0. */
static char *
pairs_moved (char *text)
{
  char *save = NULL, *names = NULL;

  for (char *l = strtok_r (text, "\n", &save); l; l = strtok_r (NULL, "\n", &save))
    {
      char *ns = NULL, *vs = NULL, *proto, *n, *v;
      if (names == NULL)
        {
          names = l;
          continue;
        }
      proto = strtok_r (names, " ", &ns);
      strtok_r (l, " ", &vs);
      names = NULL;
      while ((n = strtok_r (NULL, " ", &ns)) && (v = strtok_r (NULL, " ", &vs)))
        if (strcmp (v, "0") != 0 && !snmp_setting (n))
          return xasprintf ("%s %s is %s", proto, n, v);
    }
  return NULL;
}

/* snmp6: "Name value" lines; the first value not 0. */
static char *
lines_moved (char *text)
{
  char *save = NULL;
  for (char *l = strtok_r (text, "\n", &save); l; l = strtok_r (NULL, "\n", &save))
    {
      /* "%-32s\t%lu" */
      size_t n = strlen (l);
      while (n > 0 && l[n - 1] >= '0' && l[n - 1] <= '9')
        n--;
      if (strcmp (l + n, "0") != 0 && l[n] != '\0')
        return xasprintf ("%.*s %s", (int) strcspn (l, " \t"), l, l + n);
    }
  return NULL;
}

/* dev: two header lines, then "  lo: 16 numbers". */
static char *
dev_moved (char *text)
{
  char *save = NULL;
  int k = 0;
  for (char *l = strtok_r (text, "\n", &save); l; l = strtok_r (NULL, "\n", &save))
    {
      char *c = strchr (l, ':');
      if (k++ < 2 || c == NULL)
        continue;
      for (char *p = c + 1; *p; p++)
        if (*p >= '1' && *p <= '9')
          {
            *c = '\0';
            return xasprintf ("interface %s has counted traffic", l + strspn (l, " "));
          }
    }
  return NULL;
}

int
reset_netns_counters (char **detail)
{
  /* Loopback's packets and the SNMP counters count what the tenant sent
   * and received, cumulatively; nothing resets them and every process of
   * the namespace reads them, so a tenant wrote numbers of its choice
   * there for the next one (as many refused connections as it liked, no
   * socket left). Only a namespace where none moved is clean. */
  static const struct { const char *file; char *(*moved) (char *); } files[] = {
    { "dev", dev_moved }, { "snmp", pairs_moved }, { "netstat", pairs_moved },
    { "snmp6", lines_moved },
  };

  *detail = NULL;
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (files) && *detail == NULL; i++)
    {
      _cleanup_free_ char *path = xasprintf ("/proc/thread-self/net/%s", files[i].file);
      _cleanup_free_ char *text = NULL;
      int r = brig_read_file_at (AT_FDCWD, path, &text, NULL, NULL);
      if (r == -ENOENT)
        continue;   /* no IPv6 */
      if (r < 0)
        return r;
      *detail = files[i].moved (text);
    }
  return 0;
}
