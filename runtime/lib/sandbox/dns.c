/* A DNS stub resolver of brig's own, for allow-list hostnames only (the
 * policy code calls it after /etc/hosts, like "hosts: files dns"). It
 * trusts what the host's /etc/resolv.conf names at create time and nothing
 * else: each try uses a fresh UDP socket connected to the server (the
 * kernel picks a random source port and drops datagrams from other
 * peers), random 16-bit ids, and an answer counts only when it comes from
 * that server with the id and the question echoed. No DNSSEC, no TCP: a
 * truncated answer is a failed try. Every path is bounded in time and
 * fails closed. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/dns.h"
#include "utils.h"

#define MAX_SERVERS 3
#define MAX_TIMEOUT_S 2   /* per server and try */
#define MAX_ATTEMPTS 2
#define MAX_CNAMES 8
#define MAX_RRS 64
#define QTYPE_A 1
#define QTYPE_CNAME 5
#define QTYPE_AAAA 28

struct server {
  struct sockaddr_storage sa;
  socklen_t len;
  char text[INET6_ADDRSTRLEN];
};

struct conf {
  struct server s[MAX_SERVERS];
  size_t n;
  int timeout_s, attempts;
};

/* nameserver lines (numeric, IPv4 or IPv6 without a scope) and the
 * timeout:/attempts: options, clamped so create stays bounded */
static int
read_conf (struct conf *c, brig_error *err)
{
  _cleanup_free_ char *buf = NULL;
  char *save = NULL;

  memset (c, 0, sizeof *c);
  c->timeout_s = MAX_TIMEOUT_S;
  c->attempts = 1;
  if (brig_read_file_at (AT_FDCWD, "/etc/resolv.conf", &buf, NULL, err) < 0)
    return -ENOENT;
  for (char *line = strtok_r (buf, "\n", &save); line; line = strtok_r (NULL, "\n", &save))
    {
      char *ws = NULL, *key = strtok_r (line, " \t", &ws), *val;
      if (key == NULL || *key == '#' || *key == ';')
        continue;
      if (strcmp (key, "nameserver") == 0 && (val = strtok_r (NULL, " \t", &ws))
          && c->n < MAX_SERVERS)
        {
          struct server *s = &c->s[c->n];
          struct sockaddr_in *v4 = (struct sockaddr_in *) &s->sa;
          struct sockaddr_in6 *v6 = (struct sockaddr_in6 *) &s->sa;
          memset (s, 0, sizeof *s);
          if (inet_pton (AF_INET, val, &v4->sin_addr) == 1)
            {
              v4->sin_family = AF_INET;
              v4->sin_port = htons (53);
              s->len = sizeof *v4;
            }
          else if (inet_pton (AF_INET6, val, &v6->sin6_addr) == 1)
            {
              v6->sin6_family = AF_INET6;
              v6->sin6_port = htons (53);
              s->len = sizeof *v6;
            }
          else
            continue;
          snprintf (s->text, sizeof s->text, "%s", val);
          c->n++;
        }
      else if (strcmp (key, "options") == 0)
        while ((val = strtok_r (NULL, " \t", &ws)))
          {
            if (strncmp (val, "timeout:", 8) == 0)
              c->timeout_s = atoi (val + 8);
            else if (strncmp (val, "attempts:", 9) == 0)
              c->attempts = atoi (val + 9);
          }
    }
  c->timeout_s = c->timeout_s < 1 ? 1 : c->timeout_s > MAX_TIMEOUT_S ? MAX_TIMEOUT_S : c->timeout_s;
  c->attempts = c->attempts < 1 ? 1 : c->attempts > MAX_ATTEMPTS ? MAX_ATTEMPTS : c->attempts;
  return 0;
}

