/*
 * cfgguard - the directory rules for etcd's configuration: where etcd keeps its data and its
 * write-ahead log is said by the Etcd's ConfigMap <etcd>-config (etcd.conf.yaml, keys data-dir
 * and wal-dir; etcd-druid's internal/component/configmap/etcdconfig.go writes data-dir
 * /var/etcd/data/new.etcd and no wal-dir, so the WAL is <data-dir>/member/wal), which the
 * backup sidecar serves to etcd as written. etcd neither moves nor looks for its data: a
 * data-dir or wal-dir naming another directory than the one holding it makes each member's
 * next start run etcd on an empty directory (a single member starts a new, empty cluster;
 * several lose their log) while the claim's data is read by nothing. So a CREATE or UPDATE of
 * ConfigMap <E>-config of a live Etcd E (found, no deletionTimestamp) is refused, for everyone
 * and whether component protection is on or off, unless its etcd.conf.yaml (in data, not
 * binaryData) parses, sets data-dir, and:
 *   1. data-dir and the WAL (wal-dir, unset: <data-dir>/member/wal) are absolute paths
 *      without "." or ".." components at or below a path where container etcd of StatefulSet
 *      E's pod template mounts a volumeClaimTemplate's volume without a sub path (StatefulSet
 *      E gone: at or below DATAMNT_DRUID_PATH, where etcd-druid mounts the claim; etcd-druid
 *      writes the ConfigMap before the StatefulSet);
 *   2. an UPDATE whose old object holds a configuration passing 1 keeps both where it said
 *      (the same directories, paths compared by components): where the members' data is now
 *      is a fact only the configuration they run says, and the old one is the one they run;
 *   3. otherwise (a CREATE: the ConfigMap re-created, whose predecessor is gone; an UPDATE of
 *      one that did not pass 1) data-dir is CFGGUARD_DATA_SUBDIR directly in such a claim
 *      mount and the WAL in it (wal-dir unset or <data-dir>/member/wal): where etcd-druid puts
 *      them, the only place known to hold the data when no configuration says otherwise. The
 *      mount is of the members' claim volume: the one container etcd mounts at
 *      DATAMNT_DRUID_PATH, else the only claim volume it mounts (several, none of them there:
 *      which holds the data is not known, and nothing passes rule 3).
 * etcd-druid writes exactly this (its CREATE and its UPDATEs keep /var/etcd/data/new.etcd).
 * A StatefulSet whose container etcd mounts no claim's volume at all keeps no member data on a
 * claim (the member-volume guard keeps a claim's mount from going): its ConfigMap is not
 * judged. A DELETE takes no data anywhere (etcd does not start without its configuration) and
 * is left to component protection. Other keys of etcd's configuration name no directory of
 * etcd's data (etcd 3.5/3.6 embed.Config: data-dir and wal-dir only); those that fork or lose
 * a live cluster's data otherwise (force-new-cluster, unsafe-no-fsync, name,
 * initial-cluster-token, initial-cluster-state) are judged by cfgkeys.h's rule, on the same
 * ConfigMaps (a live Etcd's, whether or not its etcd mounts a claim), before the directories. A
 * lookup that fails, or a cache miss nobody confirmed (the Etcd's or the StatefulSet's), is a
 * 500.
 *
 * Thread safety: reentrant, as struct lookup allows.
 */
#ifndef WEBHOOK_CFGGUARD_H
#define WEBHOOK_CFGGUARD_H

#include <stddef.h>

#include <cJSON.h>

#include "common/kerr.h"
#include "webhook/lookup.h"
#include "webhook/review.h"

#define CFGGUARD_SUFFIX      "-config"
#define CFGGUARD_KEY         "etcd.conf.yaml"
#define CFGGUARD_DATA_SUBDIR "new.etcd"              /* etcd-druid's data-dir in its claim mount */
#define CFGGUARD_WAL_SUBDIR  "member/wal"            /* etcd's WAL in data-dir without wal-dir */
#define CFGGUARD_DIR_MAX     4096                    /* PATH_MAX */
#define CFGGUARD_WAL_MAX     (CFGGUARD_DIR_MAX + 16) /* a dir and "/member/wal" */

/* etcd's directories as its configuration says them. */
struct cfgguard_dirs {
    char data[CFGGUARD_DIR_MAX]; /* data-dir as written */
    char wal[CFGGUARD_DIR_MAX];  /* wal-dir as written; "" when unset (absent, null or "") */
};

/*
 * The Etcd whose ConfigMap name is "<etcd>-config" into etcd (size bytes): 1, else 0 (no such
 * suffix, an empty or too long prefix). Pure: name is any text (NULL: none).
 */
int cfgguard_etcd_of(const char *name, char *etcd, size_t size);

/*
 * etcd's data-dir in etcd.conf.yaml text (len bytes, hostile): KERR_OK with the value in out
 * (size bytes, NUL-terminated); KERR_PARSE with a message when the text is not one YAML
 * mapping, when data-dir is absent, empty, not a string, set twice (keys compared ignoring
 * case, as etcd's JSON decoding matches them) or too long for out, when wal-dir is not a
 * string, set twice or longer than CFGGUARD_DIR_MAX - 1 bytes, or when a merge key "<<"
 * could set either.
 */
enum kerr cfgguard_data_dir(const char *text, size_t len, char *out, size_t size,
                            struct kerr_info *err);

/* As cfgguard_data_dir, data-dir and wal-dir into *out (set on KERR_OK only). */
enum kerr cfgguard_dirs_read(const char *text, size_t len, struct cfgguard_dirs *out,
                             struct kerr_info *err);

/* etcd's WAL directory under d into out (size bytes): wal-dir, else <data-dir>/member/wal. */
void cfgguard_wal_of(const struct cfgguard_dirs *d, char *out, size_t size);

/* a and b keep etcd's data and WAL in the same directories (rule 2 above). */
int cfgguard_same_place(const struct cfgguard_dirs *a, const struct cfgguard_dirs *b);

/* d puts them where etcd-druid does for StatefulSet sts (BORROWED, NULL: gone): rule 3. */
int cfgguard_druid_place(const cJSON *sts, const struct cfgguard_dirs *d);

/*
 * The claim volume under whose mount dir lies, as above (rule 1), for StatefulSet sts
 * (BORROWED, full or as lookup_sts_project keeps it; NULL: gone, etcd-druid's mount): its name
 * (BORROWED from sts, or "the member claim" static), or NULL when dir is on none.
 */
const char *cfgguard_claim_of(const cJSON *sts, const char *dir);

/* Container etcd of StatefulSet sts (BORROWED; NULL: gone, etcd-druid's) mounts a claim's
 * volume (a volumeClaimTemplate's, any sub path). */
int cfgguard_etcd_on_claim(const cJSON *sts);

/*
 * Judge req as above. *decided 1: resp holds the refusal or the 500; 0: not refused here (any
 * other request: nothing looked up).
 */
enum kerr cfgguard_judge(const struct lookup *lk, const struct review_req *req,
                         struct review_resp *resp, int *decided);

#endif
