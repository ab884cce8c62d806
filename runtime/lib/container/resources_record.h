/* The resources in force, kept in the container's saved config.json. */
#ifndef BRIG_RESOURCES_RECORD_H
#define BRIG_RESOURCES_RECORD_H

#include "error.h"
#include "ocispec.h"
#include "container/state.h"

/* Merge res into cfg->linux->resources: every value res gives replaces the
 * config's, the rest stays (hugepage limits by page size, unified by key). */
int brig_resources_merge (oci_config *cfg, const oci_resources *res, brig_error *err);

/* Merge res into c's saved config.json and write it back atomically (call
 * with c locked exclusively, after the cgroup took the values). */
int brig_container_record_resources (brig_container *c, const oci_resources *res,
                                     brig_error *err);

#endif
