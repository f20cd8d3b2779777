/*
 * snapflag - what warden-snapshot's commands say about a flag they refuse,
 * shared by every command (snapcli, snapcopy_cli, snapdel) so that none of
 * them depends on another for it.
 *
 * Thread safety: writes to stderr only.
 */
#ifndef CONTROLLER_SNAPSHOT_SNAPFLAG_H
#define CONTROLLER_SNAPSHOT_SNAPFLAG_H

/*
 * Say on stderr what is wrong with the flag getopt_long (opterr 0, optstring
 * starting with ':') just refused in command cmd: ret is what it returned
 * (':' a value missing, '?' otherwise), optidx its optind, opt its optopt.
 * argv BORROWED.
 */
void snapflag_error(const char *cmd, char **argv, int optidx, int ret, int opt);

/*
 * 0 when value (BORROWED, may be NULL: nothing to check) names a storage
 * provider warden-snapshot opens; else -1, having said on stderr what flag
 * of cmd is wrong and every value it takes.
 */
int snapflag_provider(const char *cmd, const char *flag, const char *value);

#endif
