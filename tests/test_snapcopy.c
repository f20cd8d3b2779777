/* snapcopy: which snapshots `warden-snapshot copy` takes (snapcopy_choose), over sets built
 * from keys as snapext_collect sorts them. The copies themselves run against the emulators
 * in tests/e2e/snapshot_copy.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>
#include <criterion/criterion.h>

#include "controller/snapshot/snapcopy.h"

static const char *const HISTORY[] = {
    "p/v1/Backup-1600000000/Full-00000000-00001000-1600000000",
    "p/v1/Backup-1600000000/Incr-00001001-00001500-1600000300",
    "p/v2/Full-00000000-00002000-1700000000.gz",
    "p/v2/Incr-00002001-00002100-1700000300.gz",
    "p/v2/Full-00000000-00002100-1700000400.gz",
    "p/v2/Incr-00002101-00002200-1700000600.gz",
    "p/v2/Incr-00002201-00002300-1700000900.gz",
    "p/v2/Full-00000000-00002300-1700001000/0000000001",
    "p/v2/Full-00000000-00002400-1700001100.gz",
    NULL,
};

/* The set in etcd-backup-restore's order; excluded: the key marked excluded (or NULL). */
static void build(struct snapext_set *set, const char *excluded)
{
    size_t n = 0;
    while (HISTORY[n]) {
        n++;
    }
    set->v = calloc(n, sizeof *set->v);
    cr_assert_not_null(set->v);
    set->n = 0;
    for (size_t i = 0; i < n; i++) {
        struct snapext_entry *e = &set->v[set->n++];
        cr_assert_eq(snap_parse(HISTORY[i], &e->name, NULL), KERR_OK, "%s", HISTORY[i]);
        e->obj.key = strdup(HISTORY[i]);
        e->obj.excluded = excluded && strcmp(HISTORY[i], excluded) == 0;
    }
    for (size_t i = 1; i < set->n; i++) { /* insertion sort by snap_cmp */
        for (size_t j = i; j > 0 && snap_cmp(&set->v[j - 1].name, &set->v[j].name) > 0; j--) {
            struct snapext_entry t = set->v[j];
            set->v[j] = set->v[j - 1];
            set->v[j - 1] = t;
        }
    }
}

/* The chosen keys joined by spaces. */
static char *chosen(const struct snapcopy_opts *o, const char *excluded, enum kerr *rc)
{
    struct snapext_set set = { 0 };
    struct kerr_info err = { 0 };
    size_t *idx = NULL, n = 0;
    char *out = calloc(1, 4096);
    build(&set, excluded);
    *rc = snapcopy_choose(&set, o, &idx, &n, &err);
    for (size_t i = 0, len = 0; *rc == KERR_OK && i < n; i++) {
        len += (size_t)snprintf(out + len, 4096 - len, "%s%s", i ? " " : "", set.v[idx[i]].obj.key);
        cr_assert_lt(len, 4096);
    }
    free(idx);
    snapext_set_release(&set);
    return out;
}

Test(snapcopy, latest_full_and_its_deltas)
{
    struct snapcopy_opts o = { .from_prefix = "p", .to_prefix = "q" };
    enum kerr rc;
    char *s = chosen(&o, NULL, &rc);
    cr_assert_eq(rc, KERR_OK);
    cr_assert_str_eq(s, "p/v2/Full-00000000-00002400-1700001100.gz");
    free(s);
}

Test(snapcopy, until_takes_the_full_before_and_deltas_up_to_it)
{
    struct snapcopy_opts o = { .from_prefix = "p", .to_prefix = "q", .until = 1700000600 };
    enum kerr rc;
    char *s = chosen(&o, NULL, &rc);
    cr_assert_eq(rc, KERR_OK);
    cr_assert_str_eq(s, "p/v2/Full-00000000-00002100-1700000400.gz "
                        "p/v2/Incr-00002101-00002200-1700000600.gz");
    free(s);
}

Test(snapcopy, chunks_and_excluded_fulls_are_never_chosen)
{
    struct snapcopy_opts o = { .from_prefix = "p", .to_prefix = "q", .until = 1700001050 };
    enum kerr rc;
    char *s = chosen(&o, NULL, &rc);
    cr_assert_eq(rc, KERR_OK);
    cr_assert_str_eq(s, "p/v2/Full-00000000-00002100-1700000400.gz "
                        "p/v2/Incr-00002101-00002200-1700000600.gz "
                        "p/v2/Incr-00002201-00002300-1700000900.gz");
    free(s);
    o.until = 0;
    s = chosen(&o, "p/v2/Full-00000000-00002400-1700001100.gz", &rc);
    cr_assert_eq(rc, KERR_OK);
    cr_assert_str_eq(s, "p/v2/Full-00000000-00002100-1700000400.gz "
                        "p/v2/Incr-00002101-00002200-1700000600.gz "
                        "p/v2/Incr-00002201-00002300-1700000900.gz");
    free(s);
}

