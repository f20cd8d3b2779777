/*
 * lowner - who owns a Local directory on the node, the rule both processes
 * apply before something of a namespace reads a Local store: warden-webhook
 * for an EtcdRestore's source at admission (webhook/bklocal), warden-controller
 * when it makes the Job that mounts the directory (a restore drill's,
 * controller/backups/erd_job.c). A Local store is the directory
 * path.Clean(hostPath + "/" + container + "/" + prefix) (common/blocal), its
 * hostPath in a Secret the namespace may edit, so whatever places it is read
 * fresh from the API server when the decision is made.
 *
 * A namespace owns a directory when a BackupBucket of provider Local holds it
 * (the bucket's directory, its Secret's hostPath + "/" + container, is the
 * directory or a parent of it; the bucket's Secret is the operator's) and the
 * bucket's spec.namespaceSelector selects the namespace (no selector: every
 * namespace, as for claims). A bucket whose Secret cannot be read or whose
 * hostPath is not understood grants nothing; a selector that cannot be read
 * selects nobody. The callers add the claims of the namespace they know, and
 * lowner_owned weighs them: what the namespace cannot place by itself (a
 * bucket, a copy's directory warden-controller recorded) grants the
 * directory; an Etcd of the namespace, whose directory comes from a Secret the
 * namespace edits, and a BackupEntry of the namespace made after the namespace
 * was created (common/pborn; lowner_entry), grant it only when no claim of
 * another namespace overlaps it (one that cannot be placed is in the way, an
 * EtcdRestore's target too, and so is a BackupEntry made before the namespace
 * was created again: an earlier owner's). An entry grants no more than the
 * Etcd it was made for: both processes weigh it so, so a restore admitted on
 * an entry is not refused at its Job, and an entry never hands a directory
 * another namespace writes to this one.
 *
 * A Local bucket with spec.prefixScope Namespace (or a prefixScope not understood: nobody's)
 * partitions its directory as an object-store bucket partitions its prefixes: the directory
 * dir is namespace ns's part only when it lies strictly below the bucket's and the path below
 * it (bucket "var/lib/lb/bkt", dir "var/lib/lb/bkt/shoot/etcd-a": "shoot/etcd-a") belongs to ns
 * by common/bstore's bstore_prefix_owner. A directory of such a bucket that is not ns's part
 * (another namespace's, nobody's, or one holding the bucket's whole directory) is never ns's:
 * no bucket grants it and no Etcd of ns claims it (lowner_found.forbidden), and ns may not claim
 * it (lowner_part: an Etcd, an EtcdBackup's or schedule's destination, a restore's target). A
 * partitioned bucket whose directory cannot be placed (its Secret unreadable, its hostPath not
 * understood) is in the way of every directory: its parts cannot be told.
 *
 * Ownership: arguments BORROWED; struct lowner OWNS the namespace's labels once read (release
 * with lowner_release). Thread safety: one struct lowner per thread; functions reentrant.
 */
#ifndef COMMON_LOWNER_H
#define COMMON_LOWNER_H

#include <stddef.h>

#include <cJSON.h>

#include "common/k8s.h"
#include "common/kerr.h"

/* What one search for an owner of a directory looks for. */
struct lowner {
    struct k8s_client *k; /* BORROWED */
    const char *ns;       /* the namespace that would read (BORROWED) */
    const char *dir;      /* the directory, canonical (common/blocal: no leading '/') */
    cJSON *labels;        /* OWNS: the namespace's labels, once read */
    int labels_read;
};

/* What a search for an owner of a directory found (each 1 when found). */
struct lowner_found {
    int granted;   /* a bucket, a recorded copy */
    int own_etcd;  /* an Etcd of the namespace whose directory (its Secret's) holds dir */
    int own_entry; /* a BackupEntry of the namespace as it is now whose directory holds dir */
    int others;    /* a claim of another namespace, or one not placed, overlaps dir */
    int forbidden; /* a partitioned bucket gives dir to another namespace or to none */
};

/* 1 when what f says makes the namespace the directory's owner (see above). */
int lowner_owned(const struct lowner_found *f);

/* o for namespace ns reading dir (both BORROWED, kept while o is used). */
void lowner_init(struct lowner *o, struct k8s_client *k, const char *ns, const char *dir);

/* Free what o read. */
void lowner_release(struct lowner *o);

