/* Unit tests for libocispec: full-spec fixtures, round trips, spot checks of
 * values, and one exact error message per class of bad input. TAP output.
 *
 *   test_ocispec                  run the tests
 *   test_ocispec --bench [N [F]]  time N parses (default 100000) of fixture F
 *                                 (default runc-spec.json) */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "oci_internal.h"

#ifndef OCI_FIXTURES
#define OCI_FIXTURES "tests/unit/fixtures"
#endif

static int n_tests, n_failed;

static bool __attribute__ ((format (printf, 2, 3)))
ok (bool cond, const char *fmt, ...)
{
  va_list ap;

  n_tests++;
  if (!cond)
    n_failed++;
  printf ("%sok %d - ", cond ? "" : "not ", n_tests);
  va_start (ap, fmt);
  vprintf (fmt, ap);
  va_end (ap);
  putchar ('\n');
  fflush (stdout);
  return cond;
}

static char *
fixture_path (const char *name)
{
  const char *dir = getenv ("OCI_FIXTURES");
  char *p;

  if (dir == NULL)
    dir = OCI_FIXTURES;
  if (asprintf (&p, "%s/%s", dir, name) < 0)
    abort ();
  return p;
}

static void *
parse_fixture (const oci_type *t, const char *name)
{
  char *path = fixture_path (name);
  oci_error err = { 0 };
  void *obj = oci_parse_file (t, path, &err);

  if (obj == NULL)
    printf ("# %s: %s\n", path, err.msg ? err.msg : "(no message)");
  free (err.msg);
  free (path);
  return obj;
}

/* Parse json as "config.json" and expect exactly the message want. */
static void
expect_error_t (const oci_type *t, const char *json, size_t len, const char *want)
{
  oci_error err = { 0 };
  void *obj = oci_parse_data (t, json, len, "config.json", &err);
  const char *got = err.msg ? err.msg : "(no message)";

  if (!ok (obj == NULL && err.msg != NULL && strcmp (got, want) == 0, "error: %s", want))
    printf ("#   got: %s\n", obj ? "(parsed fine)" : got);
  oci_free (t, obj);
  free (err.msg);
}

static void
expect_error (const char *json, const char *want)
{
  expect_error_t (&oci_config_type, json, strlen (json), want);
}

static void *
parse_str (const oci_type *t, const char *json)
{
  oci_error err = { 0 };
  void *obj = oci_parse_data (t, json, strlen (json), "test.json", &err);
  if (obj == NULL)
    printf ("# unexpected error: %s\n", err.msg);
  free (err.msg);
  return obj;
}

/* ---- coverage: every field of every struct is present somewhere ---- */

static bool covered[128][64];

static size_t
type_index (const oci_type *t)
{
  for (size_t i = 0; i < oci_all_types_len; i++)
    if (oci_all_types[i] == t)
      return i;
  abort ();
}

static void
mark (const oci_type *t, const void *obj)
{
  const oci_field *fields = t->fields ();
  size_t ti = type_index (t);

  for (unsigned i = 0; i < t->nfields; i++)
    {
      const oci_field *f = &fields[i];
      if (!oci_field_present (f, obj))
        continue;
      covered[ti][i] = true;
      if (f->kind == OCI_K_OBJ)
        mark (f->sub, *(void *const *) oci_at (obj, f->off));
      else if (f->kind == OCI_K_ARR || f->kind == OCI_K_OBJMAP)
        for (size_t j = 0; j < *(const size_t *) oci_at (obj, f->aux); j++)
          mark (f->sub, *(char *const *) oci_at (obj, f->off) + j * f->sub->size);
    }
}

static void
test_coverage (void)
{
  size_t missing = 0, total = 0;

  for (size_t i = 0; i < oci_all_types_len; i++)
    {
      const oci_type *t = oci_all_types[i];
      const oci_field *fields = t->fields ();
      for (unsigned j = 0; j < t->nfields; j++)
        {
          total++;
          if (!covered[i][j])
            {
              missing++;
              printf ("# not exercised by any fixture: %s.%s\n", t->name, fields[j].json);
            }
        }
    }
  ok (missing == 0 && total > 0, "fixtures exercise every field of oci_spec.def (%zu fields, %zu types)",
      total, oci_all_types_len);
}

