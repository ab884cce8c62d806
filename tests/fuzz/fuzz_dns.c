/* libFuzzer target for brig's DNS answer parser (runtime/lib/sandbox/dns.c):
 * a datagram from the network, parsed by root at create. The id and the
 * question are taken from the input itself, so every input that gets past
 * the header reaches the answer section: names with compression pointers,
 * CNAME chains, addresses. ASan/UBSan watch the reads; the harness checks
 * what judge() promises. */
#include "../../runtime/lib/sandbox/dns.c"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  struct brig_dns_addr out[BRIG_DNS_MAX_ADDRS];
  char name[256];
  size_t off = 12, n = 0;
  uint16_t id, qtype;

  if (size < 12)
    return 0;
  /* A copy exactly as large as the input: ASan sees a read one past it. */
  uint8_t *m = malloc (size);
  if (m == NULL)
    return 0;
  memcpy (m, data, size);
  id = (uint16_t) ((m[0] << 8) | m[1]);
  if (read_name (m, size, &off, name, sizeof name) < 0)
    strcpy (name, "example.com");
  /* AAAA when the question says so, else A */
  qtype = off + 2 <= size && ((m[off] << 8) | m[off + 1]) == QTYPE_AAAA ? QTYPE_AAAA : QTYPE_A;
  if (strlen (name) >= sizeof name)
    abort ();
  enum verdict v = judge (m, size, id, name, qtype, out, &n);
  if (v != V_IGNORE && v != V_OK && v != V_NXDOMAIN && v != V_FAIL)
    abort ();
  if (n > BRIG_DNS_MAX_ADDRS || (v != V_OK && n != 0))
    abort ();
  for (size_t i = 0; i < n; i++)
    if (out[i].family != (qtype == QTYPE_A ? AF_INET : AF_INET6))
      abort ();
  free (m);
  return 0;
}
