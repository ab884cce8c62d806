/* Shared between check.c (engine, reports, policy) and check_rules.c. */
#ifndef BRIG_SANDBOX_CHECK_INTERNAL_H
#define BRIG_SANDBOX_CHECK_INTERNAL_H

#include "sandbox/check.h"

/* Add a finding of rule (an entry of brig_check_rules) with severity sev,
 * unless the rule is above rep->profile. Takes path (malloc'd, freed when
 * the rule does not apply); the message is printf(fmt). */
void check_add (struct brig_check_report *rep, const struct brig_check_rule *rule,
                enum brig_check_severity sev, char *path, const char *fmt, ...)
  __attribute__ ((format (printf, 5, 6)));

/* Run every rule over cfg, adding to rep (check_rules.c). */
void check_run_rules (const oci_config *cfg, struct brig_check_report *rep);

#endif
