/* What an egress allow entry reaches (runtime/lib/sandbox/check_judge.c):
 * every translated IPv6 form unwrapped to the IPv4 range it names, the
 * ranges an entry covers (directly, through a form, or by spanning a whole
 * form), and what a node policy's egress section admits. */
#include <arpa/inet.h>
#include <string.h>
#include <sys/socket.h>

#include "sandbox/check_internal.h"
#include "tap.h"
#include "utils.h"

/* "a.b.c.d/n", "x::/n" or "[x::]:port" as brig_egress_entry_parse reads it. */
static struct brig_egress_cidr
cidr (const char *s)
{
  struct brig_egress_cidr c;
  char host[64];
  if (brig_egress_entry_parse ("test", s, true, &c, host, sizeof host, NULL) != 0)
    {
      tap_diag ("bad test entry %s", s);
      memset (&c, 0, sizeof c);
    }
  return c;
}

static const char *
text (const struct brig_egress_cidr *c, char *buf, size_t size)
{
  char a[INET6_ADDRSTRLEN];
  inet_ntop (c->family, c->addr, a, sizeof a);
  snprintf (buf, size, "%s/%u", a, c->prefix);
  return buf;
}

static void
unwraps_to (const char *in, const char *want)
{
  struct brig_egress_cidr c = cidr (in), out;
  char got[80];
  check_addr_unwrap (&c, &out);
  tap_ok (strcmp (text (&out, got, sizeof got), want) == 0, "unwrap %s: %s (want %s)", in, got,
          want);
}

static void
covers (const char *in, bool own, enum check_cover want, const char *what)
{
  struct brig_egress_cidr c = cidr (in);
  char got[160] = "";
  enum check_cover cov = check_egress_covers (&c, own, got, sizeof got);
  tap_ok (cov == want && strstr (got, what) != NULL, "%s%s covers %d (want %d): %s", in,
          own ? " (own netns)" : "", cov, want, got);
}

int
main (void)
{
  static const struct {
    const char *entry;
    bool admitted;
  } admits[] = {
    { "10.96.0.10:53", true }, { "10.96.0.10:54", false }, { "10.96.0.10", false },
    { "[::ffff:10.96.0.10]:53", true }, { "[64:ff9b::a60:a]:53", true },
    { "10.20.1.0/24:443", true }, { "10.20.0.0/15:443", false }, { "203.0.113.0/24", true },
    { "[2001:db8::1]:443", true }, { "169.254.169.254:80", false }, { "0.0.0.0/0", false },
    { "::/0", false }, { "192.168.0.1", false },
  };
  struct brig_policy_egress pe = { .set = true, .public_ok = true };

  tap_plan (16 + 22 + (int) BRIG_ARRAY_SIZE (admits) + 2);

  unwraps_to ("::ffff:10.1.2.3", "10.1.2.3/32");
  unwraps_to ("::ffff:0:a00:0/104", "10.0.0.0/8");
  unwraps_to ("::ffff:0:0/96", "0.0.0.0/0");
  unwraps_to ("64:ff9b::a9fe:a9fe", "169.254.169.254/32");
  unwraps_to ("64:ff9b::a9fe:0/112", "169.254.0.0/16");
  /* local-use NAT64: the embedding depends on a prefix length brig cannot
   * know (RFC 6052 2.2): every IPv4 address */
  unwraps_to ("64:ff9b:1::a9fe:a9fe", "0.0.0.0/0");
  unwraps_to ("64:ff9b:1:2:3:4:a9fe:a9fe", "0.0.0.0/0");
  unwraps_to ("64:ff9b:1::/64", "0.0.0.0/0");
  unwraps_to ("2002:a9fe:a9fe::/48", "169.254.169.254/32");
  unwraps_to ("2002:a9fe:a9fe:1::/64", "169.254.169.254/32");
  unwraps_to ("2002:a00::/24", "10.0.0.0/8");
  unwraps_to ("::a9fe:a9fe", "169.254.169.254/32");
  unwraps_to ("2001:0:4136:e378:8000:63bf:5601:5601", "169.254.169.254/32");
  unwraps_to ("2001:db8::a9fe:a9fe", "2001:db8::a9fe:a9fe/128");
  unwraps_to ("2001:db8::1", "2001:db8::1/128");
  unwraps_to ("10.0.0.0/8", "10.0.0.0/8");

  covers ("169.254.169.254", false, CHECK_COVER_METADATA, "metadata");
  covers ("169.254.0.0/16", false, CHECK_COVER_METADATA, "169.254.169.254/32");
  covers ("100.100.100.200:80", false, CHECK_COVER_METADATA, "100.100.100.200");
  covers ("0.0.0.0/0", true, CHECK_COVER_METADATA, "metadata");
  /* the runtime opens no translated form for an entry wider than the
   * form's range: ::/0 is judged as IPv6 */
  covers ("::/0", true, CHECK_COVER_METADATA, "fd00:ec2::254");
  covers ("64:ff9b:1::/64", true, CHECK_COVER_METADATA, "local-use NAT64");
  covers ("2002::/16", true, CHECK_COVER_METADATA, "6to4");
  covers ("2001::/32", true, CHECK_COVER_METADATA, "Teredo");
  covers ("2001:0:4136:e378:8000:63bf:f5ff:fffe", true, CHECK_COVER_PRIVATE, "10.0.0.0/8");
  covers ("::ffff:0:a9fe:a9fe", true, CHECK_COVER_METADATA, "SIIT");
  covers ("fd00:ec2::254", true, CHECK_COVER_METADATA, "fd00:ec2::254/128");
  covers ("fd00::/8", true, CHECK_COVER_METADATA, "fd00:ec2::254/128");
  covers ("10.1.2.3:5432", true, CHECK_COVER_PRIVATE, "10.0.0.0/8 (private)");
  covers ("[::ffff:172.16.0.1]:443", true, CHECK_COVER_PRIVATE, "172.16.0.0/12");
  covers ("2002:c0a8::/32", true, CHECK_COVER_PRIVATE, "192.168.0.0/16");
  covers ("fe80::1", true, CHECK_COVER_PRIVATE, "fe80::/10");
  covers ("127.0.0.1:8080", false, CHECK_COVER_PRIVATE, "loopback");
  covers ("127.0.0.1:8080", true, CHECK_COVER_NONE, "");
  covers ("::ffff:127.0.0.1", true, CHECK_COVER_NONE, "");
  covers ("0.0.0.0", false, CHECK_COVER_PRIVATE, "this host");
  covers ("192.0.2.0/24", false, CHECK_COVER_NONE, "");
  covers ("64:ff9b::c000:20a", false, CHECK_COVER_NONE, "");

  pe.allow[pe.n_allow++] = cidr ("10.96.0.10:53");
  pe.allow[pe.n_allow++] = cidr ("10.20.0.0/16:443");
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (admits); i++)
    {
      struct brig_egress_cidr c = cidr (admits[i].entry);
      tap_ok (check_policy_admits (&pe, &c, true) == admits[i].admitted, "policy %s %s",
              admits[i].admitted ? "admits" : "refuses", admits[i].entry);
    }
  /* without "public", only the list */
  pe.public_ok = false;
  {
    struct brig_egress_cidr c = cidr ("203.0.113.0/24"), d = cidr ("[::ffff:10.20.3.4]:443");
    tap_ok (!check_policy_admits (&pe, &c, true), "without public: 203.0.113.0/24 refused");
    tap_ok (check_policy_admits (&pe, &d, true), "without public: ::ffff:10.20.3.4 port 443 admitted");
  }
  return tap_done ();
}
