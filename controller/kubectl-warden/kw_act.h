/*
 * kw_act - the commands of kubectl-warden that change something:
 *   hibernate ETCD   annotate etcd-warden.io/hibernate=true (docs/hibernation.md); --wait
 *                    follows the phase annotation to Hibernated (exit 0) or Failed (exit 1)
 *   wake ETCD        remove the annotation; --wait until the phase annotation is gone. An
 *                    Etcd hibernated through spec.replicas 0 (Gardener's path) is woken by
 *                    its spec, not here: refused with that message
 *   backup ETCD      create an EtcdBackup of ETCD now: its destination from --from-schedule
 *                    (an EtcdBackupSchedule's backupTemplate) or --provider, --container,
 *                    --prefix, --secret [--endpoint]; --name (default <etcd>-<UTC time>);
 *                    --wait prints every phase and ends at Completed (0) or Failed (1)
 *   restore BACKUP   create an EtcdRestore of the EtcdBackup BACKUP into a new Etcd --to, in
 *                    the prefix --prefix of --container (default: the container of the
 *                    backup's Etcd); --name (default <to>-restore); --wait prints every
 *                    phase and ends at Completed (0) or Failed (1, with status.error)
 * Every --wait reads the object, then watches it from that version (every change is
 * seen, however short), printing each new value; bounded by --timeout (exit 1).
 */
#ifndef KW_KW_ACT_H
#define KW_KW_ACT_H

#include <stddef.h>

#include "controller/kubectl-warden/kw.h"

/* The destination flags of `backup`. Strings BORROWED from argv. */
struct kw_backup_opts {
    const char *name;
    const char *from_schedule;
    const char *provider, *container, *prefix, *secret, *endpoint;
};

/* The flags of `restore`. Strings BORROWED from argv. */
struct kw_restore_opts {
    const char *name, *to, *container, *prefix;
};

/* hibernate (on = 1) or wake (on = 0) args[0]. Exit code. */
int kw_act_hibernate(struct kw *k, int on, const char *const *args, size_t nargs);

/* backup args[0]. Exit code. */
int kw_act_backup(struct kw *k, const struct kw_backup_opts *b, const char *const *args,
                  size_t nargs);

/* restore args[0] (an EtcdBackup). Exit code. */
int kw_act_restore(struct kw *k, const struct kw_restore_opts *r, const char *const *args,
                   size_t nargs);

#endif
