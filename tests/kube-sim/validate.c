/* validate - kube-apiserver's metadata rules and messages (see validate.h). */
#include "tests/kube-sim/validate.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "common/kjson.h"

#define QNAME_FMT "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
#define QNAME_MSG                                                                               \
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an " \
    "alphanumeric character"
#define QNAME_EXAMPLES "(e.g. 'MyName',  or 'my.name',  or '123-abc', "
#define LABEL_VALUE_MSG                                                                         \
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or " \
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "          \
    "'my_value',  or '12345', regex used for validation is '(" QNAME_FMT ")?')"
#define DNS1123_LABEL_FMT "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
#define SUBDOMAIN_MSG                                                                             \
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "  \
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used " \
    "for validation is '" DNS1123_LABEL_FMT "(\\." DNS1123_LABEL_FMT ")*')"
#define DNS1123_LABEL_MSG                                                                        \
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and " \
    "must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex "   \
    "used for validation is '" DNS1123_LABEL_FMT "')"
#define DNS1035_LABEL_MSG                                                                        \
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an " \
    "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or "         \
    "'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"

static int too_long(size_t len, size_t max, const char *what, char *why, size_t n)
{
    if (len <= max)
        return 0;
    snprintf(why, n, "%smust be no more than %zu bytes", what, max);
    return 1;
}

/* [a-z0-9]([-a-z0-9]*[a-z0-9])? over len bytes. */
static int label_syntax(const char *s, size_t len)
{
    size_t i;

    if (len == 0 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[len - 1]))
        return 0;
    for (i = 0; i < len; i++)
        if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '-'))
            return 0;
    return 1;
}

/* Qualified-name syntax ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9] over len bytes. */
static int qname_syntax(const char *s, size_t len)
{
    size_t i;

    if (len == 0 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[len - 1]))
        return 0;
    for (i = 0; i < len; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.')
            return 0;
    return 1;
}

static int subdomain_syntax(const char *s, size_t len)
{
    size_t start = 0, i;

    for (i = 0; i <= len; i++)
        if (i == len || s[i] == '.') {
            if (!label_syntax(s + start, i - start))
                return 0;
            start = i + 1;
        }
    return 1;
}

static int subdomain_in(const char *s, size_t len, const char *what, char *why, size_t n)
{
    if (too_long(len, 253, what, why, n))
        return 0;
    if (subdomain_syntax(s, len))
        return 1;
    snprintf(why, n, "%s" SUBDOMAIN_MSG, what);
    return 0;
}

int ksim_valid_subdomain(const char *s, char *why, size_t n)
{
    return subdomain_in(s, strlen(s), "", why, n);
}

int ksim_valid_dns1123_label(const char *s, char *why, size_t n)
{
    size_t len = strlen(s);

    if (too_long(len, 63, "", why, n))
        return 0;
    if (label_syntax(s, len))
        return 1;
    snprintf(why, n, "%s", DNS1123_LABEL_MSG);
    return 0;
}

int ksim_valid_dns1035_label(const char *s, char *why, size_t n)
{
    size_t len = strlen(s);

    if (too_long(len, 63, "", why, n))
        return 0;
    if (label_syntax(s, len) && islower((unsigned char)s[0]))
        return 1;
    snprintf(why, n, "%s", DNS1035_LABEL_MSG);
    return 0;
}

int ksim_valid_qualified_name(const char *s, char *why, size_t n)
{
    const char *slash = strchr(s, '/'), *name = s;

    if (slash && strchr(slash + 1, '/')) {
        snprintf(why, n,
                 "a qualified name " QNAME_MSG " " QNAME_EXAMPLES
                 "regex used for validation is '" QNAME_FMT "') with an optional DNS subdomain "
                 "prefix and '/' (e.g. 'example.com/MyName')");
        return 0;
    }
    if (slash) {
        if (slash == s) {
            snprintf(why, n, "prefix part must be non-empty");
            return 0;
        }
        if (!subdomain_in(s, (size_t)(slash - s), "prefix part ", why, n))
            return 0;
        name = slash + 1;
    }
    if (!*name) {
        snprintf(why, n, "name part must be non-empty");
        return 0;
    }
    if (too_long(strlen(name), 63, "name part ", why, n))
        return 0;
    if (qname_syntax(name, strlen(name)))
        return 1;
    snprintf(why, n,
             "name part " QNAME_MSG " " QNAME_EXAMPLES "regex used for validation is '" QNAME_FMT
             "')");
    return 0;
}

