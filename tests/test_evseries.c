/* Tests of common/evseries: packed events, series counting, the spam filter and the bounds. */
#include "common/evseries.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEC 1000000000LL

/* A packed event about object name with reason and note. */
static struct evs_item *item(const char *name, const char *reason, const char *note)
{
    const char *f[EVS_F_COUNT] = { "druid.gardener.cloud/v1alpha1",
                                   "Etcd",
                                   "ns",
                                   name,
                                   "uid-1",
                                   "Normal",
                                   reason,
                                   "Reconcile",
                                   note };
    struct evs_item *it = NULL;

    cr_assert_eq(evs_item_new(f, 1024, &it), KERR_OK);
    return it;
}

static enum evs_outcome ingest(struct evs_cache *c, struct evs_item *it, int64_t now)
{
    int evicted = -1;
    enum evs_outcome out = evs_ingest(c, it, now, &evicted);

    cr_assert_eq(evicted, 0, "nothing pending was evicted");
    return out;
}

Test(evseries, fields_are_packed_in_order)
{
    const char *f[EVS_F_COUNT] = { "v1", "Pod", NULL, "p", NULL, "Warning", "Failed", "Run", "n" };
    struct evs_item *it = NULL;

    cr_assert_eq(evs_item_new(f, 1024, &it), KERR_OK);
    cr_assert_str_eq(evs_field(it, EVS_F_API), "v1");
    cr_assert_str_eq(evs_field(it, EVS_F_KIND), "Pod");
    cr_assert_str_eq(evs_field(it, EVS_F_NS), "", "NULL packs as empty");
    cr_assert_str_eq(evs_field(it, EVS_F_NAME), "p");
    cr_assert_str_eq(evs_field(it, EVS_F_UID), "");
    cr_assert_str_eq(evs_field(it, EVS_F_TYPE), "Warning");
    cr_assert_str_eq(evs_field(it, EVS_F_REASON), "Failed");
    cr_assert_str_eq(evs_field(it, EVS_F_ACTION), "Run");
    cr_assert_str_eq(evs_field(it, EVS_F_NOTE), "n");
    cr_assert_eq(it->obj_len, strlen("v1") + strlen("Pod") + strlen("p") + 5,
                 "the regarding fields with their NULs");
    cr_assert_eq(it->len, it->obj_len + strlen("Warning") + strlen("Failed") + 3 + 1 + 4);
    cr_assert_gt(it->at.tv_sec, 0, "wall clock stamped");
    cr_assert_gt(it->mono, 0, "monotonic clock stamped");
    free(it);
}

Test(evseries, note_is_cut_at_a_character_boundary)
{
    char note[64];
    const char *f[EVS_F_COUNT] = { "v1", "Pod", "ns", "p", "u", "Normal", "R", "A", note };
    struct evs_item *it = NULL;

    /* "é" is two bytes: a cut at 9 bytes would split the fifth one. */
    snprintf(note, sizeof(note), "%s", "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9");
    cr_assert_eq(evs_item_new(f, 9, &it), KERR_OK);
    cr_assert_str_eq(evs_field(it, EVS_F_NOTE), "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9");
    free(it);
    snprintf(note, sizeof(note), "%s", "abcdefghijkl");
    cr_assert_eq(evs_item_new(f, 9, &it), KERR_OK);
    cr_assert_str_eq(evs_field(it, EVS_F_NOTE), "abcdefghi");
    free(it);
    cr_assert_eq(evs_item_new(f, 12, &it), KERR_OK);
    cr_assert_str_eq(evs_field(it, EVS_F_NOTE), "abcdefghijkl", "not cut at the limit");
    free(it);
}

Test(evseries, isomorphic_events_form_a_series)
{
    struct evs_cache c;
    struct evs_item *a = item("etcd-a", "Synced", "ok");
    int64_t t0 = a->mono;
    char want[64];
    long long ns = (long long)a->at.tv_sec * SEC + a->at.tv_nsec;

    evs_init(&c, 60 * SEC, 0, -1, 0);
    cr_assert_eq(ingest(&c, a, t0), EVS_NEW);
    cr_assert_eq(c.n, 1);
    cr_assert_eq(c.first, c.last);
    cr_assert_eq(c.first->count, 1);
    cr_assert_eq(c.first->sent, 0);
    cr_assert(evs_pending(c.first), "a new entry has something to send");
    snprintf(want, sizeof(want), "etcd-a.%llx", (unsigned long long)ns);
    cr_assert_str_eq(c.first->name, want);
    cr_assert_eq(ingest(&c, item("etcd-a", "Synced", "ok"), t0), EVS_REPEAT);
    cr_assert_eq(ingest(&c, item("etcd-a", "Synced", "ok"), t0), EVS_REPEAT);
    cr_assert_eq(c.first->count, 3);
    cr_assert_geq(c.first->last_mono, t0, "last occurrence follows the repeats");
    cr_assert_eq(ingest(&c, item("etcd-a", "Synced", "other"), t0), EVS_NEW, "other note");
    cr_assert_eq(ingest(&c, item("etcd-b", "Synced", "ok"), t0), EVS_NEW, "other object");
    cr_assert_eq(c.n, 3);
    cr_assert_str_eq(evs_field(c.last->item, EVS_F_NAME), "etcd-b", "new entries go last");
    evs_release(&c);
    evs_release(&c);
    cr_assert_eq(c.n, 0);
    cr_assert_null(c.first);
}