Test(snapcopy, v1_generation_before_the_v2_fulls)
{
    struct snapcopy_opts o = { .from_prefix = "p", .to_prefix = "q", .until = 1600000300 };
    enum kerr rc;
    char *s = chosen(&o, NULL, &rc);
    cr_assert_eq(rc, KERR_OK);
    cr_assert_str_eq(s, "p/v1/Backup-1600000000/Full-00000000-00001000-1600000000 "
                        "p/v1/Backup-1600000000/Incr-00001001-00001500-1600000300");
    free(s);
}

Test(snapcopy, snapshot_by_name_and_refusals)
{
    struct snapcopy_opts o = { .from_prefix = "p",
                               .to_prefix = "q",
                               .snapshot = "Incr-00002101-00002200-1700000600.gz" };
    enum kerr rc;
    char *s = chosen(&o, NULL, &rc);
    cr_assert_eq(rc, KERR_OK);
    cr_assert_str_eq(s, "p/v2/Incr-00002101-00002200-1700000600.gz");
    free(s);
    o.snapshot = "Full-00000000-00002400-1700001100.gz";
    free(chosen(&o, "p/v2/Full-00000000-00002400-1700001100.gz", &rc));
    cr_assert_eq(rc, KERR_NOTFOUND, "an excluded snapshot is never copied");
    o.snapshot = "Full-00000000-00002300-1700001000";
    free(chosen(&o, NULL, &rc));
    cr_assert_eq(rc, KERR_NOTFOUND, "a chunked full is not a snapshot copy takes");
    o.snapshot = NULL;
    o.until = 1500000000;
    free(chosen(&o, NULL, &rc));
    cr_assert_eq(rc, KERR_NOTFOUND, "no full before the time");
}

Test(snapcopy, latest_full_alone)
{
    struct snapcopy_opts o = {
        .from_prefix = "p", .to_prefix = "q", .until = 1700001050, .latest_full = true
    };
    enum kerr rc;
    char *s = chosen(&o, NULL, &rc);
    cr_assert_eq(rc, KERR_OK);
    cr_assert_str_eq(s, "p/v2/Full-00000000-00002100-1700000400.gz", "no deltas: %s", s);
    free(s);
}

/* n copies: one full, then deltas, with long destination keys. */
static void fake_result(struct snapcopy_result *r, size_t n)
{
    char key[300];
    r->v = calloc(n, sizeof *r->v);
    r->n = n;
    for (size_t i = 0; i < n; i++) {
        snprintf(key, sizeof key, "p/v2/%s-%08zu-%08zu-17000%05zu.gz", i ? "Incr" : "Full", i,
                 i + 1, i);
        cr_assert_eq(snap_parse(key, &r->v[i].name, NULL), KERR_OK, "%s", key);
        snprintf(key, sizeof key, "a/rather/long/destination/prefix/of/the/backup/v2/%zu", i);
        r->v[i].destination = strdup(key);
        r->v[i].source = strdup(key);
        r->v[i].size = 1000 + (int64_t)i;
        snprintf(r->v[i].md5, sizeof r->v[i].md5, "%032zx", i);
    }
}

Test(snapcopy, summary_fits_the_termination_message)
{
    struct snapcopy_result r = { 0 };
    char *text = NULL;
    cJSON *j;
    fake_result(&r, 3);
    cr_assert_eq(snapcopy_summary(&r, NULL, &text, NULL), KERR_OK);
    j = cJSON_Parse(text);
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(j, "snapshots")), 3);
    cr_assert_eq(cJSON_GetObjectItem(j, "total")->valueint, 3);
    cr_assert_str_eq(cJSON_GetObjectItem(j, "error")->valuestring, "");
    cJSON_Delete(j);
    free(text);
    snapcopy_result_release(&r);

    fake_result(&r, 500);
    cr_assert_eq(snapcopy_summary(&r, NULL, &text, NULL), KERR_OK);
    cr_assert_lt(strlen(text) + 1, SNAPCOPY_SUMMARY_MAX);
    j = cJSON_Parse(text);
    cJSON *a = cJSON_GetObjectItem(j, "snapshots");
    cr_assert_eq(cJSON_GetArraySize(a), 2, "the full and the last delta");
    cr_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(a, 0), "kind")->valuestring, "Full");
    cr_assert_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(a, 1), "lastRevision")->valueint, 500);
    cr_assert_eq(cJSON_GetObjectItem(j, "total")->valueint, 500);
    cJSON_Delete(j);
    free(text);
    snapcopy_result_release(&r);

    cr_assert_eq(snapcopy_summary(NULL, "first line\nsecond", &text, NULL), KERR_OK);
    cr_assert_str_eq(text, "{\"snapshots\":[],\"total\":0,\"error\":\"first line\"}");
    free(text);
}
