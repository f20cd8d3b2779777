#include "tests/kube-sim/apierr.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ksim_apierr_clear(struct ksim_apierr *e)
{
    memset(e, 0, sizeof(*e));
}

__attribute__((format(printf, 4, 0))) static void
vset(struct ksim_apierr *e, int code, const char *reason, const char *fmt, va_list ap)
{
    ksim_apierr_clear(e);
    e->code = code;
    snprintf(e->reason, sizeof(e->reason), "%s", reason ? reason : "");
    if (vsnprintf(e->message, sizeof(e->message), fmt, ap) < 0)
        e->message[0] = '\0';
}

int ksim_apierr_set(struct ksim_apierr *e, int code, const char *reason, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vset(e, code, reason, fmt, ap);
    va_end(ap);
    return code;
}

void ksim_apierr_details(struct ksim_apierr *e, const char *name, const char *group,
                         const char *kind)
{
    snprintf(e->name, sizeof(e->name), "%s", name ? name : "");
    snprintf(e->group, sizeof(e->group), "%s", group ? group : "");
    snprintf(e->kind, sizeof(e->kind), "%s", kind ? kind : "");
}

void ksim_apierr_qualified(const char *group, const char *plural, char *out, size_t size)
{
    if (group && *group)
        snprintf(out, size, "%s.%s", plural, group);
    else
        snprintf(out, size, "%s", plural);
}

/*
 * e = code and reason with the message "<pre><plural.group> \"<name>\"<post><why>"
 * (without the name part when name is NULL) and the details of the object.
 */
static int object_err(struct ksim_apierr *e, int code, const char *reason, const char *group,
                      const char *plural, const char *name, const char *pre, const char *post,
                      const char *why)
{
    char q[300];

    ksim_apierr_qualified(group, plural, q, sizeof(q));
    if (name)
        ksim_apierr_set(e, code, reason, "%s%s \"%s\"%s%s", pre, q, name, post, why ? why : "");
    else
        ksim_apierr_set(e, code, reason, "%s%s%s%s", pre, q, post, why ? why : "");
    ksim_apierr_details(e, name, group, plural);
    return code;
}

int ksim_apierr_not_found(struct ksim_apierr *e, const char *group, const char *plural,
                          const char *name)
{
    return object_err(e, 404, "NotFound", group, plural, name, "", " not found", NULL);
}

int ksim_apierr_exists(struct ksim_apierr *e, const char *group, const char *plural,
                       const char *name)
{
    return object_err(e, 409, "AlreadyExists", group, plural, name, "", " already exists", NULL);
}

int ksim_apierr_conflict(struct ksim_apierr *e, const char *group, const char *plural,
                         const char *name, const char *why)
{
    return object_err(e, 409, "Conflict", group, plural, name, "Operation cannot be fulfilled on ",
                      ": ", why);
}

int ksim_apierr_invalid(struct ksim_apierr *e, const char *group, const char *kind,
                        const char *name, const char *field, const char *cause,
                        const char *field_detail)
{
    object_err(e, 422, "Invalid", group, kind, name, "", " is invalid: ", field_detail);
    snprintf(e->field, sizeof(e->field), "%s", field ? field : "");
    snprintf(e->cause_reason, sizeof(e->cause_reason), "%s", cause ? cause : "FieldValueInvalid");
    return 422;
}

/* Whether errs[i]'s message appeared before it. */
static int seen_before(const struct ksim_fielderr *errs, size_t i)
{
    size_t j;

    for (j = 0; j < i; j++) {
        if (strcmp(errs[j].field, errs[i].field) == 0 && strcmp(errs[j].body, errs[i].body) == 0)
            return 1;
    }
    return 0;
}

