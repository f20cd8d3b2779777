/* svcip - Service clusterIP allocation from a CIDR; see svcip.h. */
#include "tests/kube-sim/svcip.h"

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"

#define MIN_PREFIX 12
#define MAX_PREFIX 30

struct ksim_svcip {
    pthread_mutex_t mu;
    uint32_t base; /* network address (host order) */
    uint32_t size; /* addresses in the range, network and broadcast included */
    uint32_t next; /* offset where the next search starts */
    uint32_t used; /* usable addresses taken */
    uint8_t *bits; /* OWNS: one bit per offset */
    char range[32];
};

static int parse_ip(const char *s, uint32_t *out)
{
    struct in_addr a;

    if (!s || inet_pton(AF_INET, s, &a) != 1)
        return -1;
    *out = ntohl(a.s_addr);
    return 0;
}

static void format_ip(uint32_t ip, char out[KSIM_SVCIP_LEN])
{
    struct in_addr a;

    a.s_addr = htonl(ip);
    if (!inet_ntop(AF_INET, &a, out, KSIM_SVCIP_LEN))
        out[0] = '\0';
}

static int bit(const struct ksim_svcip *a, uint32_t off)
{
    return (a->bits[off / 8] >> (off % 8)) & 1;
}

static void set_bit(struct ksim_svcip *a, uint32_t off, int on)
{
    if (on)
        a->bits[off / 8] |= (uint8_t)(1u << (off % 8));
    else
        a->bits[off / 8] &= (uint8_t) ~(1u << (off % 8));
}

/* The offset of ip when it is a usable address of the range, else -1. */
static int64_t usable_offset(const struct ksim_svcip *a, const char *ip)
{
    uint32_t v, off;

    if (parse_ip(ip, &v) != 0 || v < a->base)
        return -1;
    off = v - a->base;
    if (off == 0 || off >= a->size - 1)
        return -1;
    return off;
}

static enum kerr parse_cidr(const char *cidr, uint32_t *base, long *prefix, struct kerr_info *err)
{
    const char *slash = cidr ? strchr(cidr, '/') : NULL;
    char host[KSIM_SVCIP_LEN];
    char *end = NULL;

    if (!slash || (size_t)(slash - cidr) >= sizeof(host))
        return kerr_set(err, KERR_INVAL, "service IP range \"%s\" is not a CIDR (A.B.C.D/N)",
                        cidr ? cidr : "");
    memcpy(host, cidr, (size_t)(slash - cidr));
    host[slash - cidr] = '\0';
    errno = 0;
    *prefix = strtol(slash + 1, &end, 10);
    if (parse_ip(host, base) != 0 || errno || end == slash + 1 || *end || *prefix < 0 ||
        *prefix > 32)
        return kerr_set(err, KERR_INVAL, "service IP range \"%s\" is not an IPv4 CIDR (A.B.C.D/N)",
                        cidr);
    if (*prefix < MIN_PREFIX)
        return kerr_set(err, KERR_INVAL,
                        "service IP range \"%s\" is too large; the mask must be >= %d", cidr,
                        MIN_PREFIX);
    if (*prefix > MAX_PREFIX)
        return kerr_set(err, KERR_INVAL,
                        "service IP range \"%s\" has no usable address; the mask must be <= %d",
                        cidr, MAX_PREFIX);
    *base &= ~(uint32_t)0 << (32 - *prefix);
    return KERR_OK;
}

enum kerr ksim_svcip_new(const char *cidr, struct ksim_svcip **out, struct kerr_info *err)
{
    struct ksim_svcip *a;
    char net[KSIM_SVCIP_LEN];
    uint32_t base = 0;
    long prefix = 0;
    enum kerr rc;

    *out = NULL;
    rc = parse_cidr(cidr, &base, &prefix, err);
    if (rc != KERR_OK)
        return rc;
    a = calloc(1, sizeof(*a));
    if (!a)
        return kerr_set(err, KERR_NOMEM, "out of memory");
    a->base = base;
    a->size = (uint32_t)1 << (32 - prefix);
    a->bits = calloc(a->size / 8 + 1, 1);
    if (!a->bits) {
        free(a);
        return kerr_set(err, KERR_NOMEM, "out of memory");
    }
    pthread_mutex_init(&a->mu, NULL);
    format_ip(base, net);
    snprintf(a->range, sizeof(a->range), "%s/%ld", net, prefix);
    set_bit(a, 1, 1); /* the kubernetes Service */
    a->used = 1;
    a->next = 2;
    *out = a;
    return KERR_OK;
}

void ksim_svcip_free(struct ksim_svcip *a)
{
    if (!a)
        return;
    pthread_mutex_destroy(&a->mu);
    free(a->bits);
    free(a);
}

const char *ksim_svcip_range(const struct ksim_svcip *a)
{
    return a->range;
}

void ksim_svcip_first(const struct ksim_svcip *a, char out[KSIM_SVCIP_LEN])
{
    format_ip(a->base + 1, out);
}

enum kerr ksim_svcip_alloc(struct ksim_svcip *a, char out[KSIM_SVCIP_LEN], struct kerr_info *err)
{
    uint32_t usable = a->size - 2, off = 1, i;

