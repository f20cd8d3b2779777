/*
 * kpath - Go's path.Clean for object-store prefixes (repeated '/' made one,
 * "." elements dropped, ".." elements resolved, a trailing '/' dropped; ""
 * becomes "."), as etcd-backup-restore cleans them. How two prefixes
 * overlap is common/bstore's.
 *
 * Pure functions. Ownership: arguments BORROWED; output into caller buffers.
 * Thread safety: reentrant.
 */
#ifndef COMMON_KPATH_H
#define COMMON_KPATH_H

#include <stddef.h>

#include "common/kerr.h"

/*
 * The cleaned form of p into out (n bytes, at most strlen(p) + 2 needed).
 * KERR_TOOBIG when it does not fit; NULL p is "".
 */
enum kerr kpath_clean(const char *p, char *out, size_t n);

#endif
