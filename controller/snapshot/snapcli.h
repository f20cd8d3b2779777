/*
 * snapcli - the command line of warden-snapshot:
 *
 *   warden-snapshot extend-snapshot-immutability --storage-provider P
 *       --store-container C --store-prefix X --gc-from-timestamp T
 *       [--copy-mode server|stream] [--dry-run] [-v]
 *   warden-snapshot list --storage-provider P --store-container C
 *       --store-prefix X [-v]
 *
 * Flags take "--flag=value" or "--flag value". --store-container falls back
 * to $STORAGE_CONTAINER (as etcd-backup-restore). --gc-from-timestamp is
 * Unix seconds or RFC 3339. Hidden options for tests and the benchmark:
 * --part-size=BYTES (streamed part size, default 8 MiB) and
 * --copy-part-threshold=BYTES (server copies above it go part by part,
 * default 5 GiB). $WARDEN_SNAPSHOT_NOW (Unix seconds) replaces the clock
 * as "now" (test-only: simulated days).
 *
 * Exit status: 0 success, 1 failure (one JSON error line saying why),
 * 2 usage error.
 */
#ifndef CONTROLLER_SNAPSHOT_SNAPCLI_H
#define CONTROLLER_SNAPSHOT_SNAPCLI_H

/* Run warden-snapshot with argv (BORROWED); returns the exit status. */
int snapcli_main(int argc, char **argv);

#endif