/* header, the name as labels, type, class IN; name has no trailing dot */
static size_t
build_query (uint8_t *q, uint16_t id, const char *name, uint16_t qtype)
{
  size_t o = 12;
  memset (q, 0, 12);
  q[0] = (uint8_t) (id >> 8);
  q[1] = (uint8_t) id;
  q[2] = 0x01;  /* RD */
  q[5] = 1;     /* QDCOUNT */
  for (const char *l = name; *l;)
    {
      size_t len = strcspn (l, ".");
      q[o++] = (uint8_t) len;
      memcpy (q + o, l, len);
      o += len;
      l += len;
      if (*l == '.')
        l++;
    }
  q[o++] = 0;
  q[o++] = (uint8_t) (qtype >> 8);
  q[o++] = (uint8_t) qtype;
  q[o++] = 0;
  q[o++] = 1;
  return o;
}

/* A (possibly compressed) name at *off into out (dotted, no trailing
 * dot); *off moves past it. Pointers must go backwards, so no loops. */
static int
read_name (const uint8_t *m, size_t len, size_t *off, char *out, size_t outsz)
{
  size_t o = *off, w = 0, limit = o;
  bool jumped = false;

  for (;;)
    {
      uint8_t l;
      if (o >= len)
        return -1;
      l = m[o];
      if ((l & 0xc0) == 0xc0)
        {
          size_t to;
          if (o + 1 >= len)
            return -1;
          to = ((size_t) (l & 0x3f) << 8) | m[o + 1];
          if (!jumped)
            *off = o + 2;
          jumped = true;
          if (to >= limit)
            return -1;
          limit = to;
          o = to;
          continue;
        }
      if (l & 0xc0)
        return -1;
      o++;
      if (l == 0)
        break;
      if (o + l > len || w + l + 2 > outsz)
        return -1;
      if (w)
        out[w++] = '.';
      memcpy (out + w, m + o, l);
      w += l;
      o += l;
    }
  out[w] = '\0';
  if (!jumped)
    *off = o;
  return 0;
}

enum verdict { V_IGNORE, V_OK, V_NXDOMAIN, V_FAIL };

struct rr {
  char owner[256];
  uint16_t type;
  size_t rdata, rdlen;
};

/* Judge one datagram as the answer to (id, name, qtype): V_IGNORE when it
 * is not that answer (wrong id, no QR, other question), else the rcode's
 * verdict; on V_OK the final name's addresses are appended to out. */
static enum verdict
judge (const uint8_t *m, size_t len, uint16_t id, const char *name, uint16_t qtype,
       struct brig_dns_addr *out, size_t *n)
{
  char qn[256], cur[256];
  size_t off = 12, nrr = 0;
  unsigned qd, an;
  static struct rr rrs[MAX_RRS];

