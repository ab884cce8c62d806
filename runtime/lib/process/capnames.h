/* Capability names and numbers without libcap (see capnames.c). */
#ifndef BRIG_CAPNAMES_H
#define BRIG_CAPNAMES_H

/* The number of "CAP_CHOWN" ... (canonical upper-case spelling only), or
 * -1 when brig knows no such name. Does not ask the kernel. */
int brig_cap_from_name (const char *name);

/* The name ("CAP_CHOWN") of capability number cap, or NULL when brig knows
 * none for it. A static string. */
const char *brig_cap_name (int cap);

#endif