/*
 * What the BackupEntry entry (its metadata.name) of Etcd entry_ns/etcd, made at created (its
 * metadata.creationTimestamp), says of o->ns owning o->dir, into f: nothing when it is another
 * namespace's (the caller weighs those as others) or its directory edir (canonical; NULL: it
 * cannot be placed) does not overlap o->dir; f->others when it was made before namespace
 * o->ns was created, or that cannot be told (common/pborn: an earlier owner's, anywhere when
 * not placed); else f->own_entry when edir holds o->dir. The namespace is read now through
 * o->k. KERR_NOMEM only.
 */
enum kerr lowner_entry(struct lowner *o, const char *entry_ns, const char *etcd, const char *entry,
                       const char *created, const char *edir, struct lowner_found *f);

/* 1 when directory dir is parent or inside it (both canonical, "" the root). */
int lowner_inside(const char *dir, const char *parent);

/*
 * The directory (a claim prefix, common/blocal) of the Local store at container and prefix
 * whose backup Secret is ns/secret (secret NULL or "": none, the default hostPath) into dir
 * (n bytes), the Secret read now through k. KERR_OK with why "" when known; why (wn bytes)
 * says what is not (a Secret that cannot be read, a hostPath not understood); KERR_NOMEM only.
 */
enum kerr lowner_dir(struct k8s_client *k, const char *ns, const char *secret,
                     const char *container, const char *prefix, char *dir, size_t n, char *why,
                     size_t wn);

/*
 * KERR_EXISTS when the BackupBucket b grants o->dir to o->ns (see above), KERR_FORBIDDEN when its
 * partition keeps o->dir from o->ns (err says why, naming no other namespace), KERR_OK when it
 * does neither; the namespace's labels are read once (a namespace not found has none). Another
 * code (err says why) when the namespace cannot be read: the caller refuses.
 */
enum kerr lowner_bucket(struct lowner *o, const cJSON *b, struct kerr_info *err);

/*
 * Why o->ns may not claim o->dir under the partition of BackupBucket b (see above), into why
 * (n bytes, "" when it may; naming b, o->ns and o->dir only). KERR_NOMEM only.
 */
enum kerr lowner_part(struct lowner *o, const cJSON *b, char *why, size_t n);

/*
 * lowner_part over buckets (BackupBuckets as listed: an array; NULL: none), the rule both
 * processes apply: why (n bytes) of the first whose partition keeps o->dir from o->ns, "" when
 * none does. warden-controller asks it of the directory a copy Job is to write, placed by the
 * Secret the Job is built from, read then. KERR_NOMEM only.
 */
enum kerr lowner_part_in(struct lowner *o, const cJSON *buckets, char *why, size_t n);

/*
 * Why namespace ns may not write the Local directory dir (canonical) that a Job of
 * warden-controller is to write (an EtcdBackup's copy, an EtcdRestore's target, an immutability
 * task's copies), into why (n bytes, "" when it may): lowner_part_in over the BackupBuckets
 * listed now through k, the rule warden-webhook admits the claim by. dir is placed by the
 * Secret the Job is built from, read in the same pass: the Secret may have been edited since
 * admission. writer ("a copy writes") ends the message. BackupBuckets not served (their CRD not
 * installed): none. Another API error is returned: the caller makes no Job.
 */
enum kerr lowner_part_now(struct k8s_client *k, const char *ns, const char *dir, const char *writer,
                          char *why, size_t n, struct kerr_info *err);

/*
 * Whether the claim at directory other (canonical) is, for o->ns claiming o->dir, one that a
 * partition says nobody may mount: BackupBucket b is of provider Local with spec.prefixScope
 * Namespace, its directory is placed (its Secret read now through o->k), o->dir is in o->ns's
 * part of it and other is the bucket's directory or a parent of it. No StatefulSet may mount
 * such a directory for an Etcd (webhook/stsvol), so at admission that claim is in nobody's way
 * in o->ns's part; destructive decisions never ask this. *yes 1 then, else 0. KERR_NOMEM only.
 */
enum kerr lowner_unmountable(struct lowner *o, const cJSON *b, const char *other, int *yes);

/* 1 when the path of dir below parent (both canonical) belongs to namespace ns under a
 * partitioned bucket: dir strictly below parent, bstore_prefix_owner of the rest is ns. Pure. */
int lowner_in_part(const char *dir, const char *parent, const char *ns);

#endif