  if (len < 12 || ((m[0] << 8) | m[1]) != id || !(m[2] & 0x80) || (m[2] & 0x78))
    return V_IGNORE;
  qd = (unsigned) (m[4] << 8 | m[5]);
  an = (unsigned) (m[6] << 8 | m[7]);
  if (qd != 1 || read_name (m, len, &off, qn, sizeof qn) < 0 || off + 4 > len
      || strcasecmp (qn, name) != 0 || ((m[off] << 8) | m[off + 1]) != qtype
      || ((m[off + 2] << 8) | m[off + 3]) != 1)
    return V_IGNORE;
  off += 4;
  if (m[2] & 0x02)  /* TC: brig has no TCP fallback */
    return V_FAIL;
  switch (m[3] & 0x0f)
    {
    case 0:
      break;
    case 3:
      return V_NXDOMAIN;
    default:
      return V_FAIL;
    }
  for (unsigned i = 0; i < an && nrr < MAX_RRS; i++)
    {
      struct rr *r = &rrs[nrr];
      if (read_name (m, len, &off, r->owner, sizeof r->owner) < 0 || off + 10 > len)
        return V_FAIL;
      r->type = (uint16_t) ((m[off] << 8) | m[off + 1]);
      r->rdlen = (size_t) ((m[off + 8] << 8) | m[off + 9]);
      r->rdata = off + 10;
      if (r->rdata + r->rdlen > len)
        return V_FAIL;
      off = r->rdata + r->rdlen;
      /* class IN only */
      if (((m[r->rdata - 8] << 8) | m[r->rdata - 7]) == 1)
        nrr++;
    }
  /* the chain from the name asked, inside this answer only */
  snprintf (cur, sizeof cur, "%s", name);
  for (int hop = 0; hop < MAX_CNAMES; hop++)
    {
      bool moved = false;
      for (size_t i = 0; i < nrr && !moved; i++)
        if (rrs[i].type == QTYPE_CNAME && strcasecmp (rrs[i].owner, cur) == 0)
          {
            size_t o = rrs[i].rdata;
            char next[256];
            if (read_name (m, len, &o, next, sizeof next) < 0)
              return V_FAIL;
            snprintf (cur, sizeof cur, "%s", next);
            moved = true;
          }
      if (!moved)
        break;
    }
  for (size_t i = 0; i < nrr && *n < BRIG_DNS_MAX_ADDRS; i++)
    {
      size_t want = qtype == QTYPE_A ? 4 : 16;
      if (rrs[i].type != qtype || rrs[i].rdlen != want || strcasecmp (rrs[i].owner, cur) != 0)
        continue;
      out[*n].family = qtype == QTYPE_A ? AF_INET : AF_INET6;
      memset (out[*n].addr, 0, 16);
      memcpy (out[*n].addr, m + rrs[i].rdata, want);
      (*n)++;
    }
  return V_OK;
}

static bool
same_peer (const struct sockaddr_storage *a, const struct server *s)
{
  if (a->ss_family != s->sa.ss_family)
    return false;
  if (a->ss_family == AF_INET)
    {
      const struct sockaddr_in *x = (const void *) a, *y = (const void *) &s->sa;
      return x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr;
    }
  const struct sockaddr_in6 *x = (const void *) a, *y = (const void *) &s->sa;
  return x->sin6_port == y->sin6_port && memcmp (&x->sin6_addr, &y->sin6_addr, 16) == 0;
}

/* One try at one server: both questions (A, AAAA) answered within
 * timeout_ms gives V_OK or V_NXDOMAIN; anything else V_FAIL. */
static enum verdict
try_server (const struct server *s, const char *name, int timeout_ms,
            struct brig_dns_addr *out, size_t *n)
{
  static const uint16_t types[2] = { QTYPE_A, QTYPE_AAAA };
  enum verdict got[2] = { V_IGNORE, V_IGNORE };
  uint16_t ids[2];
  uint8_t q[300], m[1500];
  int64_t deadline = brig_mono_ms () + timeout_ms;
  _cleanup_close_ int fd = -1;
  size_t n0 = *n;

  if (getrandom (ids, sizeof ids, 0) != (ssize_t) sizeof ids)
    return V_FAIL;
  if (ids[1] == ids[0])
    ids[1] ^= 1;
  fd = socket (s->sa.ss_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0 || connect (fd, (const struct sockaddr *) &s->sa, s->len) < 0)
    return V_FAIL;
  for (int i = 0; i < 2; i++)
    {
      size_t ql = build_query (q, ids[i], name, types[i]);
      if (send (fd, q, ql, 0) != (ssize_t) ql)
        return V_FAIL;
    }
  while (got[0] == V_IGNORE || got[1] == V_IGNORE)
    {
      struct pollfd p = { .fd = fd, .events = POLLIN };
      struct sockaddr_storage from;
      socklen_t fl = sizeof from;
      int64_t left = deadline - brig_mono_ms ();
      ssize_t r;
      if (left <= 0 || poll (&p, 1, (int) left) <= 0)
        return V_FAIL;
      r = recvfrom (fd, m, sizeof m, 0, (struct sockaddr *) &from, &fl);
      if (r < 0)
        {
          if (errno == EAGAIN || errno == EINTR)
            continue;
          return V_FAIL;  /* e.g. ECONNREFUSED: nothing listens there */
        }
      if (!same_peer (&from, s))
        continue;
      for (int i = 0; i < 2; i++)
        if (got[i] == V_IGNORE)
          {
            got[i] = judge (m, (size_t) r, ids[i], name, types[i], out, n);
            if (got[i] != V_IGNORE)
              break;
          }
      if (got[0] == V_FAIL || got[1] == V_FAIL)
        {
          *n = n0;
          return V_FAIL;
        }
    }
  if (*n == n0 && (got[0] == V_NXDOMAIN || got[1] == V_NXDOMAIN))
    return V_NXDOMAIN;
  return V_OK;
}