static int causes_json(struct ksim_apierr *e, const struct ksim_fielderr *errs, size_t n)
{
    cJSON *arr = cJSON_CreateArray(), *c;
    char *text = NULL;
    size_t i;
    int rc = -1;

    if (!arr)
        return -1;
    for (i = 0; i < n; i++) {
        c = cJSON_CreateObject();
        if (!c || !cJSON_AddItemToArray(arr, c) ||
            !cJSON_AddStringToObject(c, "reason", errs[i].reason) ||
            !cJSON_AddStringToObject(c, "message", errs[i].body) ||
            !cJSON_AddStringToObject(c, "field", errs[i].field))
            goto out;
        text = cJSON_PrintUnformatted(arr);
        if (!text || strlen(text) >= sizeof(e->causes))
            break; /* the causes are cut where the buffer ends */
        snprintf(e->causes, sizeof(e->causes), "%s", text);
        cJSON_free(text);
        text = NULL;
    }
    rc = 0;
out:
    cJSON_free(text);
    cJSON_Delete(arr);
    return rc;
}

int ksim_apierr_invalid_list(struct ksim_apierr *e, const char *group, const char *kind,
                             const char *name, const struct ksim_fielderr *errs, size_t n)
{
    char msg[sizeof(e->message)];
    size_t i, len = 0, distinct = 0;
    int w;

    msg[0] = '\0';
    for (i = 0; i < n; i++)
        distinct += !seen_before(errs, i);
    for (i = 0; i < n && len < sizeof(msg); i++) {
        if (seen_before(errs, i))
            continue;
        w = snprintf(msg + len, sizeof(msg) - len, "%s%s%s: %s", len ? ", " : "",
                     distinct > 1 && !len ? "[" : "", errs[i].field, errs[i].body);
        len += w > 0 ? (size_t)w : 0;
    }
    if (distinct > 1 && len + 1 < sizeof(msg))
        snprintf(msg + len, sizeof(msg) - len, "]");
    object_err(e, 422, "Invalid", group, kind, name, "", " is invalid: ", msg);
    if (n) {
        snprintf(e->field, sizeof(e->field), "%s", errs[0].field);
        snprintf(e->cause_reason, sizeof(e->cause_reason), "%s", errs[0].reason);
    }
    if (causes_json(e, errs, n) != 0)
        e->causes[0] = '\0';
    return 422;
}

int ksim_apierr_forbidden(struct ksim_apierr *e, const char *group, const char *plural,
                          const char *name, const char *why)
{
    return object_err(e, 403, "Forbidden", group, plural, name && *name ? name : NULL, "",
                      " is forbidden: ", why);
}

int ksim_apierr_bad_request(struct ksim_apierr *e, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vset(e, 400, "BadRequest", fmt, ap);
    va_end(ap);
    return 400;
}

int ksim_apierr_internal(struct ksim_apierr *e, const char *fmt, ...)
{
    char msg[sizeof(e->message) - 32];
    va_list ap;

    va_start(ap, fmt);
    if (vsnprintf(msg, sizeof(msg), fmt, ap) < 0)
        msg[0] = '\0';
    va_end(ap);
    return ksim_apierr_set(e, 500, "InternalError", "Internal error occurred: %s", msg);
}

static int add_details(cJSON *st, const struct ksim_apierr *e)
{
    cJSON *d, *causes, *c;

    if (!e->name[0] && !e->group[0] && !e->kind[0] && !e->retry_after && !e->field[0] &&
        !e->cause_message[0])
        return 0;
    d = cJSON_AddObjectToObject(st, "details");
    if (!d)
        return -1;
    if ((e->name[0] && !cJSON_AddStringToObject(d, "name", e->name)) ||
        (e->group[0] && !cJSON_AddStringToObject(d, "group", e->group)) ||
        (e->kind[0] && !cJSON_AddStringToObject(d, "kind", e->kind)))
        return -1;
    if (e->causes[0]) {
        causes = cJSON_Parse(e->causes);
        if (!causes || !cJSON_AddItemToObject(d, "causes", causes)) {
            cJSON_Delete(causes);
            return -1;
        }
    } else if (e->field[0] || e->cause_reason[0] || e->cause_message[0]) {
        const char *colon = e->cause_message[0] ? NULL : strstr(e->message, "is invalid: ");
        const char *cmsg = e->cause_message[0] ? e->cause_message : colon ? colon + 12 : e->message;

        causes = cJSON_AddArrayToObject(d, "causes");
        c = cJSON_CreateObject();
        if (!causes || !c || !cJSON_AddItemToArray(causes, c) ||
            (e->cause_reason[0] && !cJSON_AddStringToObject(c, "reason", e->cause_reason)) ||
            !cJSON_AddStringToObject(c, "message", cmsg) ||
            (e->field[0] && !cJSON_AddStringToObject(c, "field", e->field)))
            return -1;
    }
    if (e->retry_after && !cJSON_AddNumberToObject(d, "retryAfterSeconds", e->retry_after))
        return -1;
    return 0;
}

