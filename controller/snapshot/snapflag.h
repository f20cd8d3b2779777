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

#endif
