/*
 * warden-controller - entry point and composition root: parse the flags
 * (and --config), build the controller core (controller/core/ctl.h) with the
 * capabilities below (controller/core/ctl_cap.h), run it until SIGTERM / SIGINT,
 * free it.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/jarena.h"
#include "common/log.h"
#include "common/proc.h"
#include "controller/backups/backups.h"
#include "controller/core/ctl.h"
#include "controller/core/ctl_config.h"
#include "controller/core/testclock.h"
#include "controller/entries/entries.h"
#include "controller/hibernation/hibernation.h"
#include "controller/immutability/immutability.h"
#include "controller/restore/restore.h"

/*
 * What warden-controller runs, in this order: the Etcd steps run as listed
 * (restore's status-backup and owner-references before hibernation).
 */
static const struct ctl_capability *const capabilities[] = {
    &restore_capability, &hibernation_capability, &immutability_capability,
    &entries_capability, &backups_capability,     NULL,
};

int main(int argc, char **argv)
{
    struct ctl_config cfg;
    struct ctl *c = NULL;
    struct ctl_opts opts = { 0 };
    struct kerr_info err;
    char *help = NULL;
    enum kerr rc = KERR_OK;
    int status = 0;

    kerr_clear(&err);
    /*
     * Two malloc arenas instead of one per thread (8 per core): the
     * informer threads' list pages would otherwise leave freed memory in
     * arenas of their own and RSS far above what the caches hold.
     */
    (void)mallopt(M_ARENA_MAX, 2);
    /*
     * Before any thread and any cJSON call: the caches' compact entries are parsed into
     * per-thread arenas (common/jarena) for their keys, index values and views, as the
     * webhook parses its reviews; without it each parse was a malloc per node, and an
     * initial sync of 14,000 objects spent most of its time in malloc and free.
     */
    if (jarena_install(&err)) {
        fprintf(stderr, "warden-controller: %s\n", err.msg);
        return 1;
    }
    if (ctl_config_load(&cfg, argc, argv, &err)) {
        fprintf(stderr, "warden-controller: %s\n", err.msg);
        ctl_config_release(&cfg);
        return 2;
    }
    if (cfg.help) {
        if (ctl_config_help(&help, &err) == KERR_OK)
            fputs(help, stdout);
        free(help);
        ctl_config_release(&cfg);
        return 0;
    }
    log_set_level(log_level_from_verbosity(cfg.verbosity));
    if (testclock_file()) { /* tests only: controller/core/testclock.h */
        opts.now_ms = testclock_now_ms;
        log_warn("TEST CLOCK: schedules go by the real clock plus an offset read from a file; "
                 "never set this in a cluster",
                 "env", TESTCLOCK_ENV, "file", testclock_file());
    }
    if (proc_signals_install(&err) || ctl_new(&cfg, capabilities, &opts, &c, &err) ||
        (rc = ctl_run(c, &err))) {
        log_error("warden-controller failed", "error", err.msg);
        fprintf(stderr, "warden-controller: %s\n", err.msg);
        status = 1;
    }
    if (rc == KERR_CANCELLED) {
        /*
         * The Lease is lost and another replica may lead: nothing of this
         * process writes any more (see ctl_run). Exit now, as
         * controller-runtime does, rather than after the watches' teardown.
         */
        fflush(stderr);
        _exit(status);
    }
    ctl_free(c);
    ctl_config_release(&cfg);
    return status;
}
