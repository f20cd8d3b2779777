/* entries - the backup-entries capability's table entry; see entries.h. */
#include "controller/entries/entries.h"

#include <string.h>

#include "common/kjson.h"
#include "common/kobj.h"
#include "common/store.h"
#include "common/strlist.h"
#include "controller/core/ctl.h"
#include "controller/entries/bke.h"
#include "controller/entries/bkefree.h"
#include "controller/core/ctl_config.h"
#include "controller/core/ctl_metrics.h"

/* Every bucket's key: an Etcd may join or leave any bucket. */
static void etcd_keys(struct ctl *c, const cJSON *obj, int own)
{
    struct store *s = ctl_store(c, BKE_CACHE_BUCKETS);
    struct strlist keys;
    size_t i;

    (void)obj;
    (void)own;
    strlist_init(&keys);
    if (s && store_keys(s, &keys, NULL) == KERR_OK) {
        for (i = 0; i < keys.n; i++)
            ctl_enqueue(c, "bucket", "", keys.v[i], 0);
    }
    strlist_release(&keys);
    ctl_enqueue(c, BKEFREE_KIND, "", BKEFREE_NAME, 0); /* or a store no bucket owns */
}

static void bucket_keys(struct ctl *c, const cJSON *obj, int own)
{
    (void)own;
    ctl_enqueue_obj(c, "bucket", obj, kjson_get_str(obj, "metadata.name"));
    ctl_enqueue(c, BKEFREE_KIND, "", BKEFREE_NAME, 0); /* a store owned or freed */
}

static void entry_keys(struct ctl *c, const cJSON *obj, int own)
{
    const char *b = kjson_get_str(obj, "spec.bucketName");

    (void)own;
    if (b && *b)
        ctl_enqueue_obj(c, "bucket", obj, b);
    else
        ctl_enqueue(c, BKEFREE_KIND, "", BKEFREE_NAME, 0);
}

static size_t conflicts(struct ctl *c)
{
    return bke_conflicts(ctl_store(c, BKE_CACHE_ENTRIES));
}

/* Where store_foreach sends the series of warden_backup_entry_prefix_conflict. */
struct emit_to {
    ctl_metrics_emit_fn emit;
    void *ctx;
};

static enum kerr conflict_series(void *arg, const char *key, const cJSON *entry)
{
    const struct emit_to *e = arg;
    const cJSON *c = kobj_condition(entry, "PrefixConflict");
    const char *status = kjson_get_str(c, "status");
    const char *v[4] = { kjson_get_str(entry, "metadata.name"),
                         kjson_get_str(entry, "spec.etcd.namespace"),
                         kjson_get_str(entry, "spec.etcd.name"), NULL };

    (void)key;
    if (status && strcmp(status, "True") == 0 && v[0]) {
        v[1] = v[1] ? v[1] : "";
        v[2] = v[2] ? v[2] : "";
        e->emit(e->ctx, v, 1.0);
    }
    return KERR_OK;
}

static void collect_conflicts(void *src, ctl_metrics_emit_fn emit, void *ctx)
{
    struct emit_to e = { emit, ctx };
    struct store *s = ctl_store(src, BKE_CACHE_ENTRIES);

    if (s)
        (void)store_foreach(s, conflict_series, &e, NULL);
}

static const char *const by_entry[] = { "entry", "etcd_namespace", "etcd", NULL };

static const struct ctl_metrics_gauge gauges[] = {
    { "warden_backup_entry_prefix_conflict",
      "1 for each BackupEntry with the condition PrefixConflict (its Etcd's namespace and name "
      "beside it)",
      by_entry, collect_conflicts },
    { .name = NULL },
};

static int enabled(const struct ctl_config *cfg)
{
    return cfg->backup_entries;
}

static const struct ctl_watch watches[] = {
    { .res = { "druid.gardener.cloud", "v1alpha1", "etcds", 1 },
      .kind = "Etcd",
      .keys = etcd_keys },
    { .res = { "etcd-warden.io", "v1alpha1", "backupbuckets", 0 },
      .kind = "BackupBucket",
      .keys = bucket_keys },
    { .res = { "etcd-warden.io", "v1alpha1", "backupentries", 0 },
      .kind = "BackupEntry",
      .keys = entry_keys,
      .indexes = { { BKE_INDEX_BUCKET, bke_index_bucket } } },
    { .kind = NULL },
};

static const struct ctl_key keys[] = {
    { "bucket", bke_reconcile, NULL, NULL },
    { BKEFREE_KIND, bkefree_reconcile, NULL, NULL },
    { .kind = NULL },
};

const struct ctl_capability entries_capability = {
    .name = "backup-entries",
    .enabled = enabled,
    .watches = watches,
    .keys = keys,
    .conflicts = conflicts,
    .gauges = gauges,
};
