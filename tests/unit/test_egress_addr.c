/* brig_addr_unwrap (runtime/lib/sandbox/egress_addr.c): every IPv6 form
 * that carries an IPv4 address, as one address and as a prefix, and the
 * neighbours that must stay IPv6 (::, ::1, a prefix wider than the form's
 * range, 64:ff9b::/32 outside the well-known /96). */
#include <arpa/inet.h>
#include <string.h>

#include "sandbox/egress_addr.h"
#include "tap.h"

struct want {
  const char *addr;
  unsigned prefix;
  enum brig_addr_form form;
  const char *v4;       /* NULL: none */
  unsigned v4_prefix;
};

static const struct want cases[] = {
  { "::ffff:169.254.169.254", 128, BRIG_ADDR_MAPPED, "169.254.169.254", 32 },
  { "::ffff:10.0.0.0", 104, BRIG_ADDR_MAPPED, "10.0.0.0", 8 },
  { "::a9fe:a9fe", 128, BRIG_ADDR_COMPAT, "169.254.169.254", 32 },
  { "::2", 127, BRIG_ADDR_COMPAT, "0.0.0.2", 31 },
  { "::", 128, BRIG_ADDR_NATIVE, NULL, 0 },
  { "::1", 128, BRIG_ADDR_NATIVE, NULL, 0 },
  { "::", 127, BRIG_ADDR_NATIVE, NULL, 0 },
  { "::", 96, BRIG_ADDR_COMPAT, "0.0.0.0", 0 },
  { "::ffff:0:a9fe:a9fe", 128, BRIG_ADDR_SIIT, "169.254.169.254", 32 },
  { "64:ff9b::a9fe:a9fe", 128, BRIG_ADDR_NAT64, "169.254.169.254", 32 },
  { "64:ff9b::c000:200", 120, BRIG_ADDR_NAT64, "192.0.2.0", 24 },
  { "64:ff9b::", 96, BRIG_ADDR_NAT64, "0.0.0.0", 0 },
  { "64:ff9b::", 95, BRIG_ADDR_NAT64_LOCAL, NULL, 0 },
  { "64:ff9b:1::a9fe:a9fe", 128, BRIG_ADDR_NAT64_LOCAL, NULL, 0 },
  { "64:ff9b:1:a9fe:a9:fe00::", 128, BRIG_ADDR_NAT64_LOCAL, NULL, 0 },
  { "64:ff9b::1:0:0:a9fe", 128, BRIG_ADDR_NAT64_LOCAL, NULL, 0 },
  { "64:ff9b::", 32, BRIG_ADDR_NAT64_LOCAL, NULL, 0 },
  { "64:ff9b::", 31, BRIG_ADDR_NATIVE, NULL, 0 },
  { "2002:a9fe:a9fe::1", 128, BRIG_ADDR_6TO4, "169.254.169.254", 32 },
  { "2002:a9fe:a9fe::", 48, BRIG_ADDR_6TO4, "169.254.169.254", 32 },
  { "2002:a00::", 24, BRIG_ADDR_6TO4, "10.0.0.0", 8 },
  { "2002::", 16, BRIG_ADDR_6TO4, "0.0.0.0", 0 },
  { "2000::", 3, BRIG_ADDR_NATIVE, NULL, 0 },
  { "2001:0:a00:1::5601:5601", 128, BRIG_ADDR_TEREDO, "169.254.169.254", 32 },
  { "2001:0:a00:1::f5ff:ffff", 104, BRIG_ADDR_TEREDO, "10.0.0.0", 8 },
  { "2001::", 32, BRIG_ADDR_TEREDO, "0.0.0.0", 0 },
  { "2001:1::1", 128, BRIG_ADDR_NATIVE, NULL, 0 },
  { "2001:db8::10", 128, BRIG_ADDR_NATIVE, NULL, 0 },
  { "fd00:ec2::254", 128, BRIG_ADDR_NATIVE, NULL, 0 },
};

int
main (void)
{
  tap_plan ((int) (sizeof cases / sizeof cases[0]) + 1);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    {
      const struct want *w = &cases[i];
      uint8_t a[16], v4[4] = { 0xaa, 0xaa, 0xaa, 0xaa };
      unsigned v4p = 99;
      char text[INET_ADDRSTRLEN] = "";
      enum brig_addr_form f;
      bool ok;

      inet_pton (AF_INET6, w->addr, a);
      f = brig_addr_unwrap (a, w->prefix, v4, &v4p);
      if (brig_addr_form_has_v4 (f))
        inet_ntop (AF_INET, v4, text, sizeof text);
      ok = f == w->form && (w->v4 ? strcmp (text, w->v4) == 0 && v4p == w->v4_prefix
                                  : !brig_addr_form_has_v4 (f) && v4p == 0);
      tap_ok (ok, "%s/%u: %s %s/%u", w->addr, w->prefix, brig_addr_form_name (f), text, v4p);
    }
  {
    uint8_t a[16];
    inet_pton (AF_INET6, "64:ff9b::a9fe:a9fe", a);
    tap_ok (brig_addr_unwrap (a, 128, NULL, NULL) == BRIG_ADDR_NAT64, "NULL outputs");
  }
  return tap_done ();
}
