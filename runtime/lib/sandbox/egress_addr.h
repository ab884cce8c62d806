/* IPv6 addresses that stand for an IPv4 destination (docs/sandbox.md,
 * "Translated IPv6 forms"): the egress policy judges such an address, an
 * allow or deny entry written in one and a DNS answer naming one as the
 * IPv4 address it carries, never by its IPv6 spelling. The same forms are
 * unwrapped by the BPF programs (egress_bpf.c) for every destination. */
#ifndef BRIG_SANDBOX_EGRESS_ADDR_H
#define BRIG_SANDBOX_EGRESS_ADDR_H

#include <stdbool.h>
#include <stdint.h>

enum brig_addr_form {
  BRIG_ADDR_NATIVE,      /* an IPv6 destination of its own */
  BRIG_ADDR_MAPPED,      /* ::ffff:a.b.c.d (RFC 4291): the socket sends IPv4 */
  BRIG_ADDR_COMPAT,      /* ::a.b.c.d (RFC 4291, deprecated; a sit tunnel
                            sends it to a.b.c.d): denied as a destination */
  BRIG_ADDR_SIIT,        /* ::ffff:0:a.b.c.d (RFC 2765 IPv4-translated) */
  BRIG_ADDR_NAT64,       /* 64:ff9b::a.b.c.d (RFC 6052 well-known prefix) */
  BRIG_ADDR_NAT64_LOCAL, /* the rest of 64:ff9b::/32, local-use
                            64:ff9b:1::/48 (RFC 8215) among it: where the
                            IPv4 sits depends on the network's prefix
                            length (RFC 6052 2.2: 32 to 96), which brig
                            cannot know: no IPv4, denied */
  BRIG_ADDR_6TO4,        /* 2002:AABB:CCDD::/48 (RFC 3056): a relay sends
                            protocol 41 to AA.BB.CC.DD */
  BRIG_ADDR_TEREDO,      /* 2001:0::/32 (RFC 4380): a relay sends UDP to the
                            client's IPv4, the last 32 bits inverted */
};

/* The form of the IPv6 prefix a/prefix (prefix 128: one address), and for
 * the forms that carry one the IPv4 prefix it stands for: v4 (host bits
 * cleared) and *v4_prefix (0 when the IPv6 prefix ends before the embedded
 * address starts). A prefix shorter than a form's own range (2000::/3
 * holds 2002::/16) is BRIG_ADDR_NATIVE: it is not inside the range. ::
 * and ::1 are BRIG_ADDR_NATIVE (unspecified, loopback), as is a prefix
 * holding only those two. v4 and v4_prefix may be NULL. */
enum brig_addr_form brig_addr_unwrap (const uint8_t a[16], unsigned prefix, uint8_t v4[4],
                                      unsigned *v4_prefix);

/* Whether the first prefix bits of a equal those of net (either family:
 * the caller knows the length). */
bool brig_addr_in_prefix (const uint8_t *net, unsigned prefix, const uint8_t *a);

/* Whether a form carries an IPv4 address that brig_addr_unwrap returns. */
bool brig_addr_form_has_v4 (enum brig_addr_form f);

/* A short name of a form for messages ("NAT64", "6to4", ...). */
const char *brig_addr_form_name (enum brig_addr_form f);

#endif
