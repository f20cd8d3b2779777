/*
 * lfs - the Local provider of ostore: the container is a directory and an
 * object key is a path below it ("<dir>/<prefix>/v2/<name>").
 *
 * Uploads are written to "<dir>/.warden-snapshot-tmp/<random>" (outside any
 * store prefix), fsync'ed, then linked to their key with link(2), which
 * fails rather than replace an existing file; the temporary name is removed
 * whatever happens. A failed write (ENOSPC, EFBIG) therefore leaves nothing
 * under the prefix. head reports the content MD5, computed by reading the
 * file through a small buffer. There is no exclude tag (as in
 * etcd-backup-restore); a deletion refused with EPERM (an immutable file,
 * chattr +i) is KERR_FORBIDDEN; EACCES (no write permission on the
 * directory) is a plain error that fails the run. No server-side copy:
 * copies are streamed.
 *
 * A relative directory is resolved against $HOME, as etcd-backup-restore
 * (v0.26+) resolves path.Join($HOME, container, prefix); etcd-druid mounts
 * the Local store's hostPath at /home/nonroot/<container>. An absolute
 * directory is taken as it is.
 *
 * Thread safety: one store per thread.
 */
#ifndef CONTROLLER_SNAPSHOT_PROVIDERS_LFS_H
#define CONTROLLER_SNAPSHOT_PROVIDERS_LFS_H

#include "controller/snapshot/ostore.h"

/* Open the directory dir (BORROWED; must exist; relative: below $HOME). *out OWNS the store
 * (ostore_free). KERR_INVAL for a relative dir without $HOME. */
enum kerr lfs_open(const char *dir, struct ostore **out, struct kerr_info *err);

#endif
