/*
 * snapcli - the command line of warden-snapshot:
 *
 *   warden-snapshot extend-snapshot-immutability --storage-provider P
 *       --store-container C --store-prefix X --gc-from-timestamp T
 *       [--mode copy|extend-in-place|auto] [--retention-days N]
 *       [--copy-mode server|stream] [--skip-hash-check] [--dry-run] [-v]
 *   warden-snapshot list --storage-provider P --store-container C
 *       --store-prefix X [--verify-hash | --skip-hash-check] [-v]
 *   warden-snapshot delete-snapshots ... (snapdel.h), copy ... (snapcopy.h)
 *
 * extend-snapshot-immutability checks the SHA-256 of the snapshot it copies
 * or extends (snapverify.h) unless --skip-hash-check; --verify-hash is
 * accepted there and changes nothing. list reads every full snapshot to
 * check it only with --verify-hash, else marks the recorded digests
 * (snapext.h); --skip-hash-check leaves the marks out.
 *
 * Flags take "--flag=value" or "--flag value". --store-container falls back
 * to $STORAGE_CONTAINER (as etcd-backup-restore). --gc-from-timestamp is
 * Unix seconds or RFC 3339. Hidden options for tests and the benchmark:
 * --part-size=BYTES (streamed part size, default 8 MiB) and
 * --copy-part-threshold=BYTES (server copies above it go part by part,
 * default 5 GiB). $WARDEN_SNAPSHOT_NOW (Unix seconds) replaces the clock
 * as "now" (test-only: simulated days).
 *
 * Every command takes -h/--help (its usage on stdout, exit 0); so does
 * warden-snapshot itself. A usage error says what is wrong on stderr, then
 * the usage.
 *
 * Exit status: 0 success, 1 failure (one JSON error line saying why),
 * 2 usage error.
 */
#ifndef CONTROLLER_SNAPSHOT_SNAPCLI_H
#define CONTROLLER_SNAPSHOT_SNAPCLI_H

/* Run warden-snapshot with argv (BORROWED); returns the exit status. */
int snapcli_main(int argc, char **argv);

#endif
