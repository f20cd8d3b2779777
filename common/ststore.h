/*
 * ststore - the backup store an Etcd's members write, as its StatefulSet's pod template tells
 * their backup sidecar, and whether the members run that template.
 *
 * etcd-warden names an Etcd's store from spec.backup.store; the sidecars write where the pod
 * template says. etcd-druid builds the template's container "backup-restore" with the args
 * "--storage-provider=<kind>", "--store-prefix=<prefix>" and, when the Etcd has one,
 * "--store-endpoint-override=<url>", the env STORAGE_CONTAINER=<container>, and for a Local
 * store the volume "local-backup" on the hostPath "<hostPath>/<container>". It rewrites the
 * template only when it reconciles the Etcd, and pods follow the template only after a
 * rollout. So an edit of spec.backup.store is not a move until both happened.
 *
 * etcdbrctl takes the container from "--store-container=" before STORAGE_CONTAINER, and
 * writes a Local store at $HOME/<container>/<prefix>.
 *
 * A template is read, never guessed: no "backup-restore" container, an arg or env given twice,
 * a value that is not a string, an arg that is not a plain "--flag=value" (a "$(VAR)" the
 * kubelet expands, a bare flag pflag gives the next arg, "--"), a provider bstore does not
 * know, no container, no prefix, or a Local store without its volume (one whose path does not
 * end in "/<container>", not mounted once without subPath on etcd-druid's $HOME/<container>
 * with the user whose home that is (/home/nonroot: 65532 or no runAsUser; /root: 0),
 * a container of more than one path segment, a $HOME the template sets by env HOME or
 * envFrom) make the template "unknown" (KERR_INVAL with the reason): every caller then keeps
 * what it would delete (fail closed).
 *
 * Ownership: arguments BORROWED; struct ststore owns its strings (fixed buffers).
 * Thread safety: reentrant.
 */
#ifndef COMMON_STSTORE_H
#define COMMON_STSTORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

#include "common/blocal.h"
#include "common/bstore.h"
#include "common/kerr.h"

#define STSTORE_CONTAINER  "backup-restore"    /* the sidecar's container in the template */
#define STSTORE_ENV_BUCKET "STORAGE_CONTAINER" /* its env naming the store's container */
#define STSTORE_LOCAL_VOL  "local-backup"      /* a Local store's hostPath volume */
#define STSTORE_KIND_MAX   16
#define STSTORE_NAME_MAX   255
#define STSTORE_URL_MAX    2048
#define STSTORE_WHY_MAX    512

/* The store of a template's sidecar, as written there (strings NUL-terminated). */
struct ststore {
    char provider[STSTORE_KIND_MAX + 1];  /* as the arg gives it ("S3", "Local", ...) */
    char container[STSTORE_NAME_MAX + 1]; /* --store-container, else STORAGE_CONTAINER */
    char prefix[BSTORE_PREFIX_MAX + 1];   /* --store-prefix */
    char endpoint[STSTORE_URL_MAX + 1];   /* --store-endpoint-override, "" when absent */
    bool has_endpoint;
    char hostpath[BLOCAL_HOSTPATH_MAX + 1]; /* Local: the volume's path without
                                               "/<container>"; "" otherwise */
};

/*
 * The store sts's (a StatefulSet, hostile JSON allowed) pod template gives its backup sidecar
 * into *out: KERR_OK; KERR_NOTFOUND when the sidecar names no store at all (none of the store
 * args, no STORAGE_CONTAINER: etcd-druid's rendering of an Etcd without a backup store, whose
 * members write nothing; why says so); KERR_INVAL when the template cannot be read as the
 * header says (the reason in why, n bytes: the store is unknown).
 */
enum kerr ststore_read(const cJSON *sts, struct ststore *out, char *why, size_t n);

/*
 * ststore_read over a pod spec (spec: its "containers" and "volumes"; a pod's spec, or a
 * template's spec.template.spec): what a running pod's sidecar writes, whatever its
 * StatefulSet's template says now. Same results and reasons.
 */
enum kerr ststore_read_spec(const cJSON *spec, struct ststore *out, char *why, size_t n);

/*
 * Whether container c (of any pod spec) may be a backup sidecar whatever its name: it is named
 * "backup-restore", its image names etcdbrctl or etcd-backup-restore, a string of its command
 * or args contains one of etcdbrctl's store flags (--storage-provider, --store-prefix,
 * --store-container, --store-endpoint-override; inside another arg too, as in "sh -c") or the
 * value of one of its env variables (which the kubelet puts into its argv by "$(VAR)"), or it
 * has an env STORAGE_CONTAINER. What comes from envFrom (a ConfigMap's or Secret's keys) or a
 * file is not seen. What such a container writes is read by ststore_read_container.
 */
bool ststore_looks_like_sidecar(const cJSON *c);

/*
 * ststore_read_spec over one container c of pod spec (its volumes), whatever c's name: the
 * same rules, results and reasons (a store flag inside another arg is unknown, not "no
 * store").
 */
enum kerr ststore_read_container(const cJSON *spec, const cJSON *c, struct ststore *out, char *why,
                                 size_t n);

/*
 * True when sts's pods run its template: status.currentRevision equals status.updateRevision
 * (both present) and status.observedGeneration is metadata.generation, or when gen > 0 at
 * least gen (the generation whose template counts, when a later change is known to have left
 * the template as it was: a scale). Anything missing is false.
 */
bool ststore_rolled_out(const cJSON *sts, int64_t gen);

/*
 * The claim of s into *c (common/bstore; Local: the directory on the node, bstore's
 * bstore_local_claim_init). Errors as bstore_claim_init; on KERR_OK release c.
 */
enum kerr ststore_claim(const struct ststore *s, struct bstore_claim *c, struct kerr_info *err);

#endif
