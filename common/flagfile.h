/*
 * flagfile - command-line flags (common/proc) plus the same settings in a
 * YAML file that one of the flags names (--config), as both daemons read
 * them.
 *
 * The file is one mapping whose keys are the flag names without the dashes;
 * a value is a scalar, or a list for the list flags (PROC_FLAG_LIST,
 * PROC_FLAG_STRINGS):
 *
 *   workers: 4
 *   reconciler-service-account:
 *     - system:serviceaccount:etcd-druid:etcd-druid
 *
 * Each value is checked alone as "--key=value" (an error names the file,
 * line and key), then the file's settings are parsed before the command
 * line, so a flag given on the command line wins over the file (the file's
 * value of such a key is not used at all, not even checked). Unknown keys,
 * the config key itself, a list for a single-valued flag, a value with a NUL
 * byte and positional arguments are refused. The file is read with a cap
 * (max_file bytes).
 *
 * Ownership: struct flagfile is embedded (zeroed by flagfile_parse,
 * released with flagfile_release); string flag values that came from the
 * file are BORROWED from its owned list and live until the release.
 * Thread safety: for main() before threads start.
 */
#ifndef COMMON_FLAGFILE_H
#define COMMON_FLAGFILE_H

#include <stddef.h>

#include "common/kerr.h"
#include "common/proc.h"

struct flagfile {
    int verbosity;          /* -v count, or --v=N */
    int help;               /* -h / --help was given: nothing else was parsed or read */
    struct proc_strv owned; /* OWNS: the "--key=value" strings made from the file */
};

/*
 * Parse argv[1..argc) with the table f (nf flags); when the flag named
 * config_flag (a PROC_FLAG_STRING of the table) is set and not empty, read
 * that file and apply its settings under the command line's. prog names the
 * program in the checks' messages. KERR_OK: every value is written through
 * the table. KERR_INVAL (a flag, key or value; the message names it),
 * KERR_PARSE (not YAML), KERR_IO / KERR_TOOBIG (the file), KERR_NOMEM.
 * Call flagfile_release in every case.
 */
enum kerr flagfile_parse(const struct proc_flag *f, size_t nf, const char *prog,
                         const char *config_flag, size_t max_file, int argc, char **argv,
                         struct flagfile *ff, struct kerr_info *err);

/* Free the strings made from the file. Safe to call twice. */
void flagfile_release(struct flagfile *ff);

#endif