int ksim_valid_label_value(const char *s, char *why, size_t n)
{
    size_t len = strlen(s);

    if (too_long(len, 63, "", why, n))
        return 0;
    if (len == 0 || qname_syntax(s, len))
        return 1;
    snprintf(why, n, "%s", LABEL_VALUE_MSG);
    return 0;
}

static int invalid(const struct ksim_rtype *rt, const char *name, const char *field,
                   const char *value, const char *why, struct ksim_apierr *e)
{
    char detail[2048];

    snprintf(detail, sizeof(detail), "%s: Invalid value: \"%s\": %s", field, value, why);
    return ksim_apierr_invalid(e, rt->group, rt->kind, name, field, "FieldValueInvalid", detail);
}

int ksim_validate_name(const struct ksim_rtype *rt, const char *name, struct ksim_apierr *e)
{
    char why[1024];
    int ok;

    if (!rt->custom && strcmp(rt->group, "") == 0 && strcmp(rt->plural, "namespaces") == 0)
        ok = ksim_valid_dns1123_label(name, why, sizeof(why));
    else if (!rt->custom && strcmp(rt->group, "") == 0 && strcmp(rt->plural, "services") == 0)
        ok = ksim_valid_dns1035_label(name, why, sizeof(why));
    else if (!rt->custom && strcmp(rt->group, "rbac.authorization.k8s.io") == 0) {
        ok = *name && !strchr(name, '/') && strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
        snprintf(why, sizeof(why), "may not contain '/'");
    } else
        ok = ksim_valid_subdomain(name, why, sizeof(why));
    return ok ? 0 : invalid(rt, name, "metadata.name", name, why, e);
}

int ksim_validate_meta(const struct ksim_rtype *rt, const cJSON *obj, struct ksim_apierr *e)
{
    const char *name = kjson_get_str(obj, "metadata.name");
    const cJSON *it;
    char why[1024], lower[320];
    size_t total = 0, i;

    name = name ? name : "";
    if (!rt->custom && strcmp(rt->group, "batch") == 0 && strcmp(rt->plural, "cronjobs") == 0 &&
        strlen(name) > KSIM_CRONJOB_NAME_MAX)
        return invalid(rt, name, "metadata.name", name, "must be no more than 52 characters", e);
    cJSON_ArrayForEach (it, kjson_get_obj(obj, "metadata.labels")) {
        if (!ksim_valid_qualified_name(it->string, why, sizeof(why)))
            return invalid(rt, name, "metadata.labels", it->string, why, e);
        if (cJSON_IsString(it) && !ksim_valid_label_value(it->valuestring, why, sizeof(why)))
            return invalid(rt, name, "metadata.labels", it->valuestring, why, e);
    }
    cJSON_ArrayForEach (it, kjson_get_obj(obj, "metadata.annotations")) {
        for (i = 0; it->string[i] && i + 1 < sizeof(lower); i++)
            lower[i] = (char)tolower((unsigned char)it->string[i]);
        lower[i] = '\0';
        if (strlen(it->string) >= sizeof(lower) ||
            !ksim_valid_qualified_name(lower, why, sizeof(why))) {
            if (strlen(it->string) >= sizeof(lower))
                ksim_valid_qualified_name(it->string, why, sizeof(why));
            return invalid(rt, name, "metadata.annotations", it->string, why, e);
        }
        total += strlen(it->string) + (cJSON_IsString(it) ? strlen(it->valuestring) : 0);
    }
    if (total > KSIM_ANNOTATIONS_MAX)
        return ksim_apierr_invalid(e, rt->group, rt->kind, name, "metadata.annotations",
                                   "FieldValueTooLong",
                                   "metadata.annotations: Too long: may not be more than 262144 "
                                   "bytes");
    return 0;
}
