/*
 * otask_spec - the EtcdOpsTask executor's pure checks (see otask.h): the
 * states, the spec, the admission rules and the time to live.
 */
#include "controller/hibernation/otask.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "common/kobj.h"
#include "common/ktime.h"
#include "controller/core/etcdspec.h"

static const char *const STATE_NAMES[OTASK_STATE_COUNT] = {
    [OTASK_NONE] = "",
    [OTASK_PENDING] = "Pending",
    [OTASK_INPROGRESS] = "InProgress",
    [OTASK_SUCCEEDED] = "Succeeded",
    [OTASK_FAILED] = "Failed",
    [OTASK_REJECTED] = "Rejected",
};

enum otask_state otask_state_parse(const char *s)
{
    if (!s)
        return OTASK_NONE;
    for (int i = OTASK_PENDING; i < OTASK_STATE_COUNT; i++)
        if (strcmp(s, STATE_NAMES[i]) == 0)
            return (enum otask_state)i;
    return OTASK_NONE;
}

const char *otask_state_name(enum otask_state s)
{
    return s >= 0 && s < OTASK_STATE_COUNT ? STATE_NAMES[s] : "";
}

bool otask_finished(enum otask_state s)
{
    return s == OTASK_SUCCEEDED || s == OTASK_FAILED || s == OTASK_REJECTED;
}

static long int_or(const cJSON *o, const char *path, long def)
{
    int64_t v;
    return kjson_get_int64(o, path, &v) == KERR_OK ? (long)v : def;
}

enum kerr otask_spec_read(const cJSON *task, struct otask_spec *out, struct kerr_info *err)
{
    const cJSON *cfg = kjson_get_obj(task, "spec.config");
    const cJSON *snap = kjson_get_obj(cfg, "onDemandSnapshot");
    const char *type = kjson_get_str(snap, "type");
    bool final = false;

    memset(out, 0, sizeof(*out));
    out->etcd_name = kjson_get_str(task, "spec.etcdName");
    out->ttl_s = int_or(task, "spec.ttlSecondsAfterFinished", OTASK_DEFAULT_TTL_S);
    if (out->ttl_s < 1)
        out->ttl_s = OTASK_DEFAULT_TTL_S;
    if (!snap || cJSON_GetArraySize(cfg) != 1)
        return kerr_set(err, KERR_INVAL, "spec.config must hold exactly onDemandSnapshot");
    if (!type || (strcmp(type, "full") != 0 && strcmp(type, "delta") != 0))
        return kerr_set(err, KERR_INVAL, "spec.config.onDemandSnapshot.type must be full or delta");
    out->delta = strcmp(type, "delta") == 0;
    kjson_get_bool(snap, "isFinal", &final);
    out->final = final;
    if (out->delta && out->final)
        return kerr_set(err, KERR_INVAL, "isFinal must be false or omitted when type is delta");
    out->timeout_s = out->delta ? int_or(snap, "timeoutSecondsDelta", OTASK_DEFAULT_DELTA_S)
                                : int_or(snap, "timeoutSecondsFull", OTASK_DEFAULT_FULL_S);
    if (out->timeout_s < 1)
        out->timeout_s = out->delta ? OTASK_DEFAULT_DELTA_S : OTASK_DEFAULT_FULL_S;
    if (!out->etcd_name || !*out->etcd_name)
        return kerr_set(err, KERR_INVAL, "spec.etcdName is not set");
    return KERR_OK;
}

static const char *str_or(const cJSON *o, const char *path)
{
    const char *s = kjson_get_str(o, path);
    return s ? s : "";
}

/* 1 when other blocks task: admitted already, or older (then smaller name). */
static int blocks(const cJSON *task, const cJSON *other)
{
    enum otask_state st = otask_state_parse(kjson_get_str(other, "status.state"));
    int c;

    if (otask_finished(st) || kjson_has(other, "metadata.deletionTimestamp"))
        return 0;
    if (st == OTASK_INPROGRESS)
        return 1;
    c = strcmp(str_or(other, "metadata.creationTimestamp"),
               str_or(task, "metadata.creationTimestamp"));
    if (c != 0)
        return c < 0;
    return strcmp(str_or(other, "metadata.name"), str_or(task, "metadata.name")) < 0;
}

enum kerr otask_check_duplicate(const cJSON *task, const cJSON *items, struct kerr_info *err)
{
    const char *etcd = kjson_get_str(task, "spec.etcdName");
    const char *name = str_or(task, "metadata.name");
    const cJSON *o;

    cJSON_ArrayForEach (o, items) {
        const char *oe = kjson_get_str(o, "spec.etcdName");
        if (!etcd || !oe || strcmp(oe, etcd) != 0 || strcmp(str_or(o, "metadata.name"), name) == 0)
            continue;
        if (blocks(task, o))
            return kerr_set(err, KERR_EXISTS, "another task %s for Etcd %s is not finished",
                            str_or(o, "metadata.name"), etcd);
    }
    return KERR_OK;
}

static int ready(const cJSON *etcd)
{
    const char *s = kjson_get_str(kobj_condition(etcd, "Ready"), "status");

    return s && strcmp(s, "True") == 0;
}

enum kerr otask_check_etcd(const cJSON *etcd, const char **code, struct kerr_info *err)
{
    *code = NULL;
    if (!etcd) {
        *code = "ERR_GET_ETCD";
        return kerr_set(err, KERR_INVAL, "the Etcd does not exist");
    }
    if (!kjson_get_obj(etcd, "spec.backup.store")) {
        *code = "ERR_BACKUP_NOT_ENABLED";
        return kerr_set(err, KERR_INVAL, "backup is not enabled (spec.backup.store is not set)");
    }
    if (!ready(etcd)) {
        *code = "ERR_ETCD_NOT_READY";
        return kerr_set(err, KERR_INVAL, "the Etcd is not ready (condition Ready is not True)");
    }
    return KERR_OK;
}

long otask_ttl_left_ms(const cJSON *task, long ttl_s, time_t now)
{
    struct timespec ts;
    const char *at = kjson_get_str(task, "status.lastTransitionTime");

    if (!at || ktime_parse(at, &ts, NULL) != KERR_OK)
        return 0;
    return ((long)ts.tv_sec + ttl_s - (long)now) * 1000L;
}
