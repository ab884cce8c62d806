/* Shared between check.c (engine, reports, policy), check_rules.c (the
 * rules) and check_judge.c (what names reach: namespace paths). */
#ifndef BRIG_SANDBOX_CHECK_INTERNAL_H
#define BRIG_SANDBOX_CHECK_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "sandbox/check.h"

/* Add a finding of rule (an entry of brig_check_rules) with severity sev,
 * unless the rule is above rep->profile. Takes path (malloc'd, freed when
 * the rule does not apply); the message is printf(fmt). */
void check_add (struct brig_check_report *rep, const struct brig_check_rule *rule,
                enum brig_check_severity sev, char *path, const char *fmt, ...)
  __attribute__ ((format (printf, 5, 6)));

/* Run every rule over cfg, adding to rep (check_rules.c). */
void check_run_rules (const oci_config *cfg, struct brig_check_report *rep);

/* ---- check_judge.c ---- */

enum check_ns_verdict { CHECK_NS_OTHER, CHECK_NS_HOST, CHECK_NS_UNCHECKED };

/* What the linux.namespaces entry ns (with a path) joins, judged by the
 * namespace it opens (in->ns_fd's fd when create gives one): the host's,
 * another, or not judged; why says which namespace or why not. */
enum check_ns_verdict check_ns_judge (const oci_namespace *ns, const struct brig_check_input *in,
                                      char *why, size_t size);

#endif
