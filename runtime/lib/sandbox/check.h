/* `brig check`: is this config a boundary? Rules taken from the published
 * guidance (CIS Docker Benchmark v1.6.0 section 5, Kubernetes Pod Security
 * Standards baseline/restricted, NIST SP 800-190 section 4.4) and brig's own
 * sandbox layer (egress policy), applied to a parsed config.json. The rules
 * read the config, and judge its names by what they reach (check_judge.c):
 * a namespace path is opened (create hands over the fd it will join), a
 * bind source resolved; nothing else is asked of the system, so create can
 * afford them when a policy asks. docs/sandbox.md lists every rule and the
 * JSON report format. */
#ifndef BRIG_SANDBOX_CHECK_H
#define BRIG_SANDBOX_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "ocispec.h"
#include "sandbox/egress.h"

/* Profiles are cumulative: restricted holds every baseline rule, sandbox
 * every restricted rule. */
enum brig_check_profile {
  BRIG_PROFILE_BASELINE,
  BRIG_PROFILE_RESTRICTED,
  BRIG_PROFILE_SANDBOX,
};

enum brig_check_severity {
  BRIG_SEV_INFO,
  BRIG_SEV_LOW,
  BRIG_SEV_MEDIUM,
  BRIG_SEV_HIGH,
  BRIG_SEV_CRITICAL,
};
#define BRIG_SEV_COUNT (BRIG_SEV_CRITICAL + 1)

/* The fixed part of a rule (check_rules.c holds the table). */
struct brig_check_rule {
  const char *id;                      /* stable, kebab-case: "host-ns-pid" */
  enum brig_check_severity severity;   /* default severity of its findings */
  enum brig_check_profile profile;     /* the lowest profile it belongs to */
  const char *source;                  /* the guidance it comes from */
  const char *why;                     /* what an attacker gains */
  const char *fix;                     /* what to change in config.json */
};

/* One weakness found in a config. */
struct brig_finding {
  const struct brig_check_rule *rule;
  enum brig_check_severity severity;   /* may differ from the rule's (ro vs rw) */
  char *path;                          /* JSON path: linux.namespaces, mounts[3].source */
  char *message;                       /* what this config does */
};

struct brig_check_input;

/* The findings of one check, in rule order. */
struct brig_check_report {
  enum brig_check_profile profile;
  enum brig_check_severity fail_on;
  struct brig_finding *findings;
  size_t len;
  size_t counts[BRIG_SEV_COUNT];
  const char *bundle;  /* absolute; relative bind sources and root.path are
                          found there (NULL: the current directory) */
  const struct brig_check_input *in;   /* while the rules run: what they judge
                                          besides the config (never NULL) */
};

/* Parse a profile name (baseline, restricted, sandbox); 0 or -EINVAL. */
int brig_check_profile_parse (const char *s, enum brig_check_profile *out);

/* Parse a severity name (info, low, medium, high, critical); 0 or -EINVAL. */
int brig_check_severity_parse (const char *s, enum brig_check_severity *out);

/* The name of a profile / severity. */
const char *brig_check_profile_name (enum brig_check_profile p);
const char *brig_check_severity_name (enum brig_check_severity s);

/* The default --fail-on: a config with a high or critical finding fails. */
#define BRIG_CHECK_DEFAULT_FAIL_ON BRIG_SEV_HIGH

#define BRIG_POLICY_EGRESS_MAX 64

/* The node policy's "egress" section: what a container may allow itself
 * (docs/sandbox.md, "The node policy"). */
struct brig_policy_egress {
  bool set;                 /* the policy has the section */
  bool public_ok;           /* "public": any entry that covers no metadata,
                               private, link-local or host loopback range */
  struct brig_egress_cidr allow[BRIG_POLICY_EGRESS_MAX];
  size_t n_allow;
};

/* What the rules judge besides the config. Every field may be empty. */
struct brig_check_input {
  const int *ns_fd;         /* [BRIG_NS_COUNT]: the fds create will join
                               (-1: none); NULL: the rules open the paths */
  const struct brig_policy_egress *egress_policy; /* the node policy's, or NULL */
  const brig_egress_policy *egress; /* resolved at create: its allow rules,
                                       pinned addresses included, are judged
                                       instead of the annotation's text */
  bool names_later;         /* create judges hostnames once resolved: no
                               not-checked finding for them now */
  const char *bundle;       /* the bundle directory, where relative mount
                               sources lie (NULL: the current directory) */
};

/* Run every rule of profile over cfg into *rep (cleared first). Never fails:
 * a field that is absent is judged as the runtime would apply it. */
void brig_check_config (const oci_config *cfg, enum brig_check_profile profile,
                        enum brig_check_severity fail_on, struct brig_check_report *rep);

/* brig_check_config, with in (may be NULL) for what create has opened,
 * resolved, or what the node policy says. */
