/* The features document (runtime-spec features.md, features-linux.md):
 * what this build of brig supports, filled from the libraries and kernel. */
#ifndef BRIG_FEATURES_H
#define BRIG_FEATURES_H

#include "error.h"
#include "ocispec.h"

/* Build the features document. */
int brig_features_build (oci_features **out, brig_error *err);

#endif
