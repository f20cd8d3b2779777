/*
 * snapdb - an etcd database file read without etcd (snapbolt.h): the
 * revision etcd would serve on it and its live keys (snapkeys.h: every put
 * of `key` in revision order, each tombstone deleting its key). Used on
 * the full snapshot verify spools (snapchain.h) and on the database
 * `etcdbrctl restore` leaves (verify --restored-db: the restore drill's
 * Restore mode compares the two).
 *
 * Memory: snapbolt's bounded page runs and the key set (at most its max).
 *
 * Ownership: arguments BORROWED. Thread safety: reentrant.
 */
#ifndef CONTROLLER_SNAPSHOT_SNAPDB_H
#define CONTROLLER_SNAPSHOT_SNAPDB_H

#include <stddef.h>
#include <stdint.h>

#include "common/kerr.h"
#include "controller/snapshot/snapbolt.h"

struct snapkeys;

/*
 * Scan the database open at fd (read with pread, size bytes) into keys (BORROWED: its puts
 * added, tombstones deleted) and *info. KERR_PARSE naming the fault when it is not a valid
 * etcd database or holds more keys than the set's bound.
 */
enum kerr snapdb_scan_fd(int fd, int64_t size, struct snapkeys *keys, struct snapbolt_info *info,
                         struct kerr_info *err);

/* What a database file holds. */
struct snapdb_info {
    int64_t revision; /* what etcd serves on it (snapbolt_info.revision) */
    int64_t keys;     /* live keys */
};

/*
 * Read the database file at path (a bbolt file: etcd's member/snap/db) with at most
 * max_keys live keys (0: 1,000,000) into *out (zeroed first). KERR_IO when it cannot be
 * opened; KERR_PARSE as snapdb_scan_fd.
 */
enum kerr snapdb_inspect(const char *path, size_t max_keys, struct snapdb_info *out,
                         struct kerr_info *err);

#endif