void brig_check_run (const oci_config *cfg, const struct brig_check_input *in,
                     enum brig_check_profile profile, enum brig_check_severity fail_on,
                     struct brig_check_report *rep);

/* Whether rep holds a finding at or above its fail_on severity. */
bool brig_check_failed (const struct brig_check_report *rep);

/* Release what rep owns. */
void brig_check_report_clear (struct brig_check_report *rep);

/* The report as a readable table (malloc'd, ends in a newline). */
char *brig_check_report_text (const struct brig_check_report *rep);

/* The report as JSON (malloc'd, ends in a newline; see docs/sandbox.md);
 * config names the checked file (may be NULL). NULL on ENOMEM. */
char *brig_check_report_json (const struct brig_check_report *rep, const char *config);

/* Every rule as a JSON array (malloc'd, ends in a newline): id, severity,
 * profile, source, why, fix. NULL on ENOMEM. */
char *brig_check_rules_json (void);

/* The full rule table and its length (for docs and tests). */
extern const struct brig_check_rule brig_check_rules[];
extern const size_t brig_check_rules_count;

/* ---- node policy (`brig --policy FILE`, default BRIG_POLICY_DEFAULT) ---- */

#define BRIG_POLICY_DEFAULT "/etc/brig/policy.json"

/* A node policy: the profile every create must pass, from which severity a
 * finding refuses it, and what a container may allow itself. */
struct brig_policy {
  enum brig_check_profile profile;
  enum brig_check_severity fail_on;
  struct brig_policy_egress egress;
};

/* Load the policy at path, or at BRIG_POLICY_DEFAULT when path is NULL.
 * *found is false (and 0 returned) only when path is NULL and the default
 * file does not exist; that case costs one open(2). A named file that is
 * missing or unreadable, bad JSON, or an unknown profile or key is an error
 * (fail closed). */
int brig_policy_load (const char *path, struct brig_policy *pol, bool *found, brig_error *err);

/* Enforce the node policy on cfg (of the bundle directory bundle, NULL: the
 * current directory) before anything is touched: 0 when there is no policy
 * or cfg passes it; else -EPERM with the findings at or above fail_on in
 * err. The rules open namespace paths themselves (restore). */
int brig_policy_enforce (const char *path, const oci_config *cfg, const char *bundle,
                         brig_error *err);

/* create's two looks (container/validate.c). */
struct brig_policy_create {
  const char *path;
  const char *bundle;
  bool found;
  struct brig_policy pol;
};

/* Load the policy into pc and judge cfg as given, its namespaces by the
 * fds create will join (ns_fd[BRIG_NS_COUNT], -1: none), before any egress
 * hostname is resolved. 0, or -EPERM naming the failing findings. */
int brig_policy_create_check (const char *path, const oci_config *cfg, const char *bundle,
                              const int *ns_fd, struct brig_policy_create *pc, brig_error *err);

/* Once egress hostnames are resolved and pinned: cfg judged again with the
 * allow rules of eg, every pinned address included. */
int brig_policy_create_check_pinned (const struct brig_policy_create *pc, const oci_config *cfg,
                                     const int *ns_fd, const brig_egress_policy *eg,
                                     brig_error *err);

/* The node policy for exec: the container's own failing findings, taken
 * before the exec'd process is built, so that exec is judged only on what
 * its process adds (a policy tightened after create does not lock the
 * container's own process out). */
struct brig_policy_exec {
  const char *path;   /* as given to begin (NULL: the default file) */
  bool found;
  struct brig_policy pol;
  struct brig_check_report before;
};

/* Load the policy (one open(2) when there is none) and check cfg. */
int brig_policy_exec_begin (const char *path, const oci_config *cfg, struct brig_policy_exec *pe,
                            brig_error *err);

/* 0 when cfg run with process p fails the policy on nothing the container's
 * own config did not already fail on; else -EPERM naming the new findings. */
int brig_policy_exec_check (const struct brig_policy_exec *pe, const oci_config *cfg,
                            const oci_process *p, brig_error *err);

/* The node policy for a pool claim, judged like exec (pe: begun on the
 * member's saved config): 0 when view (that config with the claim's
 * annotations, env and mounts merged in) fails on nothing the member's own
 * config did not; eg: the claim's resolved egress policy (NULL: none).
 * Else -EPERM naming the new findings. */
int brig_policy_claim_check (const struct brig_policy_exec *pe, const oci_config *view,
                             const brig_egress_policy *eg, brig_error *err);

/* Release what pe owns. */
void brig_policy_exec_clear (struct brig_policy_exec *pe);

/* The node policy for `update`, judged like exec: 0 when cfg with res
 * merged into its linux.resources fails the policy at path on nothing cfg
 * itself does not already fail on; else -EPERM naming the new findings (a
 * limit the policy requires that the update would lift). One open(2) when
 * there is no policy. */
int brig_policy_update_check (const char *path, const oci_config *cfg, const oci_resources *res,
                              brig_error *err);

#endif