int
brig_dns_resolve (const char *name, int64_t *deadline, struct brig_dns_addr *out, size_t *n,
                  brig_error *err)
{
  char qname[256];
  size_t len = strlen (name);
  struct conf c;
  _cleanup_free_ char *tried = NULL;

  *n = 0;
  if (len >= sizeof qname)
    return brig_error_say (err, EINVAL, "host \"%.40s...\": name too long", name);
  memcpy (qname, name, len + 1);
  if (len && qname[len - 1] == '.')
    qname[--len] = '\0';
  for (const char *l = qname; *l;)
    {
      size_t ll = strcspn (l, ".");
      if (ll == 0 || ll > 63)
        return brig_error_say (err, EINVAL, "host \"%s\": not a DNS name", name);
      l += ll + (l[ll] == '.');
    }
  /* RFC 6761: "invalid" names never reach a server */
  if (strcasecmp (qname, "invalid") == 0
      || (len > 8 && strcasecmp (qname + len - 8, ".invalid") == 0))
    return brig_error_say (err, ENOENT, "host \"%s\" does not exist (.invalid)", name);
  if (*deadline == 0)
    *deadline = brig_mono_ms () + BRIG_DNS_BUDGET_MS;
  if (read_conf (&c, err) < 0)
    return brig_error_wrap (err, "host \"%s\": not in /etc/hosts, and no nameserver", name);
  if (c.n == 0)
    return brig_error_say (err, ENOENT, "host \"%s\": not in /etc/hosts, and "
                           "/etc/resolv.conf names no nameserver", name);
  for (int a = 0; a < c.attempts; a++)
    for (size_t i = 0; i < c.n; i++)
      {
        enum verdict v;
        int64_t left = *deadline - brig_mono_ms ();
        if (left <= 0)
          return brig_error_say (err, ETIMEDOUT, "host \"%s\": the %d s that all of the "
                                 "policy's DNS lookups may take are spent", name,
                                 BRIG_DNS_BUDGET_MS / 1000);
        /* each server's answer stands alone: nothing of one that failed
         * half way (A answered, AAAA timed out) is kept */
        *n = 0;
        v = try_server (&c.s[i], qname, left < c.timeout_s * 1000 ? (int) left
                                                                   : c.timeout_s * 1000,
                        out, n);
        if (v == V_NXDOMAIN)
          return brig_error_say (err, ENOENT, "host \"%s\" does not exist (nameserver %s: "
                                 "NXDOMAIN)", name, c.s[i].text);
        if (v == V_OK && *n == 0)
          return brig_error_say (err, ENOENT, "host \"%s\" has no A or AAAA address "
                                 "(nameserver %s)", name, c.s[i].text);
        if (v == V_OK)
          return 0;
      }
  for (size_t i = 0; i < c.n; i++)
    {
      char *old = tried;
      tried = old ? xasprintf ("%s, %s", old, c.s[i].text) : xstrdup (c.s[i].text);
      free (old);
    }
  return brig_error_say (err, ETIMEDOUT, "host \"%s\": no usable answer from nameserver %s "
                         "within %d s (not in /etc/hosts either)", name, tried,
                         c.timeout_s * c.attempts * (int) c.n);
}
