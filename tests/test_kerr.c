#include "common/kerr.h"

#include <criterion/criterion.h>
#include <string.h>

Test(kerr, set_fills_message_and_returns_code)
{
    struct kerr_info e;

    cr_assert_eq(kerr_set(&e, KERR_PARSE, "line %d: bad", 7), KERR_PARSE);
    cr_assert_eq(e.code, KERR_PARSE);
    cr_assert_str_eq(e.msg, "line 7: bad");
    cr_assert_eq(e.http_status, 0);
    cr_assert_str_eq(e.reason, "");
}

Test(kerr, null_err_is_allowed)
{
    cr_assert_eq(kerr_set(NULL, KERR_NOMEM, "x"), KERR_NOMEM);
    cr_assert_eq(kerr_set_api(NULL, KERR_CONFLICT, 409, "Conflict", "x"), KERR_CONFLICT);
    kerr_clear(NULL);
}

Test(kerr, api_error_keeps_status_and_reason)
{
    struct kerr_info e;

    kerr_set_api(&e, KERR_CONFLICT, 409, "Conflict", "the object has been modified");
    cr_assert_eq(e.http_status, 409);
    cr_assert_str_eq(e.reason, "Conflict");
    cr_assert_str_eq(e.msg, "the object has been modified");
}

Test(kerr, null_fmt_uses_code_text)
{
    struct kerr_info e;

    kerr_set(&e, KERR_TIMEOUT, NULL);
    cr_assert_str_eq(e.msg, "timed out");
}

Test(kerr, wrap_prefixes)
{
    struct kerr_info e;

    kerr_set(&e, KERR_IO, "read failed");
    cr_assert_eq(kerr_wrap(&e, "kubeconfig %s", "/x"), KERR_IO);
    cr_assert_str_eq(e.msg, "kubeconfig /x: read failed");
}

Test(kerr, long_messages_are_truncated)
{
    struct kerr_info e;
    char big[2000];

    memset(big, 'a', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    kerr_set(&e, KERR_INVAL, "%s", big);
    cr_assert_eq(strlen(e.msg), KERR_MSG_LEN - 1);
}

Test(kerr, names_and_texts_cover_every_code)
{
    int c;

    for (c = 0; c < KERR__COUNT; c++) {
        cr_assert_neq(strcmp(kerr_str((enum kerr)c), "unknown error"), 0);
        cr_assert_neq(strcmp(kerr_name((enum kerr)c), "UNKNOWN"), 0);
    }
    cr_assert_str_eq(kerr_str((enum kerr)999), "unknown error");
    cr_assert_str_eq(kerr_name(KERR_NOTFOUND), "NOTFOUND");
}
