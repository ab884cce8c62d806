/* brig's DNS answer parser (runtime/lib/sandbox/dns.c: read_name, judge),
 * on hand-made datagrams: what an answer must carry to count, the CNAME
 * chain inside the answer, and the malformed names a hostile server or a
 * spoofer could send (compression loops, forward pointers, overlong
 * names, records running past the datagram). tests/fuzz/fuzz_dns.c runs
 * the same parser on random input. */
#include "sandbox/dns.c"
#include "tap.h"

struct pkt {
  uint8_t b[1024];
  size_t n;
};

static void
put (struct pkt *p, const void *d, size_t n)
{
  memcpy (p->b + p->n, d, n);
  p->n += n;
}

static void
put16 (struct pkt *p, unsigned v)
{
  uint8_t b[2] = { (uint8_t) (v >> 8), (uint8_t) v };
  put (p, b, 2);
}

static void
put_name (struct pkt *p, const char *name)
{
  for (const char *l = name; *l;)
    {
      size_t len = strcspn (l, ".");
      uint8_t c = (uint8_t) len;
      put (p, &c, 1);
      put (p, l, len);
      l += len + (l[len] == '.');
    }
  put (p, "", 1);
}

/* header (id, flags, 1 question, an answers) and the question */
static void
start (struct pkt *p, unsigned id, unsigned flags, unsigned an, const char *q, unsigned qtype)
{
  p->n = 0;
  put16 (p, id);
  put16 (p, flags);
  put16 (p, 1);
  put16 (p, an);
  put16 (p, 0);
  put16 (p, 0);
  put_name (p, q);
  put16 (p, qtype);
  put16 (p, 1);
}

/* a record whose owner is the 2-byte pointer ptr (0: the question's name) */
static void
rr (struct pkt *p, unsigned ptr, unsigned type, const void *rdata, unsigned rdlen)
{
  put16 (p, 0xc000 | (ptr ? ptr : 12));
  put16 (p, type);
  put16 (p, 1);
  put16 (p, 0);
  put16 (p, 60);
  put16 (p, rdlen);
  put (p, rdata, rdlen);
}

static enum verdict
run (struct pkt *p, unsigned id, const char *name, uint16_t qtype, struct brig_dns_addr *out,
     size_t *n)
{
  *n = 0;
  return judge (p->b, p->n, (uint16_t) id, name, qtype, out, n);
}

