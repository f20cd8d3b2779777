/*
 * kubectl-warden: the kubectl plugin of etcd-warden (`kubectl warden ...`). kubectl runs
 * it from PATH with every argument after "warden" and its own environment (KUBECONFIG).
 * Commands: kw_status.h (status), kw_act.h (hibernate, wake, backup, restore), kw_why.h
 * (why), kw_snap.h (verify, check-prefixes).
 * Flags follow kubectl's: --kubeconfig, --context, -n/--namespace, -o/--output json.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/proc.h"
#include "controller/kubectl-warden/kw.h"
#include "controller/kubectl-warden/kw_act.h"
#include "controller/kubectl-warden/kw_snap.h"
#include "controller/kubectl-warden/kw_status.h"
#include "controller/kubectl-warden/kw_why.h"

#define MAX_ARGS 256

static const char usage[] =
    "kubectl warden: etcd-warden's view of Etcds, and its actions.\n"
    "\n"
    "Commands:\n"
    "  status [ETCD]     protection, hibernation, last snapshots, immutability, BackupEntry,\n"
    "                    backups and restore of one Etcd; one line per Etcd without ETCD\n"
    "  hibernate ETCD    request hibernation (etcd-warden.io/hibernate=true)\n"
    "  wake ETCD         request the wake-up (the annotation removed)\n"
    "  backup ETCD       create an EtcdBackup now (--from-schedule NAME, or --provider,\n"
    "                    --container, --prefix [--secret] [--endpoint])\n"
    "  restore BACKUP    create an EtcdRestore of an EtcdBackup into a new Etcd (--to ETCD,\n"
    "                    --prefix P [--container C])\n"
    "  why ETCD          the refusals and failures etcd-warden recorded for the Etcd\n"
    "  verify ETCD       list the Etcd's snapshots and check every full snapshot's SHA-256\n"
    "                    (warden-snapshot list --verify-hash, with the store's Secret)\n"
    "  check-prefixes ETCD\n"
    "                    the prefixes of the Etcd's container that the sidecar mixes up\n"
    "                    (warden-snapshot check-prefixes, with the store's Secret)\n"
    "\n"
    "Examples:\n"
    "  kubectl warden status -n shoot etcd-main\n"
    "  kubectl warden hibernate -n shoot etcd-main --wait\n"
    "  kubectl warden backup -n shoot etcd-main --from-schedule etcd-main-offsite --wait\n"
    "\n"
    "Exit status: 0 done, 1 failed (API error, not found, --wait ended in failure or timed\n"
    "out), 2 usage error; verify and check-prefixes: warden-snapshot's.\n";

/* kubectl's short flags -n and -o (also -nX and -n=X) as the long ones proc parses. */
static int expand_short(int argc, char **argv, char **out, char *store, size_t cap)
{
    int i, n = 0;
    size_t used = 0;
    const char *lng;
    int w;

    for (i = 0; i < argc && n < MAX_ARGS - 1; i++) {
        lng = NULL;
        if (strncmp(argv[i], "-n", 2) == 0)
            lng = "--namespace";
        else if (strncmp(argv[i], "-o", 2) == 0)
            lng = "--output";
        if (i == 0 || !lng || argv[i][1] == '-') {
            out[n++] = argv[i];
            continue;
        }
        if (argv[i][2] == '\0') {
            out[n++] = (char *)lng;
            continue;
        }
        w = snprintf(store + used, cap - used, "%s=%s", lng, argv[i] + 2 + (argv[i][2] == '='));
        if (w < 0 || (size_t)w >= cap - used)
            return -1;
        out[n++] = store + used;
        used += (size_t)w + 1;
    }
    out[n] = NULL;
    return i < argc ? -1 : n;
}

