/* whdiff - both review decoders agree, as an assertion; see whdiff.h. */
#include "tests/support/whdiff.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "common/log.h"
#include "webhook/wh_decdiff.h"

void whdiff_same(const struct protect_config *cfg, const struct lookup_mem *mem, enum wh_hook h,
                 const char *body)
{
    static const char *const none[] = { NULL };
    struct protect_config empty = { none, 0, none, 0, NULL, NULL, 0, NULL };
    struct lookup_mem a = { 0 }, b = { 0 };
    struct lookup la, lb;
    struct kerr_info err;
    enum log_level level = log_get_level();
    enum kerr rc;

    if (mem)
        a = *mem;
    b = a;
    lookup_mem_bind(&a, &la);
    lookup_mem_bind(&b, &lb);
    kerr_clear(&err);
    log_set_level(LOG_ERROR); /* the dispatcher's review lines of both runs are noise here */
    rc = wh_decdiff_check(cfg ? cfg : &empty, &la, &lb, h, body, strlen(body), &err);
    log_set_level(level);
    cr_assert_eq(rc, KERR_OK, "%s", err.msg);
    cr_assert_eq(a.calls, b.calls, "lookups: %d with whole trees, %d selective", a.calls, b.calls);
}

cJSON *whdiff_answer(struct wh_dispatch *d, const struct protect_config *cfg,
                     const struct lookup_mem *mem, enum wh_hook h, const char *body, bool *allowed)
{
    struct kerr_info err;
    unsigned int status = 0;
    size_t len = 0;
    char *out = NULL;
    cJSON *doc = NULL;

    whdiff_same(cfg, mem, h, body);
    cr_assert_eq(wh_dispatch_review(d, h, body, strlen(body), &out, &len, &status, &err), KERR_OK,
                 "%s", err.msg);
    cr_assert_eq(kjson_parse(out, len, NULL, &doc, NULL, NULL), KERR_OK);
    cr_assert_eq(kjson_get_bool(doc, "response.allowed", allowed), KERR_OK);
    free(out);
    return doc;
}
