/* libFuzzer target for the config parser: whatever parses must generate,
 * parse again to equal values, and free cleanly (ASan/UBSan watch). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocispec.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static void
round_trip (const oci_type *t, const void *obj, bool pretty)
{
  size_t len;
  char *json = oci_generate (t, obj, pretty, &len);
  if (json == NULL)
    {
      /* Parsed strings are valid UTF-8, so generation cannot fail. */
      fprintf (stderr, "generate failed on a parsed document\n");
      abort ();
    }
  oci_error err = { 0 };
  void *again = oci_parse_data (t, json, len, "generated", &err);
  if (again == NULL || !oci_equal (t, obj, again))
    {
      fprintf (stderr, "round trip failed: %s\n%s\n", err.msg ? err.msg : "values differ", json);
      abort ();
    }
  oci_free (t, again);
  free (json);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static const oci_type *const types[] = { &oci_config_type, &oci_features_type, &oci_state_type };
  /* Mostly config.json; now and then the other documents. */
  const oci_type *t = types[size > 0 && data[size - 1] % 7 == 0 ? 1 + data[0] % 2 : 0];
  oci_error err = { 0 };
  void *obj = oci_parse_data (t, (const char *) data, size, "config.json", &err);

  if (obj == NULL)
    {
      if (err.msg == NULL || strncmp (err.msg, "config.json: ", 13) != 0)
        {
          fprintf (stderr, "error without a proper message: %s\n", err.msg ? err.msg : "(null)");
          abort ();
        }
      free (err.msg);
      return 0;
    }
  round_trip (t, obj, false);
  round_trip (t, obj, true);
  oci_free (t, obj);
  return 0;
}