/* ---- round trips ---- */

static void
test_round_trip (const oci_type *t, const void *obj, const char *what)
{
  for (int pretty = 0; pretty <= 1; pretty++)
    {
      size_t len = 0, len2 = 0;
      char *json = oci_generate (t, obj, pretty, &len);
      oci_error err = { 0 };
      void *again = json ? oci_parse_data (t, json, len, "generated", &err) : NULL;
      char *json2 = again ? oci_generate (t, again, pretty, &len2) : NULL;

      if (!ok (json && again && oci_equal (t, obj, again), "%s: parse, generate%s, parse gives equal values",
               what, pretty ? " (pretty)" : ""))
        printf ("# %s\n", err.msg ? err.msg : json ? "values differ" : strerror (errno));
      ok (json2 && len == len2 && strlen (json) == len && memcmp (json, json2, len) == 0,
          "%s: generating the re-parsed document gives the same bytes%s", what, pretty ? " (pretty)" : "");
      free (json);
      free (json2);
      free (err.msg);
      oci_free (t, again);
    }
  void *copy = oci_copy (t, obj);
  ok (copy && copy != obj && oci_equal (t, obj, copy), "%s: oci_copy gives an equal, separate object",
      what);
  oci_free (t, copy);
}

/* ---- spot checks on the full fixture ---- */

static void
test_values (const oci_config *c)
{
  const oci_process *p = c->process;
  const oci_linux *l = c->linux;

  ok (strcmp (c->oci_version, "1.3.0") == 0 && strcmp (c->hostname, "brig-test") == 0, "strings");
  ok (p->rlimits_len == 2 && p->rlimits[0].hard == UINT64_MAX && p->rlimits[0].has_hard
      && p->rlimits[0].soft == 1024 && p->rlimits[1].has_soft && p->rlimits[1].soft == 0,
      "uint64 max and zero keep their values and presence");
  ok (l->time_offsets_len == 2 && strcmp (l->time_offsets_keys[1], "monotonic") == 0
      && l->time_offsets[1].secs == INT64_MIN && l->time_offsets[0].secs == INT64_MAX
      && l->time_offsets[0].nanosecs == 999999999,
      "int64 min and max, maps of objects in document order");
  ok (l->resources->memory->has_limit && l->resources->memory->limit == -1
      && l->resources->memory->has_reservation && l->resources->memory->reservation == 0
      && l->resources->memory->kernel == INT64_MIN && l->resources->memory->swappiness == UINT64_MAX,
      "memory limit -1, reservation 0 present, int64 min");
  ok (p->user->gid == UINT32_MAX && p->user->has_gid && p->user->additional_gids_len == 4
      && p->user->additional_gids[3] == UINT32_MAX && p->user->additional_gids[2] == 0,
      "uint32 max, uint32 vectors");
  ok (p->scheduler->priority == INT32_MIN && p->scheduler->nice == -20 && p->oom_score_adj == -1000
      && p->has_oom_score_adj, "int32 min and negatives");
  ok (p->has_terminal && p->terminal && p->has_no_new_privileges && !p->no_new_privileges,
      "booleans: true, and false but present");
  ok (p->env != NULL && p->env_len == 0 && p->env[0] == NULL, "an empty array is present: non-NULL, len 0");
  ok (c->mounts[0].options == NULL && c->mounts[0].options_len == 0 && c->mounts[1].options != NULL
      && c->mounts[1].options_len == 0, "absent array is NULL; empty array is not");
  ok (p->args_len == 3 && p->args[3] == NULL && strcmp (p->args[2], "echo \"hello\" && exit 0") == 0,
      "string vectors are NULL-terminated, escapes decoded");
  ok (c->annotations->len == 3 && strcmp (c->annotations->keys[1], "org.example/quote\"slash\\") == 0
      && strcmp (c->annotations->values[1], "h\xc3\xa9llo \xe2\x9c\x93 tab\there\nnewline \x01 ctl") == 0,
      "map keys in document order, unicode and control escapes");
  ok (oci_map_get (l->sysctl, "kernel.msgmax") && strcmp (oci_map_get (l->sysctl, "kernel.msgmax"), "8192") == 0
      && oci_map_get (l->sysctl, "nope") == NULL && oci_map_get (NULL, "x") == NULL, "oci_map_get");
  ok (l->net_devices_len == 2 && strcmp (l->net_devices_keys[1], "dummy0") == 0
      && l->net_devices[1].name == NULL && strcmp (l->net_devices[0].name, "ctr1") == 0,
      "netDevices: an empty object is a present element");
  ok (l->seccomp->syscalls[1].args[0].value == UINT64_MAX && l->seccomp->syscalls[1].args[0].has_value_two
      && !l->seccomp->syscalls[1].args[1].has_value_two && l->seccomp->syscalls[0].args == NULL,
      "seccomp args: uint64 max, absent valueTwo");
  ok (l->devices[1].major == -1 && !l->devices[1].has_file_mode && l->devices[0].file_mode == 438,
      "devices: negative major, absent fileMode");

  size_t len;
  char *json = oci_generate (&oci_config_type, c, false, &len);
  ok (json && strstr (json, "x-unknown") == NULL && strstr (json, "\"hard\":18446744073709551615")
      && strstr (json, "\"secs\":-9223372036854775808") && strstr (json, "\"limit\":-1,")
      && strstr (json, "\"env\":[]"),
      "generated JSON: unknown properties dropped, full-range integers, empty array kept");
  free (json);
}

