/* The registered extension (container/extension.h): one table, set once by
 * runtime/brig.c before any command runs. */
#include <stddef.h>

#include "container/extension.h"

const struct brig_extension *brig_ext = NULL;

void
brig_extension_register (const struct brig_extension *ext)
{
  brig_ext = ext;
}
