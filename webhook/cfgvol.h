/*
 * cfgvol - where an Etcd's containers read etcd's configuration.
 *
 * The backup sidecar (container backup-restore) reads etcd's configuration from the file named
 * by its environment variable ETCD_CONF, /var/etcd/config/etcd.conf.yaml when unset, and hands
 * it to etcd as written. etcd-druid's StatefulSet mounts volume etcd-config-file (ConfigMap
 * <E>-config, items: key etcd.conf.yaml at path etcd.conf.yaml) at /var/etcd/config/ there. The
 * ConfigMap rule (webhook/cfgguard.h) judges only key etcd.conf.yaml of ConfigMap <E>-config:
 * a pod template reading another ConfigMap, another key or another file there would move etcd's
 * data-dir around that rule. So a CREATE or UPDATE of the StatefulSet of a live Etcd E is
 * refused for everyone unless every volume container backup-restore mounts at, over or below
 * /var/etcd/config/etcd.conf.yaml, and container etcd at or below /var/etcd/config (it reads
 * no configuration there unless it mounts one), is mounted at /var/etcd/config without a sub
 * path and is a configMap volume of ConfigMap <E>-config whose items are absent or exactly key
 * etcd.conf.yaml at path etcd.conf.yaml, and container backup-restore sets no ETCD_CONF other
 * than that path and takes no variables from envFrom (which may set it).
 *
 * The file must be served from there, too: container backup-restore mounts that volume at
 * /var/etcd/config (else it reads what its image ships there) and runs without etcdbrctl's
 * --config-file or ETCD_CONF in its command or args. Container etcd (etcd-druid's etcd-wrapper)
 * takes its configuration from the sidecar and names no file of its own; one naming a file
 * (etcd's --config-file in command or args, ETCD_CONFIG_FILE in env) must name CFGVOL_FILE and
 * mount the volume as the sidecar must, nothing at, over or below the file (a volume at
 * /var/etcd hides it); the flag inside another word, valueFrom or envFrom are refused, and so is
 * container etcd in a template without container backup-restore.
 *
 * Ownership: arguments BORROWED. Thread safety: reentrant.
 */
#ifndef WEBHOOK_CFGVOL_H
#define WEBHOOK_CFGVOL_H

#include <stddef.h>

#include <cJSON.h>

#include "common/kerr.h"
#include "webhook/lookup.h"
#include "webhook/member.h"
#include "webhook/review.h"

/* Where etcd-druid mounts etcd's configuration, and the file the sidecar reads there. */
#define CFGVOL_DIR  "/var/etcd/config"
#define CFGVOL_KEY  "etcd.conf.yaml"
#define CFGVOL_FILE CFGVOL_DIR "/" CFGVOL_KEY

/*
 * Whether the pod template of StatefulSet sts makes container backup-restore or etcd read
 * etcd's configuration from anything but key etcd.conf.yaml of ConfigMap <etcd>-config (see
 * above): 0 when it does not; 1 with why (size bytes) naming the container and what it reads.
 */
int cfgvol_problem(const cJSON *sts, const char *etcd, char *why, size_t size);

/*
 * True when req is a CREATE or UPDATE of a StatefulSet whose new pod template has such a
 * problem against the Etcd of the StatefulSet's name or of its part-of label: it is judged
 * (cfgvol_judge) once that Etcd is known.
 */
int cfgvol_applies(const struct review_req *req);

/*
 * Judge such a request of the StatefulSet of Etcd etcd (m as member_decode or
 * member_sts_by_name made it, m->part_of the Etcd): refused for everyone, etcd-druid and an
 * Etcd with component protection disabled included, while that Etcd is not being deleted.
 * *decided 1: resp holds the refusal; 0: the usual checks go on. Returns review_*'s result.
 */
enum kerr cfgvol_judge(const struct review_req *req, const struct member_meta *m,
                       const struct lookup_etcd *etcd, struct review_resp *resp, int *decided);

#endif