/* ---- documents built in C ---- */

static void
test_generate_built (void)
{
  oci_config *c = calloc (1, sizeof *c);
  c->oci_version = strdup ("1.3.0");
  c->process = calloc (1, sizeof *c->process);
  c->process->cwd = strdup ("/");
  c->process->args = calloc (2, sizeof (char *));
  c->process->args[0] = strdup ("a");
  c->process->args_len = 1;
  c->process->rlimits = calloc (1, sizeof (oci_rlimit));
  c->process->rlimits_len = 1;
  c->process->rlimits[0].type = strdup ("RLIMIT_NOFILE");
  c->process->rlimits[0].has_soft = true;
  c->process->rlimits[0].hard = UINT64_MAX;
  c->process->rlimits[0].has_hard = true;
  c->process->oom_score_adj = 5; /* has_ not set: omitted */

  char *json = oci_generate (&oci_config_type, c, false, NULL);
  const char *want = "{\"ociVersion\":\"1.3.0\",\"process\":{\"args\":[\"a\"],\"cwd\":\"/\",\"rlimits\":"
                     "[{\"type\":\"RLIMIT_NOFILE\",\"soft\":0,\"hard\":18446744073709551615}]}}";
  if (!ok (json && strcmp (json, want) == 0, "generate: field order, absent fields omitted, uint64 max"))
    printf ("#   got: %s\n", json);
  free (json);

  oci_free (&oci_process_type, c->process);
  c->process = NULL;
  json = oci_generate (&oci_config_type, c, true, NULL);
  ok (json && strcmp (json, "{\n  \"ociVersion\": \"1.3.0\"\n}\n") == 0, "generate: pretty output");
  free (json);

  free (c->oci_version);
  c->oci_version = strdup ("bad \xff utf-8");
  errno = 0;
  json = oci_generate (&oci_config_type, c, false, NULL);
  ok (json == NULL && errno == EILSEQ, "generate: invalid UTF-8 fails with EILSEQ");
  free (json);
  oci_config_free (c);

  oci_map *m = NULL;
  ok (oci_map_set (&m, "a", "1") == 0 && oci_map_set (&m, "b", "2") == 0 && oci_map_set (&m, "a", "3") == 0
      && m->len == 2 && strcmp (m->keys[0], "a") == 0 && strcmp (oci_map_get (m, "a"), "3") == 0
      && strcmp (oci_map_get (m, "b"), "2") == 0,
      "oci_map_set: appends, replaces in place");
  oci_map_free (m);
  oci_free (&oci_config_type, NULL);
}

/* ---- parsing rules ---- */

