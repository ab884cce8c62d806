/* A small DNS stub resolver for the egress allow list (docs/sandbox.md,
 * "Hostnames"): brig is a static binary without NSS, so a name /etc/hosts
 * does not know is asked, once at create, of the nameservers in
 * /etc/resolv.conf over UDP from brig's own network namespace. */
#ifndef BRIG_SANDBOX_DNS_H
#define BRIG_SANDBOX_DNS_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define BRIG_DNS_MAX_ADDRS 32

/* One address of an answer. */
struct brig_dns_addr {
  int family;        /* AF_INET or AF_INET6 */
  uint8_t addr[16];  /* network order */
};

/* All lookups of one create share this many milliseconds. */
#define BRIG_DNS_BUDGET_MS 10000

/* Resolve name (as written: no search list) to its A and AAAA addresses,
 * following CNAMEs inside the answer only; *n is at least 1 on success.
 * *deadline (CLOCK_MONOTONIC ms; 0: start a BRIG_DNS_BUDGET_MS budget now)
 * bounds the time of every lookup that shares it. Fails closed with a
 * message naming name. */
int brig_dns_resolve (const char *name, int64_t *deadline, struct brig_dns_addr *out, size_t *n,
                      brig_error *err);

#endif
