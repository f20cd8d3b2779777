/*
 * libFuzzer target: the break-glass value parser (common/hibguard) on
 * hostile text: KERR_OK only with a reason that is not blank, inside the
 * value, after the expiry; otherwise KERR_PARSE with *expires 0 and
 * *reason "" (aborts otherwise). Then the phase check, on the same text,
 * and the ScalingDown stamp parser: KERR_OK only with a uid that fits, has
 * no '/' or blank and is what the text starts with, and a generation >= 1;
 * otherwise KERR_PARSE with generation 0 and an empty uid. Then the same text as JSON (a
 * hostile Secret, Etcd or StatefulSet): the Secret digest is always HIBGUARD_STORE_LEN hex
 * digits, a store stamp made of it is "<hex>/<name or ->/<hex or ->" within
 * HIBGUARD_STAMP_MAX, and a StatefulSet the stamp check passes has spec.replicas 0; one the
 * stamp may move to (hibguard_checked_next) passes the stamp check, and the stamp made of it
 * passes it too without being one to move to again.
 */
#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/hibguard.h"
#include "common/kjson.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_stamp(const char *text)
{
    char uid[HIBGUARD_CHECKED_MAX];
    long long g = -1;
    size_t n;

    if (hibguard_checked_parse(text, uid, sizeof(uid), &g, NULL) != KERR_OK) {
        if (g != 0 || uid[0])
            abort();
        return;
    }
    n = strlen(uid);
    if (g < 1 || n == 0 || n >= sizeof(uid) || strchr(uid, '/') || strncmp(uid, text, n) != 0 ||
        text[n] != '/')
        abort();
    for (size_t i = 0; i < n; i++)
        if (isspace((unsigned char)uid[i]))
            abort();
}

static int hex(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!s[i] || !strchr("0123456789abcdef", s[i]))
            return 0;
    return 1;
}

static void check_json(const char *text, size_t size)
{
    cJSON *o = cJSON_ParseWithLength(text, size);
    char d[HIBGUARD_STORE_LEN + 1], st[HIBGUARD_STAMP_MAX], moved[HIBGUARD_CHECKED_MAX];
    const char *ref = NULL, *a, *b;
    int64_t r = -1;
    enum kerr rc;

    if (hibguard_secret_digest(o, d) != KERR_OK || strlen(d) != HIBGUARD_STORE_LEN ||
        !hex(d, HIBGUARD_STORE_LEN))
        abort();
    rc = hibguard_store_stamp(o, o, st);
    if (rc == KERR_OK) {
        a = strchr(st, '/');
        b = a ? strchr(a + 1, '/') : NULL;
        if (strlen(st) >= HIBGUARD_STAMP_MAX || a != st + HIBGUARD_STORE_LEN ||
            !hex(st, HIBGUARD_STORE_LEN) || !b || b == a + 1 ||
            (strcmp(b + 1, "-") != 0 &&
             (strlen(b + 1) != HIBGUARD_STORE_LEN || !hex(b + 1, HIBGUARD_STORE_LEN))) ||
            (hibguard_secret_ref(o, &ref) == KERR_OK) != (strncmp(a + 1, "-/", 2) != 0))
            abort();
    } else if (rc != KERR_NOTFOUND && rc != KERR_INVAL) {
        abort();
    } else if (st[0]) {
        abort();
    }
    if (hibguard_checked_slept(text, o) &&
        (kjson_get_int64(o, "spec.replicas", &r) != KERR_OK || r != 0))
        abort();
    if (hibguard_checked_next(text, o) &&
        (!hibguard_checked_slept(text, o) ||
         hibguard_checked_format(o, moved, sizeof(moved), NULL) != KERR_OK ||
         !hibguard_checked_slept(moved, o) || hibguard_checked_next(moved, o)))
        abort();
    cJSON_Delete(o);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    const char *reason = NULL;
    time_t exp = 1;
    enum kerr rc;

    if (!text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    rc = hibguard_break_glass(text, &exp, &reason, NULL);
    if (rc == KERR_OK) {
        if (!reason || reason <= text || reason >= text + strlen(text) || !*reason ||
            isspace((unsigned char)*reason))
            abort();
    } else if (rc != KERR_PARSE || exp != 0 || !reason || *reason) {
        abort();
    }
    (void)hibguard_phase_current(text);
    check_stamp(text);
    check_json(text, size);
    free(text);
    return 0;
}