int main(int argc, char **argv)
{
    struct kw_opts o = { 0 };
    struct kw_backup_opts b = { 0 };
    struct kw_restore_opts r = { 0 };
    const char *ns = NULL, *output = NULL, *snapshot_bin = NULL;
    long limit = 5;
    static const char *const cmds[] = { "status", "hibernate",      "wake",
                                        "backup", "restore",        "why",
                                        "verify", "check-prefixes", NULL };
    const struct proc_flag flags[] = {
        { "kubeconfig", PROC_FLAG_STRING, &o.kubeconfig, NULL,
          "path to the kubeconfig file (default: $KUBECONFIG, ~/.kube/config)" },
        { "context", PROC_FLAG_STRING, &o.context, NULL, "the kubeconfig context to use" },
        { "namespace", PROC_FLAG_STRING, &ns, NULL, "-n: the namespace (default: the context's)" },
        { "output", PROC_FLAG_STRING, &output, NULL, "-o: json, for status" },
        { "wait", PROC_FLAG_BOOL, &o.wait, "false",
          "hibernate, wake, backup: follow the object until it is done" },
        { "timeout", PROC_FLAG_DURATION, &o.timeout_ms, "5m", "how long --wait waits" },
        { "limit", PROC_FLAG_INT, &limit, "5", "why: the most events shown" },
        { "snapshot-binary", PROC_FLAG_STRING, &snapshot_bin, "warden-snapshot",
          "verify, check-prefixes: the warden-snapshot to run (a name on PATH or a path)" },
        { "name", PROC_FLAG_STRING, &b.name, NULL,
          "backup, restore: the new object's name (default <etcd>-<UTC time>, <to>-restore)" },
        { "to", PROC_FLAG_STRING, &r.to, NULL, "restore: the name of the new Etcd" },
        { "from-schedule", PROC_FLAG_STRING, &b.from_schedule, NULL,
          "backup: copy the destination of this EtcdBackupSchedule" },
        { "provider", PROC_FLAG_STRING, &b.provider, NULL, "backup: destination provider" },
        { "container", PROC_FLAG_STRING, &b.container, NULL,
          "backup: destination container; restore: the new Etcd's (default: the source's)" },
        { "prefix", PROC_FLAG_STRING, &b.prefix, NULL,
          "backup: destination prefix; restore: the new Etcd's" },
        { "secret", PROC_FLAG_STRING, &b.secret, NULL,
          "backup: the Secret with the destination's credentials" },
        { "endpoint", PROC_FLAG_STRING, &b.endpoint, NULL,
          "backup: the destination's endpointOverride" },
    };
    const size_t nflags = sizeof(flags) / sizeof(flags[0]);
    struct proc_args a = { 0 };
    struct kerr_info err = { 0 };
    struct kw k;
    char *av[MAX_ARGS], store[8192], *help = NULL;
    const char *cmd;
    int ac, code, i;

    ac = expand_short(argc, argv, av, store, sizeof(store));
    if (ac < 0) {
        fprintf(stderr, "error: too many arguments\n");
        return KW_EXIT_USAGE;
    }
    if (proc_flags_parse(flags, nflags, ac, av, &a, &err) != KERR_OK) {
        fprintf(stderr, "error: %s\nSee 'kubectl warden --help'.\n", err.msg);
        return KW_EXIT_USAGE;
    }
    if (a.help || a.npos == 0) {
        if (proc_flags_help("kubectl warden COMMAND", usage, flags, nflags, &help, &err) == KERR_OK)
            fputs(help, a.help ? stdout : stderr);
        free(help);
        code = a.help ? KW_EXIT_OK : KW_EXIT_USAGE;
        goto out;
    }
    cmd = a.pos[0];
    for (i = 0; cmds[i] && strcmp(cmds[i], cmd) != 0; i++)
        ;
    if (!cmds[i] || (output && *output && strcmp(output, "json") != 0) || limit < 1 ||
        o.timeout_ms <= 0) {
        if (!cmds[i])
            fprintf(stderr, "error: unknown command \"%s\" for \"kubectl warden\"\n", cmd);
        else
            fprintf(stderr, "error: %s\n",
                    limit < 1           ? "--limit must be at least 1"
                    : o.timeout_ms <= 0 ? "--timeout must be above 0"
                                        : "--output must be json (or unset)");
        fprintf(stderr, "See 'kubectl warden --help'.\n");
        code = KW_EXIT_USAGE;
        goto out;
    }
    r.name = b.name;
    r.container = b.container;
    r.prefix = b.prefix;
    o.ns = ns;
    o.output = output && *output ? output : NULL;
    if (kw_init(&k, &o, &err) != KERR_OK) {
        fprintf(stderr, "error: %s\n", err.msg);
        code = KW_EXIT_FAIL;
        goto out;
    }
    if (strcmp(cmd, "status") == 0)
        code = kw_status_main(&k, a.pos + 1, a.npos - 1);
    else if (strcmp(cmd, "hibernate") == 0 || strcmp(cmd, "wake") == 0)
        code = kw_act_hibernate(&k, cmd[0] == 'h', a.pos + 1, a.npos - 1);
    else if (strcmp(cmd, "backup") == 0)
        code = kw_act_backup(&k, &b, a.pos + 1, a.npos - 1);
    else if (strcmp(cmd, "restore") == 0)
        code = kw_act_restore(&k, &r, a.pos + 1, a.npos - 1);
    else if (strcmp(cmd, "verify") == 0 || strcmp(cmd, "check-prefixes") == 0)
        code = kw_snap_main(&k, cmd, snapshot_bin, a.pos + 1, a.npos - 1);
    else
        code = kw_why_main(&k, limit, a.pos + 1, a.npos - 1);
    kw_release(&k);
out:
    proc_args_release(&a);
    proc_flags_release(flags, nflags);
    return code;
}