Test(evseries, a_repeat_after_the_window_starts_a_new_entry)
{
    struct evs_cache c;
    struct evs_item *a = item("etcd-a", "Synced", "ok"), *b = item("etcd-a", "Synced", "ok");
    int64_t last = a->mono;

    evs_init(&c, 10 * SEC, 0, -1, 0);
    cr_assert_eq(ingest(&c, a, last), EVS_NEW);
    cr_assert_eq(ingest(&c, b, last + 10 * SEC), EVS_NEW, "the window has passed");
    cr_assert_eq(c.n, 2);
    cr_assert_eq(c.first->count, 1);
    evs_release(&c);
}

Test(evseries, new_events_are_limited_per_object)
{
    struct evs_cache c;
    char reason[16];
    int i, news = 0, dropped = 0;
    enum evs_outcome out;

    evs_init(&c, 60 * SEC, 0, 0.0001, 3);
    for (i = 0; i < 5; i++) {
        snprintf(reason, sizeof(reason), "R%d", i);
        out = ingest(&c, item("etcd-a", reason, NULL), 0);
        news += out == EVS_NEW;
        dropped += out == EVS_DROPPED;
    }
    cr_assert_eq(news, 3, "the burst");
    cr_assert_eq(dropped, 2);
    cr_assert_eq(ingest(&c, item("etcd-a", "R0", NULL), 0), EVS_REPEAT, "repeats are not limited");
    cr_assert_eq(ingest(&c, item("etcd-b", "R0", NULL), 0), EVS_NEW, "another object's bucket");
    evs_release(&c);

    evs_init(&c, 60 * SEC, 0, -1, 3);
    for (i = 0; i < 10; i++) {
        snprintf(reason, sizeof(reason), "R%d", i);
        cr_assert_eq(ingest(&c, item("etcd-a", reason, NULL), 0), EVS_NEW, "filter disabled");
    }
    evs_release(&c);
}

Test(evseries, the_cache_is_bounded_and_drops_the_oldest)
{
    struct evs_cache c;
    int evicted = -1;

    evs_init(&c, 60 * SEC, 2, -1, 0);
    cr_assert_eq(evs_ingest(&c, item("a", "R", NULL), 0, &evicted), EVS_NEW);
    cr_assert_eq(evs_ingest(&c, item("b", "R", NULL), 0, &evicted), EVS_NEW);
    cr_assert_eq(evicted, 0);
    cr_assert_eq(evs_ingest(&c, item("c", "R", NULL), 0, &evicted), EVS_NEW);
    cr_assert_eq(evicted, 1, "the oldest had not been sent");
    cr_assert_eq(c.n, 2);
    cr_assert_str_eq(evs_field(c.first->item, EVS_F_NAME), "b");
    c.first->sent = c.first->count; /* the recorder sent it */
    cr_assert_eq(evs_ingest(&c, item("d", "R", NULL), 0, &evicted), EVS_NEW);
    cr_assert_eq(evicted, 0, "a sent entry is forgotten without loss");
    cr_assert_str_eq(evs_field(c.first->item, EVS_F_NAME), "c");
    cr_assert_str_eq(evs_field(c.last->item, EVS_F_NAME), "d");
    evs_release(&c);
}

Test(evseries, gc_forgets_dead_and_quiet_entries_and_full_buckets)
{
    struct evs_cache c;
    struct evs_item *it = item("quiet", "R", NULL);
    int64_t t0 = it->mono;

    evs_init(&c, 10 * SEC, 0, 1e9, 5); /* buckets refill at once */
    cr_assert_eq(ingest(&c, it, t0), EVS_NEW);
    cr_assert_eq(ingest(&c, item("pending", "R", NULL), t0), EVS_NEW);
    cr_assert_eq(ingest(&c, item("dead", "R", NULL), t0), EVS_NEW);
    cr_assert_not_null(c.spam);
    c.first->sent = 1;
    c.last->dead = 1;
    evs_gc(&c, t0);
    cr_assert_eq(c.n, 2, "the dead entry goes at once");
    cr_assert_null(c.spam, "full buckets are forgotten");
    evs_gc(&c, t0 + 20 * SEC);
    cr_assert_eq(c.n, 1, "the quiet entry goes after its window");
    cr_assert_eq(c.first, c.last);
    cr_assert_str_eq(evs_field(c.first->item, EVS_F_NAME), "pending", "pending entries stay");
    cr_assert_eq(ingest(&c, item("next", "R", NULL), t0), EVS_NEW);
    cr_assert_str_eq(evs_field(c.last->item, EVS_F_NAME), "next", "the tail is right after gc");
    evs_release(&c);
}

Test(evseries, long_names_are_cut_in_the_event_name)
{
    struct evs_cache c;
    char name[301];

    memset(name, 'x', 300);
    name[300] = '\0';
    evs_init(&c, 60 * SEC, 0, -1, 0);
    cr_assert_eq(ingest(&c, item(name, "R", NULL), 0), EVS_NEW);
    cr_assert_leq(strlen(c.first->name), 253);
    cr_assert_eq(strspn(c.first->name, "x"), EVS_NAME_PART_MAX);
    cr_assert_eq(c.first->name[EVS_NAME_PART_MAX], '.');
    evs_release(&c);
}