static void
test_rules (void)
{
  oci_config *c;

  c = parse_str (&oci_config_type, "{\"ociVersion\":\"1\",\"hostname\":\"a\",\"hostname\":\"b\","
                                   "\"process\":{\"cwd\":\"/x\",\"args\":[\"1\"]},\"process\":{\"cwd\":\"/y\"},"
                                   "\"root\":{\"path\":\"r\",\"readonly\":true},\"root\":{\"path\":\"s\"}}");
  ok (c && strcmp (c->hostname, "b") == 0 && strcmp (c->process->cwd, "/y") == 0 && c->process->args == NULL
      && !c->root->has_readonly, "duplicate keys: the last value wins");
  oci_config_free (c);

  c = parse_str (&oci_config_type, "{\"ociVersion\":\"1\",\"annotations\":{\"a\":\"1\",\"b\":\"2\",\"a\":\"3\","
                                   "\"c\":null},\"linux\":{\"timeOffsets\":{\"boottime\":{\"secs\":1},"
                                   "\"monotonic\":null,\"boottime\":{\"secs\":2}}}}");
  ok (c && c->annotations->len == 2 && strcmp (c->annotations->keys[0], "a") == 0
      && strcmp (c->annotations->values[0], "3") == 0 && c->linux->time_offsets_len == 1
      && c->linux->time_offsets[0].secs == 2,
      "duplicate map keys: last value wins in the first place; null entries dropped");
  oci_config_free (c);

  /* Large maps take the sorting path. */
  char *big = malloc (100000), *p = big;
  p += sprintf (p, "{\"ociVersion\":\"1\",\"annotations\":{");
  for (int i = 0; i < 200; i++)
    p += sprintf (p, "%s\"k%d\":\"v%d\"", i ? "," : "", i % 150, i);
  sprintf (p, "}}");
  c = parse_str (&oci_config_type, big);
  ok (c && c->annotations->len == 150 && strcmp (c->annotations->keys[3], "k3") == 0
      && strcmp (c->annotations->values[3], "v153") == 0 && strcmp (c->annotations->values[100], "v100") == 0,
      "duplicate keys in a large map: last value wins in the first place");
  oci_config_free (c);
  free (big);

  c = parse_str (&oci_config_type, "{\"ociVersion\":\"1\",\"hostname\":null,\"root\":null,\"mounts\":null,"
                                   "\"process\":{\"cwd\":\"/\",\"terminal\":null,\"user\":{\"uid\":null}},"
                                   "\"Hostname\":\"x\",\"unknown\":{\"a\":[1,{\"b\":null}]}}");
  ok (c && c->hostname == NULL && c->root == NULL && c->mounts == NULL && !c->process->has_terminal
      && !c->process->user->has_uid, "null counts as absent; unknown and differently-cased keys ignored");
  oci_config_free (c);

  c = parse_str (&oci_config_type, "{\"ociVersion\":\"1\",\"process\":{\"cwd\":\"/\",\"oomScoreAdj\":-0,"
                                   "\"user\":{\"uid\":-0}}}");
  ok (c && c->process->has_oom_score_adj && c->process->oom_score_adj == 0 && c->process->user->uid == 0,
      "-0 is zero");
  oci_config_free (c);

  oci_error err = { 0 };
  c = oci_parse_data (&oci_config_type, "{}", 2, NULL, &err);
  ok (c == NULL && errno == EINVAL && err.msg && strcmp (err.msg, "ociVersion: missing required property") == 0,
      "no name: no prefix; errno EINVAL");
  free (err.msg);
  ok (oci_parse_data (&oci_config_type, "[]", 2, "x", NULL) == NULL, "a NULL oci_error is allowed");

  oci_mount *m = parse_str (&oci_mount_type, "{\"destination\":\"/sys\",\"type\":\"none\",\"options\":[\"rbind\"]}");
  ok (m && strcmp (m->destination, "/sys") == 0 && m->options_len == 1, "any struct type can be a document");
  oci_free (&oci_mount_type, m);
}

/* ---- errors ---- */

