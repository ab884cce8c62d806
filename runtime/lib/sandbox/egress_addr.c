/* Unwrapping IPv6 forms that carry an IPv4 address (egress_addr.h). The
 * table below is the one list of them in C; egress_bpf.c emits the same
 * tests for the kernel side. */
#include <string.h>

#include "sandbox/egress_addr.h"
#include "utils.h"

struct form {
  enum brig_addr_form form;
  uint8_t net[16];    /* the range, network order */
  unsigned len;       /* its prefix length */
  unsigned v4_at;     /* byte offset of the embedded IPv4; 0: none */
  bool inverted;      /* Teredo stores it with every bit flipped */
};

static const struct form forms[] = {
  { BRIG_ADDR_MAPPED, { [10] = 0xff, [11] = 0xff }, 96, 12, false },
  { BRIG_ADDR_SIIT, { [8] = 0xff, [9] = 0xff }, 96, 12, false },
  { BRIG_ADDR_NAT64, { 0x00, 0x64, 0xff, 0x9b }, 96, 12, false },
  /* the rest of 64:ff9b::/32: local-use 64:ff9b:1::/48 and what no RFC
   * assigns, which a translator set up with another prefix length would
   * still translate */
  { BRIG_ADDR_NAT64_LOCAL, { 0x00, 0x64, 0xff, 0x9b }, 32, 0, false },
  { BRIG_ADDR_6TO4, { 0x20, 0x02 }, 16, 2, false },
  { BRIG_ADDR_TEREDO, { 0x20, 0x01, 0x00, 0x00 }, 32, 12, true },
  { BRIG_ADDR_COMPAT, { 0 }, 96, 12, false },
};

bool
brig_addr_in_prefix (const uint8_t *net, unsigned prefix, const uint8_t *a)
{
  for (unsigned b = 0; b < prefix; b++)
    if ((net[b / 8] ^ a[b / 8]) & (0x80u >> (b % 8)))
      return false;
  return true;
}

enum brig_addr_form
brig_addr_unwrap (const uint8_t a[16], unsigned prefix, uint8_t v4[4], unsigned *v4_prefix)
{
  static const uint8_t zero[3] = { 0 };

  if (v4_prefix)
    *v4_prefix = 0;
  for (size_t i = 0; i < BRIG_ARRAY_SIZE (forms); i++)
    {
      const struct form *f = &forms[i];
      unsigned start = f->v4_at * 8, bits;
      uint8_t w[4];

      if (prefix < f->len || !brig_addr_in_prefix (f->net, f->len, a))
        continue;
      /* :: and ::1 are IPv6's own unspecified and loopback addresses */
      if (f->form == BRIG_ADDR_COMPAT && prefix >= 127 && memcmp (a + 12, zero, 3) == 0
          && (a[15] & 0xfe) == 0)
        return BRIG_ADDR_NATIVE;
      if (f->v4_at == 0)
        return f->form;
      bits = prefix > start ? prefix - start : 0;
      if (bits > 32)
        bits = 32;
      for (unsigned k = 0; k < 4; k++)
        w[k] = f->inverted ? (uint8_t) ~a[f->v4_at + k] : a[f->v4_at + k];
      for (unsigned b = bits; b < 32; b++)
        w[b / 8] &= (uint8_t) ~(0x80u >> (b % 8));
      if (v4)
        memcpy (v4, w, 4);
      if (v4_prefix)
        *v4_prefix = bits;
      return f->form;
    }
  return BRIG_ADDR_NATIVE;
}

bool
brig_addr_form_has_v4 (enum brig_addr_form f)
{
  return f != BRIG_ADDR_NATIVE && f != BRIG_ADDR_NAT64_LOCAL;
}

const char *
brig_addr_form_name (enum brig_addr_form f)
{
  switch (f)
    {
    case BRIG_ADDR_MAPPED: return "IPv4-mapped";
    case BRIG_ADDR_COMPAT: return "IPv4-compatible";
    case BRIG_ADDR_SIIT: return "SIIT";
    case BRIG_ADDR_NAT64: return "NAT64";
    case BRIG_ADDR_NAT64_LOCAL: return "local-use NAT64";
    case BRIG_ADDR_6TO4: return "6to4";
    case BRIG_ADDR_TEREDO: return "Teredo";
    case BRIG_ADDR_NATIVE: break;
    }
  return "IPv6";
}
