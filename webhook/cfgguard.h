/*
 * cfgguard - the data-directory rule for etcd's configuration: where etcd keeps its data is
 * said by the Etcd's ConfigMap <etcd>-config (etcd.conf.yaml, key data-dir, etcd-druid's
 * internal/component/configmap/etcdconfig.go), which the backup sidecar serves to etcd as
 * written. A data-dir off the members' claims makes each member's next start run etcd on an
 * empty directory (a single member starts a new, empty cluster) while the claim's data is read
 * by nothing, so a CREATE or UPDATE of ConfigMap <E>-config of a live Etcd E (found, no
 * deletionTimestamp) is refused, for everyone and whether component protection is on or off,
 * unless its etcd.conf.yaml (in data, not binaryData) parses and sets data-dir to an
 * absolute path without "." or ".." components at or below a path where container etcd of
 * StatefulSet E's pod template mounts a volumeClaimTemplate's volume without a sub path
 * (StatefulSet E gone: at or below DATAMNT_DRUID_PATH, where etcd-druid mounts the claim;
 * etcd-druid writes the ConfigMap before the StatefulSet). A StatefulSet whose container etcd
 * mounts no claim's volume at all keeps no member data on a claim (the member-volume guard
 * keeps a claim's mount from going): its ConfigMap is not judged. A DELETE takes no data anywhere
 * (etcd does not start without its configuration) and is left to component protection.
 * A lookup that fails, or a cache miss nobody confirmed, is a 500.
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

#define CFGGUARD_SUFFIX "-config"
#define CFGGUARD_KEY    "etcd.conf.yaml"

/*
 * The Etcd whose ConfigMap name is "<etcd>-config" into etcd (size bytes): 1, else 0 (no such
 * suffix, an empty or too long prefix). Pure: name is any text (NULL: none).
 */
int cfgguard_etcd_of(const char *name, char *etcd, size_t size);

/*
 * etcd's data-dir in etcd.conf.yaml text (len bytes, hostile): KERR_OK with the value in out
 * (size bytes, NUL-terminated); KERR_PARSE with a message when the text is not one YAML
 * mapping, when data-dir is absent, empty, not a string, set twice (keys compared ignoring
 * case, as etcd's JSON decoding matches them) or too long for out, or when a merge key "<<"
 * could set it.
 */
enum kerr cfgguard_data_dir(const char *text, size_t len, char *out, size_t size,
                            struct kerr_info *err);

/*
 * The claim volume under whose mount dir lies, as above, for StatefulSet sts (BORROWED; NULL:
 * gone, etcd-druid's mount): its name (BORROWED from sts, or "the member claim" static), or
 * NULL when dir is on none.
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
