#include "tests/kube-sim/fault.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/ktime.h"

struct ksim_fault {
    pthread_mutex_t mu;
    struct ksim_fault_cfg cfg;
    unsigned seed;
};

enum kerr ksim_fault_new(const struct ksim_fault_cfg *cfg, struct ksim_fault **out,
                         struct kerr_info *err)
{
    struct ksim_fault *f = calloc(1, sizeof(*f));

    *out = NULL;
    if (!f)
        return kerr_set(err, KERR_NOMEM, NULL);
    pthread_mutex_init(&f->mu, NULL);
    if (cfg)
        f->cfg = *cfg;
    f->seed = KSIM_FAULT_SEED; /* the same draws every run: no run differs by its clock */
    *out = f;
    return KERR_OK;
}

void ksim_fault_free(struct ksim_fault *f)
{
    if (!f)
        return;
    pthread_mutex_destroy(&f->mu);
    free(f);
}

void ksim_fault_get(struct ksim_fault *f, struct ksim_fault_cfg *out)
{
    pthread_mutex_lock(&f->mu);
    *out = f->cfg;
    pthread_mutex_unlock(&f->mu);
}

static int matches(const struct ksim_fault_cfg *c, const char *method, const char *path)
{
    char line[2048];

    if (!c->match[0])
        return 1;
    snprintf(line, sizeof(line), "%s %s", method, path);
    return strstr(line, c->match) != NULL;
}

int ksim_fault_before(struct ksim_fault *f, const char *method, const char *path)
{
    struct ksim_fault_cfg c;
    double r;
    int hit;

    pthread_mutex_lock(&f->mu);
    c = f->cfg;
    r = (double)rand_r(&f->seed) / ((double)RAND_MAX + 1.0);
    pthread_mutex_unlock(&f->mu);
    hit = matches(&c, method, path);
    if (hit)
        ktime_sleep_ns(c.latency_ms * KTIME_NS_PER_MS);
    if (!hit)
        return 0;
    if (r < c.error_rate)
        return 500;
    if (r < c.error_rate + c.throttle_rate)
        return 429;
    return 0;
}

long ksim_fault_watch_ms(struct ksim_fault *f, long requested_ms)
{
    long max;

    pthread_mutex_lock(&f->mu);
    max = f->cfg.watch_max_ms;
    pthread_mutex_unlock(&f->mu);
    return max > 0 && max < requested_ms ? max : requested_ms;
}

static int num(const cJSON *doc, const char *key, double lo, double hi, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, key);

    if (!v)
        return 0;
    if (!cJSON_IsNumber(v) || v->valuedouble < lo || v->valuedouble > hi)
        return -1;
    *out = v->valuedouble;
    return 1;
}

static cJSON *to_json(const struct ksim_fault_cfg *c)
{
    cJSON *o = cJSON_CreateObject();

    if (!o || !cJSON_AddNumberToObject(o, "latencyMs", (double)c->latency_ms) ||
        !cJSON_AddNumberToObject(o, "errorRate", c->error_rate) ||
        !cJSON_AddNumberToObject(o, "throttleRate", c->throttle_rate) ||
        !cJSON_AddNumberToObject(o, "watchMaxMs", (double)c->watch_max_ms) ||
        !cJSON_AddStringToObject(o, "match", c->match)) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

enum kerr ksim_fault_configure(struct ksim_fault *f, struct ksim_store *store, const cJSON *doc,
                               cJSON **out, struct kerr_info *err)
{
    struct ksim_fault_cfg c;
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(doc, "match");
    double v;

    if (out)
        *out = NULL;
    if (!cJSON_IsObject(doc))
        return kerr_set(err, KERR_INVAL, "the fault settings must be a JSON object");
    ksim_fault_get(f, &c);
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(doc, "reset")))
        memset(&c, 0, sizeof(c));
    if (num(doc, "latencyMs", 0, 600000, &v) < 0 ||
        num(doc, "errorRate", 0, 1, &c.error_rate) < 0 ||
        num(doc, "throttleRate", 0, 1, &c.throttle_rate) < 0)
        return kerr_set(err, KERR_INVAL, "latencyMs must be 0..600000, rates 0..1");
    if (num(doc, "latencyMs", 0, 600000, &v) > 0)
        c.latency_ms = (long)v;
    if (num(doc, "watchMaxMs", 0, 86400000, &v) < 0)
        return kerr_set(err, KERR_INVAL, "watchMaxMs must be 0..86400000");
    if (num(doc, "watchMaxMs", 0, 86400000, &v) > 0)
        c.watch_max_ms = (long)v;
    if (m && !cJSON_IsString(m))
        return kerr_set(err, KERR_INVAL, "match must be a string");
    if (m)
        snprintf(c.match, sizeof(c.match), "%s", m->valuestring);
    if (c.error_rate + c.throttle_rate > 1)
        return kerr_set(err, KERR_INVAL, "errorRate + throttleRate must not exceed 1");
    pthread_mutex_lock(&f->mu);
    f->cfg = c;
    pthread_mutex_unlock(&f->mu);
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(doc, "expireHistory")))
        ksim_store_expire_history(store);
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(doc, "cutWatches")))
        ksim_store_cut_watches(store);
    if (out && !(*out = to_json(&c)))
        return kerr_set(err, KERR_NOMEM, NULL);
    return KERR_OK;
}