static void
test_errors (void)
{
  /* Wrong type, one per kind, and per element kind. */
  expect_error ("{\"ociVersion\":1}", "config.json: ociVersion: expected string, got integer");
  expect_error ("{\"ociVersion\":\"1\",\"root\":{\"path\":\"r\",\"readonly\":\"yes\"}}",
                "config.json: root.readonly: expected boolean, got string");
  expect_error ("{\"ociVersion\":\"1\",\"process\":{\"cwd\":\"/\",\"oomScoreAdj\":\"1\"}}",
                "config.json: process.oomScoreAdj: expected integer, got string");
  expect_error ("{\"ociVersion\":\"1\",\"process\":{\"cwd\":\"/\",\"user\":{\"uid\":true}}}",
                "config.json: process.user.uid: expected integer, got boolean");
  expect_error ("{\"ociVersion\":\"1\",\"linux\":{\"resources\":{\"memory\":{\"limit\":\"1\"}}}}",
                "config.json: linux.resources.memory.limit: expected integer, got string");
  expect_error ("{\"ociVersion\":\"1\",\"process\":{\"cwd\":\"/\",\"rlimits\":[{\"type\":\"a\",\"soft\":1.5}]}}",
                "config.json: process.rlimits[0].soft: expected integer, got number");
  expect_error ("{\"ociVersion\":\"1\",\"process\":{\"cwd\":\"/\",\"args\":\"sh\"}}",
                "config.json: process.args: expected array, got string");
  expect_error ("{\"ociVersion\":\"1\",\"process\":{\"cwd\":\"/\",\"args\":[\"sh\",1]}}",
                "config.json: process.args[1]: expected string, got integer");
  expect_error ("{\"ociVersion\":\"1\",\"process\":{\"cwd\":\"/\",\"args\":[null]}}",
                "config.json: process.args[0]: expected string, got null");
  expect_error ("{\"ociVersion\":\"1\",\"annotations\":[]}", "config.json: annotations: expected object, got array");
  expect_error ("{\"ociVersion\":\"1\",\"annotations\":{\"a\":{}}}",
                "config.json: annotations.a: expected string, got object");
  expect_error ("{\"ociVersion\":\"1\",\"process\":{\"cwd\":\"/\",\"user\":{\"additionalGids\":{}}}}",
                "config.json: process.user.additionalGids: expected array, got object");
  expect_error ("{\"ociVersion\":\"1\",\"process\":{\"cwd\":\"/\",\"user\":{\"additionalGids\":[1,\"2\"]}}}",
                "config.json: process.user.additionalGids[1]: expected integer, got string");
  expect_error ("{\"ociVersion\":\"1\",\"process\":\"x\"}", "config.json: process: expected object, got string");
  expect_error ("{\"ociVersion\":\"1\",\"mounts\":{}}", "config.json: mounts: expected array, got object");
  expect_error ("{\"ociVersion\":\"1\",\"mounts\":[{\"destination\":\"/a\"},[]]}",
                "config.json: mounts[1]: expected object, got array");
  expect_error ("{\"ociVersion\":\"1\",\"linux\":{\"timeOffsets\":[]}}",
                "config.json: linux.timeOffsets: expected object, got array");
  expect_error ("{\"ociVersion\":\"1\",\"linux\":{\"timeOffsets\":{\"boottime\":1}}}",
                "config.json: linux.timeOffsets.boottime: expected object, got integer");
  expect_error ("{\"ociVersion\":\"1\",\"linux\":{\"resources\":{\"rdma\":{\"mlx\":{\"hcaHandles\":false}}}}}",
                "config.json: linux.resources.rdma.mlx.hcaHandles: expected integer, got boolean");
  expect_error ("{\"ociVersion\":\"1\",\"hostname\":[\"a\"]}", "config.json: hostname: expected string, got array");
  expect_error ("{\"ociVersion\":\"1\",\"root\":{\"path\":\"r\",\"readonly\":null},\"hostname\":{}}",
                "config.json: hostname: expected string, got object");

  /* Out of range. */
  expect_error ("{\"ociVersion\":\"1\",\"process\":{\"cwd\":\"/\",\"user\":{\"uid\":-1}}}",
                "config.json: process.user.uid: expected integer in range 0..4294967295, got -1");
  expect_error ("{\"ociVersion\":\"1\",\"process\":{\"cwd\":\"/\",\"user\":{\"gid\":4294967296}}}",
                "config.json: process.user.gid: expected integer in range 0..4294967295, got 4294967296");
  expect_error ("{\"ociVersion\":\"1\",\"process\":{\"cwd\":\"/\",\"oomScoreAdj\":2147483648}}",
                "config.json: process.oomScoreAdj: expected integer in range -2147483648..2147483647, got 2147483648");
  expect_error ("{\"ociVersion\":\"1\",\"process\":{\"cwd\":\"/\",\"oomScoreAdj\":-2147483649}}",
                "config.json: process.oomScoreAdj: expected integer in range -2147483648..2147483647, got -2147483649");
  expect_error ("{\"ociVersion\":\"1\",\"process\":{\"cwd\":\"/\",\"rlimits\":[{\"type\":\"a\",\"soft\":-1}]}}",
                "config.json: process.rlimits[0].soft: expected integer in range 0..18446744073709551615, got -1");
  expect_error ("{\"ociVersion\":\"1\",\"process\":{\"cwd\":\"/\",\"rlimits\":[{\"type\":\"a\",\"hard\":18446744073709551616}]}}",
                "config.json: process.rlimits[0].hard: expected integer in range 0..18446744073709551615, got 18446744073709551616");
  expect_error ("{\"ociVersion\":\"1\",\"linux\":{\"resources\":{\"memory\":{\"limit\":9223372036854775808}}}}",
                "config.json: linux.resources.memory.limit: expected integer in range "
                "-9223372036854775808..9223372036854775807, got 9223372036854775808");
  expect_error ("{\"ociVersion\":\"1\",\"linux\":{\"timeOffsets\":{\"boottime\":{\"secs\":-9223372036854775809}}}}",
                "config.json: linux.timeOffsets.boottime.secs: expected integer in range "
                "-9223372036854775808..9223372036854775807, got -9223372036854775809");
  expect_error ("{\"ociVersion\":\"1\",\"linux\":{\"resources\":{\"pids\":{\"limit\":"
                "123456789012345678901234567890123456789012345678901234567890}}}}",
                "config.json: linux.resources.pids.limit: expected integer in range "
                "-9223372036854775808..9223372036854775807, got 1234567890123456789012345678901234567890...");

  /* Missing required, at several depths; null counts as missing. */
  expect_error ("{}", "config.json: ociVersion: missing required property");
  expect_error ("{\"ociVersion\":null}", "config.json: ociVersion: missing required property");
  expect_error ("{\"ociVersion\":\"1\",\"root\":{}}", "config.json: root.path: missing required property");
  expect_error ("{\"ociVersion\":\"1\",\"process\":{\"args\":[\"sh\"]}}",
                "config.json: process.cwd: missing required property");
  expect_error ("{\"ociVersion\":\"1\",\"mounts\":[{\"destination\":\"/a\"},{\"destination\":\"/b\"},{\"type\":\"x\"}]}",
                "config.json: mounts[2].destination: missing required property");
  expect_error ("{\"ociVersion\":\"1\",\"hooks\":{\"poststop\":[{\"path\":\"/a\"},{\"args\":[]}]}}",
                "config.json: hooks.poststop[1].path: missing required property");
  expect_error ("{\"ociVersion\":\"1\",\"linux\":{\"seccomp\":{\"defaultAction\":\"a\",\"syscalls\":[{\"names\":[],"
                "\"action\":\"b\",\"args\":[{\"index\":0,\"value\":1,\"op\":\"c\"},{\"index\":1,\"value\":2}]}]}}}",
                "config.json: linux.seccomp.syscalls[0].args[1].op: missing required property");
  expect_error ("{\"ociVersion\":\"1\",\"linux\":{\"resources\":{\"hugepageLimits\":[{\"pageSize\":\"2MB\",\"limit\":null}]}}}",
                "config.json: linux.resources.hugepageLimits[0].limit: missing required property");
  expect_error_t (&oci_features_type, "{\"ociVersionMax\":\"1.3.0\"}", 25,
                  "config.json: ociVersionMin: missing required property");
  expect_error_t (&oci_state_type, "{\"ociVersion\":\"1\",\"id\":\"a\",\"status\":\"created\"}", 46,
                  "config.json: bundle: missing required property");

  /* Malformed JSON, empty documents, wrong top level. */
  expect_error ("{\"ociVersion\": \"1.0\",}",
                "config.json: malformed JSON: invalid object key (must be a string) at line 1, column 22");
  expect_error ("{\n  \"ociVersion\": \"1.0\"\n  \"hostname\": \"x\"\n}",
                "config.json: malformed JSON: after key and value, inside map, I expect ',' or '}' at line 3, column 4");
  expect_error ("{\"ociVersion\": \"1", "config.json: malformed JSON: premature EOF at line 1, column 18");
  expect_error ("{\"ociVersion\":\"1\"} {}", "config.json: malformed JSON: trailing garbage at line 1, column 20");
  expect_error ("{\"ociVersion\":\"\xff\"}",
                "config.json: malformed JSON: invalid bytes in UTF8 string at line 1, column 16");
  expect_error ("{\"ociVersion\":\"a\\u0000b\"}", "config.json: ociVersion: string contains a NUL character");
  expect_error ("{\"ociVersion\":\"1\",\"annotations\":{\"a\":\"1\",\"b\\u0000\":\"2\"}}",
                "config.json: annotations: key contains a NUL character");
  expect_error ("", "config.json: empty document");
  expect_error (" \n\t\r\n", "config.json: empty document");
  expect_error ("[]", "config.json: expected object, got array");
  expect_error ("\"config\"", "config.json: expected object, got string");
  expect_error ("null", "config.json: expected object, got null");
  expect_error ("3", "config.json: expected object, got integer");

  /* Deep nesting fails cleanly, wherever it is. */
  size_t n = 100000;
  char *deep = malloc (2 * n + 64), *p;
  p = deep;
  memset (p, '[', n);
  memset (p + n, ']', n);
  expect_error_t (&oci_config_type, deep, 2 * n, "config.json: expected object, got array");
  p = deep + sprintf (deep, "{\"x\":");
  memset (p, '[', n);
  memset (p + n, ']', n);
  strcpy (p + 2 * n, "}");
  expect_error (deep, "config.json: JSON nested deeper than 1000 levels");
  p = deep + sprintf (deep, "{\"process\":");
  memset (p, '[', n);
  p[n] = '\0';
  expect_error (deep, "config.json: process: expected object, got array");
  p = deep + sprintf (deep, "{\"ociVersion\":\"1\",\"x\":");
  for (int i = 0; i < 990; i++)
    {
      if (i % 2)
        *p++ = '[';
      else
        p += sprintf (p, "{\"k\":");
    }
  for (int i = 989; i >= 0; i--)
    *p++ = i % 2 ? ']' : '}';
  strcpy (p, "}");
  oci_config *c = parse_str (&oci_config_type, deep);
  ok (c != NULL, "nesting of 990 levels in an ignored property is fine");
  oci_config_free (c);
  free (deep);
}