int
main (void)
{
  static const uint8_t v4[4] = { 192, 0, 2, 1 }, v4b[4] = { 198, 51, 100, 7 };
  static const uint8_t v6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
  struct brig_dns_addr out[BRIG_DNS_MAX_ADDRS];
  struct pkt p;
  size_t n, off;
  char name[256];

  tap_plan (16);

  start (&p, 0x1234, 0x8180, 1, "example.com", QTYPE_A);
  rr (&p, 0, QTYPE_A, v4, 4);
  tap_ok (run (&p, 0x1234, "example.com", QTYPE_A, out, &n) == V_OK && n == 1
          && out[0].family == AF_INET && memcmp (out[0].addr, v4, 4) == 0,
          "an A answer gives its address");
  tap_ok (run (&p, 0x1235, "example.com", QTYPE_A, out, &n) == V_IGNORE && n == 0,
          "another id is not the answer");
  tap_ok (run (&p, 0x1234, "example.org", QTYPE_A, out, &n) == V_IGNORE && n == 0,
          "another question is not the answer");
  tap_ok (run (&p, 0x1234, "EXAMPLE.com", QTYPE_A, out, &n) == V_OK && n == 1,
          "names compare without case");
  p.b[2] &= 0x7f;
  tap_ok (run (&p, 0x1234, "example.com", QTYPE_A, out, &n) == V_IGNORE,
          "a query (no QR bit) is not an answer");

  start (&p, 7, 0x8180, 1, "example.com", QTYPE_AAAA);
  rr (&p, 0, QTYPE_AAAA, v6, 16);
  tap_ok (run (&p, 7, "example.com", QTYPE_AAAA, out, &n) == V_OK && n == 1
          && out[0].family == AF_INET6 && memcmp (out[0].addr, v6, 16) == 0,
          "an AAAA answer gives its address");

  /* www.example.com CNAME example.com; an A for example.com and one for an
   * unrelated owner (which must not be taken) */
  start (&p, 9, 0x8180, 3, "www.example.com", QTYPE_A);
  {
    static const uint8_t target[] = { 0xc0, 16 };   /* "example.com" inside the question */
    size_t other;
    rr (&p, 0, QTYPE_CNAME, target, 2);
    rr (&p, 16, QTYPE_A, v4b, 4);
    other = p.n;
    put_name (&p, "evil.test");
    put16 (&p, QTYPE_A);
    put16 (&p, 1);
    put16 (&p, 0);
    put16 (&p, 60);
    put16 (&p, 4);
    put (&p, v4, 4);
    (void) other;
  }
  tap_ok (run (&p, 9, "www.example.com", QTYPE_A, out, &n) == V_OK && n == 1
          && memcmp (out[0].addr, v4b, 4) == 0,
          "a CNAME chain inside the answer ends at the target's address only");

  start (&p, 1, 0x8183, 0, "nope.example", QTYPE_A);
  tap_ok (run (&p, 1, "nope.example", QTYPE_A, out, &n) == V_NXDOMAIN, "NXDOMAIN");
  start (&p, 1, 0x8380, 0, "big.example", QTYPE_A);
  tap_ok (run (&p, 1, "big.example", QTYPE_A, out, &n) == V_FAIL, "a truncated answer fails");
  start (&p, 1, 0x8182, 0, "x.example", QTYPE_A);
  tap_ok (run (&p, 1, "x.example", QTYPE_A, out, &n) == V_FAIL, "SERVFAIL fails");

  start (&p, 3, 0x8180, 1, "example.com", QTYPE_A);
  rr (&p, 0, QTYPE_A, v4, 5);
  tap_ok (run (&p, 3, "example.com", QTYPE_A, out, &n) == V_OK && n == 0,
          "an A record of 5 bytes is not an address");
  start (&p, 3, 0x8180, 1, "example.com", QTYPE_A);
  rr (&p, 0, QTYPE_A, v4, 4);
  p.n -= 2;
  tap_ok (run (&p, 3, "example.com", QTYPE_A, out, &n) == V_FAIL && n == 0,
          "a record running past the datagram fails");

  /* names */
  p.n = 0;
  put16 (&p, 0xc000);           /* a pointer to itself */
  off = 0;
  tap_ok (read_name (p.b, p.n, &off, name, sizeof name) < 0, "a pointer to itself is refused");
  p.n = 0;
  put (&p, "\x01" "a", 2);
  put16 (&p, 0xc000);           /* back to the start: a loop */
  off = 0;
  tap_ok (read_name (p.b, p.n, &off, name, sizeof name) < 0, "a compression loop is refused");
  p.n = 0;
  put16 (&p, 0xc004);           /* forwards */
  put (&p, "\x00\x00\x01" "a", 4);
  put (&p, "", 1);
  off = 0;
  tap_ok (read_name (p.b, p.n, &off, name, sizeof name) < 0, "a forward pointer is refused");
  /* 5 labels of 63 bytes: 319 characters, longer than any DNS name */
  p.n = 0;
  for (int i = 0; i < 5; i++)
    {
      uint8_t l = 63, lab[63];
      memset (lab, 'a', sizeof lab);
      put (&p, &l, 1);
      put (&p, lab, sizeof lab);
    }
  put (&p, "", 1);
  off = 0;
  tap_ok (read_name (p.b, p.n, &off, name, sizeof name) < 0, "a name over 255 bytes is refused");
  return tap_done ();
}