enum kerr ksim_apierr_to_json(const struct ksim_apierr *e, cJSON **out)
{
    cJSON *st = cJSON_CreateObject();

    *out = NULL;
    if (!st || !cJSON_AddStringToObject(st, "kind", "Status") ||
        !cJSON_AddStringToObject(st, "apiVersion", "v1") ||
        !cJSON_AddObjectToObject(st, "metadata") ||
        !cJSON_AddStringToObject(st, "status", e->code < 400 ? "Success" : "Failure") ||
        !cJSON_AddStringToObject(st, "message", e->message) ||
        (e->reason[0] && !cJSON_AddStringToObject(st, "reason", e->reason)) ||
        add_details(st, e) != 0 || !cJSON_AddNumberToObject(st, "code", e->code)) {
        cJSON_Delete(st);
        return KERR_NOMEM;
    }
    *out = st;
    return KERR_OK;
}

/*
 * details.causes of a Status (a webhook's refusal: kube-apiserver returns its Status as
 * sent, causes included, which kubectl prints for an Invalid one): kept as JSON when it
 * fits, else its first cause.
 */
static void causes_from_status(struct ksim_apierr *e, const cJSON *causes)
{
    const cJSON *c = cJSON_GetArrayItem(causes, 0), *v;
    char *text;

    if (!cJSON_IsArray(causes) || !cJSON_IsObject(c))
        return;
    if ((v = cJSON_GetObjectItemCaseSensitive(c, "field")) && cJSON_IsString(v))
        snprintf(e->field, sizeof(e->field), "%s", v->valuestring);
    if ((v = cJSON_GetObjectItemCaseSensitive(c, "reason")) && cJSON_IsString(v))
        snprintf(e->cause_reason, sizeof(e->cause_reason), "%s", v->valuestring);
    if ((v = cJSON_GetObjectItemCaseSensitive(c, "message")) && cJSON_IsString(v))
        snprintf(e->cause_message, sizeof(e->cause_message), "%s", v->valuestring);
    text = cJSON_PrintUnformatted(causes);
    if (text && strlen(text) < sizeof(e->causes))
        memcpy(e->causes, text, strlen(text) + 1);
    free(text);
}

void ksim_apierr_from_status(struct ksim_apierr *e, const cJSON *status, int dflt_code)
{
    const cJSON *code = cJSON_GetObjectItemCaseSensitive(status, "code");
    const cJSON *reason = cJSON_GetObjectItemCaseSensitive(status, "reason");
    const cJSON *msg = cJSON_GetObjectItemCaseSensitive(status, "message");
    const cJSON *details = cJSON_GetObjectItemCaseSensitive(status, "details");
    const cJSON *v;

    ksim_apierr_clear(e);
    e->code = cJSON_IsNumber(code) && code->valuedouble > 0 && code->valuedouble < 1000
                  ? (int)code->valuedouble
                  : dflt_code;
    if (cJSON_IsString(reason))
        snprintf(e->reason, sizeof(e->reason), "%s", reason->valuestring);
    if (cJSON_IsString(msg))
        snprintf(e->message, sizeof(e->message), "%s", msg->valuestring);
    if ((v = cJSON_GetObjectItemCaseSensitive(details, "name")) && cJSON_IsString(v))
        snprintf(e->name, sizeof(e->name), "%s", v->valuestring);
    if ((v = cJSON_GetObjectItemCaseSensitive(details, "group")) && cJSON_IsString(v))
        snprintf(e->group, sizeof(e->group), "%s", v->valuestring);
    if ((v = cJSON_GetObjectItemCaseSensitive(details, "kind")) && cJSON_IsString(v))
        snprintf(e->kind, sizeof(e->kind), "%s", v->valuestring);
    causes_from_status(e, cJSON_GetObjectItemCaseSensitive(details, "causes"));
}