/* ---- files ---- */

static void
test_files (void)
{
  char dir[] = "/tmp/test_ocispec.XXXXXX", path[64];
  oci_error err = { 0 };
  void *obj;
  int fd;

  if (mkdtemp (dir) == NULL)
    abort ();
  snprintf (path, sizeof path, "%s/config.json", dir);

  obj = oci_config_parse_file ("/nonexistent-brig-dir/config.json", &err);
  ok (obj == NULL && errno == ENOENT && err.msg
      && strcmp (err.msg, "open /nonexistent-brig-dir/config.json: No such file or directory") == 0,
      "error: open /nonexistent-brig-dir/config.json: No such file or directory");
  free (err.msg);

  fd = open (path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  close (fd);
  obj = oci_config_parse_file (path, &err);
  ok (obj == NULL && err.msg && strcmp (err.msg, "config.json: empty document") == 0,
      "error: config.json: empty document (empty file)");
  free (err.msg);

  fd = open (path, O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (ftruncate (fd, (off_t) OCI_MAX_DOCUMENT + 1) < 0)
    abort ();
  close (fd);
  obj = oci_config_parse_file (path, &err);
  ok (obj == NULL && errno == EFBIG && err.msg
      && strcmp (err.msg, "config.json: file too large (67108865 bytes, limit 64 MiB)") == 0,
      "error: config.json: file too large (67108865 bytes, limit 64 MiB)");
  free (err.msg);

  char *huge = malloc (OCI_MAX_DOCUMENT + 1);
  obj = oci_parse_data (&oci_config_type, huge, OCI_MAX_DOCUMENT + 1, "config.json", &err);
  ok (obj == NULL && err.msg && strcmp (err.msg, "config.json: file too large (67108865 bytes, limit 64 MiB)") == 0,
      "error: file too large, from a buffer");
  free (err.msg);
  free (huge);

  fd = open (path, O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (write (fd, "{\"ociVersion\":\"1.3.0\",\"root\":{\"path\":\"rootfs\"}}\n", 47) != 47)
    abort ();
  close (fd);
  oci_config *c = oci_config_parse_file (path, &err);
  ok (c && strcmp (c->root->path, "rootfs") == 0, "parse a file");
  oci_config_free (c);

  obj = oci_config_parse_file (dir, &err);
  char want[128];
  snprintf (want, sizeof want, "read %s: Is a directory", dir);
  ok (obj == NULL && err.msg && strcmp (err.msg, want) == 0, "error: read DIR: Is a directory");
  free (err.msg);

  unlink (path);
  rmdir (dir);
}

static int
bench (int argc, char **argv)
{
  long n = argc > 2 ? atol (argv[2]) : 100000;
  char *path = argc > 3 ? strdup (argv[3]) : fixture_path ("runc-spec.json");
  struct stat st;
  int fd = open (path, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || fstat (fd, &st) < 0)
    {
      perror (path);
      return 1;
    }
  char *buf = malloc ((size_t) st.st_size);
  if (read (fd, buf, (size_t) st.st_size) != st.st_size)
    return 1;
  close (fd);

  struct timespec a, b;
  oci_error err = { 0 };
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &a);
  for (long i = 0; i < n; i++)
    {
      oci_config *c = oci_config_parse_data (buf, (size_t) st.st_size, "config.json", &err);
      if (c == NULL)
        {
          fprintf (stderr, "%s\n", err.msg);
          return 1;
        }
      oci_config_free (c);
    }
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &b);
  double us = ((double) (b.tv_sec - a.tv_sec) * 1e9 + (double) (b.tv_nsec - a.tv_nsec)) / 1e3 / (double) n;
  printf ("parse+free %s (%jd bytes): %.2f us CPU per parse over %ld runs\n", path, (intmax_t) st.st_size, us, n);

  oci_config *c = oci_config_parse_data (buf, (size_t) st.st_size, "config.json", &err);
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &a);
  for (long i = 0; i < n; i++)
    free (oci_generate (&oci_config_type, c, false, NULL));
  clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &b);
  us = ((double) (b.tv_sec - a.tv_sec) * 1e9 + (double) (b.tv_nsec - a.tv_nsec)) / 1e3 / (double) n;
  printf ("generate: %.2f us CPU per document\n", us);
  oci_config_free (c);
  free (buf);
  free (path);
  return 0;
}