    out[0] = '\0';
    pthread_mutex_lock(&a->mu);
    if (a->used >= usable) {
        pthread_mutex_unlock(&a->mu);
        return kerr_set(err, KERR_TOOBIG, "range is full");
    }
    for (i = 0; i < usable; i++) {
        off = 1 + (a->next - 1 + i) % usable;
        if (!bit(a, off))
            break;
    }
    set_bit(a, off, 1);
    a->used++;
    a->next = off + 1 >= a->size - 1 ? 1 : off + 1;
    pthread_mutex_unlock(&a->mu);
    format_ip(a->base + off, out);
    return KERR_OK;
}

enum kerr ksim_svcip_reserve(struct ksim_svcip *a, const char *ip, struct kerr_info *err)
{
    int64_t off = usable_offset(a, ip);
    enum kerr rc = KERR_OK;

    if (off < 0)
        return kerr_set(err, KERR_INVAL,
                        "provided IP is not in the valid range. The range of valid IPs is %s",
                        a->range);
    pthread_mutex_lock(&a->mu);
    if (bit(a, (uint32_t)off)) {
        rc = kerr_set(err, KERR_EXISTS, "provided IP is already allocated");
    } else {
        set_bit(a, (uint32_t)off, 1);
        a->used++;
    }
    pthread_mutex_unlock(&a->mu);
    return rc;
}

void ksim_svcip_release(struct ksim_svcip *a, const char *ip)
{
    int64_t off = usable_offset(a, ip);

    if (off < 0)
        return;
    pthread_mutex_lock(&a->mu);
    if (bit(a, (uint32_t)off)) {
        set_bit(a, (uint32_t)off, 0);
        a->used--;
    }
    pthread_mutex_unlock(&a->mu);
}

int ksim_svcip_taken(struct ksim_svcip *a, const char *ip)
{
    int64_t off = usable_offset(a, ip);
    int taken;

    if (off < 0)
        return 0;
    pthread_mutex_lock(&a->mu);
    taken = bit(a, (uint32_t)off);
    pthread_mutex_unlock(&a->mu);
    return taken;
}

/* 422 Invalid on spec.clusterIPs of Service obj. */
static int invalid(const cJSON *obj, const char *ip, const char *why, struct ksim_apierr *e)
{
    const char *name = kjson_get_str(obj, "metadata.name");
    char detail[1024];

    snprintf(detail, sizeof(detail), "spec.clusterIPs: Invalid value: []string{\"%.64s\"}: %s", ip,
             why);
    return ksim_apierr_invalid(e, "", "Service", name ? name : "", "spec.clusterIPs",
                               "FieldValueInvalid", detail);
}

/* Set spec.clusterIP and spec.clusterIPs to ip. */
static int set_ips(cJSON *obj, const char *ip, struct ksim_apierr *e)
{
    cJSON *ips = cJSON_CreateArray();

    if (!ips || !cJSON_AddItemToArray(ips, cJSON_CreateString(ip)) ||
        kjson_set_str(obj, "spec.clusterIP", ip, NULL) != KERR_OK) {
        cJSON_Delete(ips);
        return ksim_apierr_internal(e, "out of memory");
    }
    if (kjson_set(obj, "spec.clusterIPs", ips, NULL) != KERR_OK)
        return ksim_apierr_internal(e, "out of memory");
    return 0;
}

/* Take the requested address ip for obj into taken, or answer why not. */
static int take(struct ksim_svcip *a, const cJSON *obj, const char *ip, char taken[KSIM_SVCIP_LEN],
                struct ksim_apierr *e)
{
    struct kerr_info err;
    char why[640];

    if (ksim_svcip_reserve(a, ip, &err) != KERR_OK) {
        snprintf(why, sizeof(why), "failed to allocate IP %.64s: %s", ip, err.msg);
        return invalid(obj, ip, why, e);
    }
    snprintf(taken, KSIM_SVCIP_LEN, "%s", ip);
    return 0;
}

int ksim_svcip_assign(struct ksim_svcip *a, const cJSON *old, cJSON *obj,
                      char taken[KSIM_SVCIP_LEN], struct ksim_apierr *e)
{
    const char *ip = kjson_get_str(obj, "spec.clusterIP");
    const char *old_ip = old ? kjson_get_str(old, "spec.clusterIP") : NULL;
    const char *type = kjson_get_str(obj, "spec.type");
    struct kerr_info err;
    char buf[KSIM_SVCIP_LEN];
    int code;

    taken[0] = '\0';
    if (old_ip && *old_ip) {
        if (ip && *ip && strcmp(ip, old_ip) != 0)
            return invalid(obj, ip, "may not change once set", e);
        return set_ips(obj, old_ip, e);
    }
    if (type && strcmp(type, "ExternalName") == 0)
        return 0;
    if (ip && strcmp(ip, "None") == 0)
        return set_ips(obj, "None", e);
    if (ip && *ip) {
        code = take(a, obj, ip, taken, e);
    } else if (ksim_svcip_alloc(a, buf, &err) != KERR_OK) {
        return ksim_apierr_internal(e, "failed to allocate a serviceIP: %s", err.msg);
    } else {
        snprintf(taken, KSIM_SVCIP_LEN, "%s", buf);
        code = 0;
    }
    if (!code && (code = set_ips(obj, taken, e)) != 0) {
        ksim_svcip_release(a, taken);
        taken[0] = '\0';
    }
    return code;
}

void ksim_svcip_release_service(struct ksim_svcip *a, const cJSON *obj)
{
    if (obj)
        ksim_svcip_release(a, kjson_get_str(obj, "spec.clusterIP"));
}
