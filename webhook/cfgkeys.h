/*
 * cfgkeys - the keys of etcd's configuration, other than its directories (cfgguard.h), that lose
 * or fork a live cluster's data at the members' next start. ConfigMap <etcd>-config's
 * etcd.conf.yaml is served to etcd as written by the backup sidecar, and etcd-druid
 * (internal/component/configmap/etcdconfig.go) writes every key below with a value it never
 * changes, whatever the Etcd says:
 *   force-new-cluster  (etcd-druid: never set) true restarts each member as a one-member cluster
 *                      on its own data: the members diverge, writes acknowledged by a quorum are
 *                      lost on the members that did not have them;
 *   unsafe-no-fsync    (never set) true acknowledges writes etcd has not written to disk: a crash
 *                      of a node loses them;
 *   name               ("etcd-config"; the sidecar names each member after its pod)
 *   initial-cluster-token ("etcd-cluster") and initial-cluster-state ("new"): the identity a
 *                      member bootstraps or is restored with from a snapshot (the sidecar restores
 *                      a member whose data is gone with them): another token restores a member
 *                      into another cluster, another state or name one that does not join.
 * etcd-druid also writes member-name-prefix (the Etcd's spec.memberNamePrefix, immutable, left
 * out when empty: internal/component/configmap/etcdconfig.go; etcd ignores the key, the backup
 * sidecar names the members with it): it must be the Etcd's (absent, null and "" alike), on a
 * CREATE as on an UPDATE, and an UPDATE over a configuration that parses keeps its value.
 * So (fail closed): force-new-cluster and unsafe-no-fsync must be absent, null or a plain false
 * (false, False, FALSE: what etcd-druid never writes need not take more spellings); each of the
 * identity keys must have etcd-druid's value or the value of the configuration an UPDATE replaces
 * (when that one parses). Values are compared as etcd reads them: absent or null is etcd's own
 * default ("default", "etcd-cluster", "new"), keys ignoring case as etcd reads them (it decodes
 * its YAML as JSON, and Go's encoding/json matches keys by Unicode simple folding: U+017F long s
 * is an s, U+212A Kelvin sign a k), a key set twice that way or a merge key "<<" is refused, and so
 * is a value that is not a string scalar. Other keys etcd-druid sets are changed by etcd-druid
 * itself and lose no data: initial-cluster (rewritten on a scale-up, a hibernation, peer TLS turned
 * on; etcd reads it only when a member has no data), the quota, snapshot-count, compaction, the
 * URLs, TLS files, metrics, the bbolt freelist type. The remaining keys of etcd 3.5/3.6
 * embed.Config either tune without losing acknowledged data or, as discovery, are read only when a
 * member has no data.
 *
 * Thread safety: pure, reentrant.
 */
#ifndef WEBHOOK_CFGKEYS_H
#define WEBHOOK_CFGKEYS_H

#include <stddef.h>

#include "common/kerr.h"

#define CFGKEYS_FILE        "etcd.conf.yaml" /* the ConfigMap key, named in messages */
#define CFGKEYS_VAL_MAX     512              /* a name, token or state, with its NUL */
#define CFGKEYS_DRUID_NAME  "etcd-config"
#define CFGKEYS_DRUID_TOKEN "etcd-cluster"
#define CFGKEYS_DRUID_STATE "new"

/* The keys above as etcd reads them from one etcd.conf.yaml. */
struct cfgkeys {
    char name[CFGKEYS_VAL_MAX];   /* absent or null: etcd's "default" */
    char token[CFGKEYS_VAL_MAX];  /* initial-cluster-token; absent: "etcd-cluster" */
    char state[CFGKEYS_VAL_MAX];  /* initial-cluster-state; absent: "new" */
    char prefix[CFGKEYS_VAL_MAX]; /* member-name-prefix; absent: "" */
    int force_new;                /* force-new-cluster is set to anything but a plain false */
    int no_fsync;                 /* unsafe-no-fsync, the same */
};

/*
 * The keys of etcd.conf.yaml text (len bytes, hostile) into *out (valid on KERR_OK only);
 * KERR_PARSE with a message when the text is not one YAML mapping with string keys, a key above
 * is set twice (ignoring case) or by a merge key, or an identity value is not a string scalar
 * shorter than CFGKEYS_VAL_MAX.
 */
enum kerr cfgkeys_read(const char *text, size_t len, struct cfgkeys *out, struct kerr_info *err);

/*
 * Why now (BORROWED) is refused over old (BORROWED; NULL: a CREATE, or the replaced
 * configuration does not parse), for an Etcd whose spec.memberNamePrefix is etcd_prefix
 * (BORROWED, "" when absent; NULL: not judged), into why (size bytes): 1, or 0 when admitted.
 */
int cfgkeys_problem(const struct cfgkeys *now, const struct cfgkeys *old, const char *etcd_prefix,
                    char *why, size_t size);

/*
 * The whole rule on texts: etcd.conf.yaml now (BORROWED, NUL-terminated) replacing old
 * (BORROWED; NULL: none), etcd_prefix as cfgkeys_problem. 1 with the reason in why (size bytes;
 * a parse error of now included), 0 when admitted; an old text that does not parse counts as
 * none.
 */
int cfgkeys_refused(const char *now, const char *old, const char *etcd_prefix, char *why,
                    size_t size);

#endif