int
main (int argc, char **argv)
{
  if (argc > 1 && strcmp (argv[1], "--bench") == 0)
    return bench (argc, argv);

  static const struct {
    const char *file;
    const oci_type *type;
  } fixtures[] = {
    { "config-full.json", &oci_config_type },   { "features-full.json", &oci_features_type },
    { "state.json", &oci_state_type },          { "brig-state.json", &oci_brig_state_type },
    { "process.json", &oci_process_type },      { "runc-spec.json", &oci_config_type },
  };
  void *docs[sizeof fixtures / sizeof fixtures[0]];

  for (size_t i = 0; i < sizeof fixtures / sizeof fixtures[0]; i++)
    {
      docs[i] = parse_fixture (fixtures[i].type, fixtures[i].file);
      ok (docs[i] != NULL, "parse fixture %s", fixtures[i].file);
      if (docs[i] != NULL)
        {
          mark (fixtures[i].type, docs[i]);
          test_round_trip (fixtures[i].type, docs[i], fixtures[i].file);
        }
    }
  test_coverage ();
  if (docs[0] != NULL)
    test_values (docs[0]);
  for (size_t i = 0; i < sizeof fixtures / sizeof fixtures[0]; i++)
    oci_free (fixtures[i].type, docs[i]);

  test_generate_built ();
  test_rules ();
  test_errors ();
  test_files ();

  printf ("1..%d\n", n_tests);
  return n_failed ? 1 : 0;
}
