#include "controller/snapshot/snapdelta.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

struct got {
    char log[1024];
};

static enum kerr on_event(void *ctx, const struct snapdelta_event *ev, struct kerr_info *err)
{
    struct got *g = ctx;
    size_t n = strlen(g->log);
    (void)err;
    snprintf(g->log + n, sizeof g->log - n, "%lld:%d:%lld:%.*s ", (long long)ev->index, ev->type,
             (long long)ev->mod_revision, (int)ev->klen, (const char *)ev->key);
    return KERR_OK;
}

static enum kerr feed(const char *text, size_t step, struct got *g, struct kerr_info *err)
{
    struct snapdelta *d = NULL;
    size_t n = strlen(text);
    memset(g, 0, sizeof *g);
    enum kerr rc = snapdelta_new(4096, on_event, g, &d, err);
    for (size_t off = 0; rc == KERR_OK && off < n; off += step)
        rc = snapdelta_update(d, text + off, n - off < step ? n - off : step, err);
    rc = rc ? rc : snapdelta_finish(d, err);
    snapdelta_free(d);
    return rc;
}

/* As the sidecar writes them: PUT's type left out; "L2E=" is "/a", "L2I=" "/b". */
static const char GOOD[] =
    "[{\"etcdEvent\":{\"kv\":{\"key\":\"L2E=\",\"create_revision\":5,\"mod_revision\":5,"
    "\"version\":1,\"value\":\"eA==\"}},\"time\":\"2026-01-01T00:00:00Z\"},\n"
    " {\"etcdEvent\":{\"type\":1,\"kv\":{\"key\":\"L2I=\",\"mod_revision\":6}},"
    "\"time\":\"2026-01-01T00:00:01.5Z\"},"
    "{\"etcdEvent\":{\"kv\":{\"key\":\"L2E=\",\"mod_revision\":7,\"value\":\"fV0ie1t9\"}}}]";

Test(snapdelta, events_in_any_pieces)
{
    static const size_t steps[] = { 1, 2, 3, 7, 64, 4096 };
    for (size_t i = 0; i < sizeof steps / sizeof steps[0]; i++) {
        struct got g;
        struct kerr_info err = { 0 };
        cr_assert_eq(feed(GOOD, steps[i], &g, &err), KERR_OK, "step %zu: %s", steps[i], err.msg);
        cr_expect_str_eq(g.log, "0:0:5:/a 1:1:6:/b 2:0:7:/a ", "step %zu", steps[i]);
    }
}

Test(snapdelta, empty_array)
{
    struct got g;
    cr_expect_eq(feed(" [ ] ", 1, &g, NULL), KERR_OK);
    cr_expect_str_eq(g.log, "");
}

static void refused(const char *text, const char *want)
{
    struct got g;
    struct kerr_info err = { 0 };
    cr_expect_eq(feed(text, 5, &g, &err), KERR_PARSE, "%s", text);
    cr_expect(strstr(err.msg, want) != NULL, "%s: %s (want %s)", text, err.msg, want);
}

Test(snapdelta, what_the_restore_cannot_unmarshal_is_refused)
{
    refused("", "does not end");
    refused("[", "does not end");
    refused("[{\"etcdEvent\":{\"kv\":{}}}", "does not end");
    refused("{}", "not an array");
    refused("[1]", "not an array");
    refused("[{\"etcdEvent\":{\"kv\":{}}}] x", "not an array");
    refused("[{\"etcdEvent\":{\"kv\":{}}},]", "not an array");
    refused("[{\"etcdEvent\":{}}]", "no etcdEvent.kv");
    refused("[{\"x\":1}]", "no etcdEvent.kv");
    refused("[{\"etcdEvent\":{\"kv\":{\"key\":\"L2E\"}}}]", "not base64");
    refused("[{\"etcdEvent\":{\"kv\":{\"key\":\"L2=E\"}}}]", "not base64");
    refused("[{\"etcdEvent\":{\"kv\":{\"key\":\"!!!!\"}}}]", "not base64");
    refused("[{\"etcdEvent\":{\"kv\":{\"key\":5}}}]", "not a string");
    refused("[{\"etcdEvent\":{\"type\":\"PUT\",\"kv\":{}}}]", "not an integer");
    refused("[{\"etcdEvent\":{\"kv\":{\"mod_revision\":1.5}}}]", "not an integer");
    refused("[{\"etcdEvent\":{\"kv\":{\"mod_revision\":1e300}}}]", "not an integer");
    refused("[{\"etcdEvent\":{\"kv\":{\"key\":\"}\"}}]", "not JSON");
}

Test(snapdelta, braces_inside_strings_do_not_end_an_event)
{
    struct got g;
    struct kerr_info err = { 0 };
    cr_assert_eq(feed("[{\"etcdEvent\":{\"kv\":{\"key\":\"L2E=\",\"mod_revision\":3}},"
                      "\"time\":\"}]\\\"{\"}]",
                      1, &g, &err),
                 KERR_OK, "%s", err.msg);
    cr_expect_str_eq(g.log, "0:0:3:/a ");
}

Test(snapdelta, an_event_over_the_bound_is_refused)
{
    char big[6000];
    struct got g;
    struct kerr_info err = { 0 };
    snprintf(big, sizeof big, "[{\"etcdEvent\":{\"kv\":{}},\"time\":\"%05000d\"}]", 0);
    cr_expect_eq(feed(big, 100, &g, &err), KERR_PARSE);
    cr_expect(strstr(err.msg, "larger than 4096") != NULL, "%s", err.msg);
}
