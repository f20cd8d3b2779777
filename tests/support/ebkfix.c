/* ebkfix - the EtcdBackup reconcile on an in-process kube-sim; see ebkfix.h. */
#include "tests/support/ebkfix.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/bstore.h"
#include "common/kjson.h"
#include "controller/core/claims.h"
#include "controller/core/etcdspec.h"
#include "tests/support/jsonfix.h"

#define OK(call) cr_assert_eq((call), KERR_OK, "%s: %s", #call, err.msg)

const struct k8s_resource EBKFIX_RES_JOB = { "batch", "v1", "jobs", 1 };
const struct k8s_resource EBKFIX_RES_POD = { "", "v1", "pods", 1 };

const char EBKFIX_SUMMARY[] =
    "{\"snapshots\":[{\"name\":\"Full-00000000-00000010-1700000000.gz\",\"kind\":\"Full\","
    "\"startRevision\":0,\"lastRevision\":10,\"size\":123,\"md5\":"
    "\"0123456789abcdef0123456789abcdef\",\"destination\":\"copies/main/v2/"
    "Full-00000000-00000010-1700000000.gz\"}],\"total\":1,\"error\":\"\"}";

void ebkfix_start(struct ebkfix *x)
{
    *x = (struct ebkfix){ 0 };
    cfix_start(&x->fx, NULL);
    x->env = (struct ebk_env){ .client = x->fx.c, .copy_image = "img:1" };
}

void ebkfix_stop(struct ebkfix *x)
{
    cfix_stop(&x->fx);
}

void ebkfix_create_text(struct ebkfix *x, const struct k8s_resource *res, const char *text)
{
    cJSON *o = jsonfix_parse(text);

    cJSON_Delete(cfix_create(&x->fx, res, o));
    cJSON_Delete(o);
}

void ebkfix_world(struct ebkfix *x, const char *dest_provider)
{
    char text[1024];
    cJSON *e = cfix_etcd("main",
                         "{\"provider\":\"aws\",\"container\":\"bkt\",\"prefix\":"
                         "\"ns1/main\",\"secretRef\":{\"name\":\"etcd-backup\"}}",
                         NULL);

    cJSON_Delete(cfix_create(&x->fx, &ETCDSPEC_RES_ETCD, e));
    cJSON_Delete(e);
    ebkfix_create_text(x, &ETCDSPEC_RES_SECRET,
                       "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":"
                       "{\"name\":\"etcd-backup\"},\"data\":{\"region\":\"eA==\"}}");
    ebkfix_create_text(x, &ETCDSPEC_RES_SECRET,
                       "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":"
                       "{\"name\":\"dest\"},\"data\":{\"region\":\"eA==\"}}");
    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"EtcdBackup\",\"metadata\":"
             "{\"name\":\"b1\"},\"spec\":{\"etcdName\":\"main\",\"destination\":{\"provider\":"
             "\"%s\",\"container\":\"offsite\",\"prefix\":\"copies/main\",\"secretRef\":"
             "{\"name\":\"dest\"}}}}",
             dest_provider);
    ebkfix_create_text(x, &EBK_RES_BACKUP, text);
}

long ebkfix_step(struct ebkfix *x)
{
    struct kerr_info err = { 0 };
    long requeue = 0;

    OK(ebk_step(&x->env, CFIX_NS, "b1", &requeue, &err));
    return requeue;
}

const char *ebkfix_phase(struct ebkfix *x, char *out, size_t n)
{
    cJSON *b = cfix_get(&x->fx, &EBK_RES_BACKUP, "b1");

    snprintf(out, n, "%s", b ? jsonfix_str(b, "status.phase") : "(gone)");
    cJSON_Delete(b);
    return out;
}

void ebkfix_put_status(struct ebkfix *x, const struct k8s_resource *res, const char *name,
                       const char *text)
{
    struct kerr_info err = { 0 };
    cJSON *o = cfix_get(&x->fx, res, name), *st = jsonfix_parse(text);

    cr_assert_not_null(o, "%s %s", res->resource, name);
    cJSON_ReplaceItemInObject(o, "status", st);
    if (!kjson_get(o, "status"))
        cJSON_AddItemToObject(o, "status", st);
    OK(k8s_update(x->fx.c, res, CFIX_NS, name, o,
                  &(struct k8s_write_opts){ .subresource = "status" }, NULL, &err));
    cJSON_Delete(o);
}

cJSON *ebkfix_pod_with(const char *message, int code)
{
    cJSON *p =
        jsonfix_parse("{\"status\":{\"containerStatuses\":[{\"state\":{\"terminated\":{}}}]}}");
    cJSON *t = (cJSON *)kjson_get(p, "status.containerStatuses.0.state.terminated");

    cJSON_AddNumberToObject(t, "exitCode", code);
    if (message)
        cJSON_AddStringToObject(t, "message", message);
    return p;
}

void ebkfix_finish_job(struct ebkfix *x, const char *name, const char *message, int code)
{
    char text[4096], pname[128], *st;
    cJSON *job = cfix_get(&x->fx, &EBKFIX_RES_JOB, name), *pod;

    cr_assert_not_null(job, "Job %s", name);
    snprintf(pname, sizeof(pname), "%s-%d", name, ++x->runs);
    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\","
             "\"labels\":{\"controller-uid\":\"%s\"}},\"spec\":{\"containers\":[{\"name\":"
             "\"copy\",\"image\":\"img:1\"}]}}",
             pname, jsonfix_str(job, "metadata.uid"));
    ebkfix_create_text(x, &EBKFIX_RES_POD, text);
    pod = ebkfix_pod_with(message, code);
    st = cJSON_PrintUnformatted(kjson_get(pod, "status"));
    ebkfix_put_status(x, &EBKFIX_RES_POD, pname, st);
    free(st);
    cJSON_Delete(pod);
    ebkfix_put_status(x, &EBKFIX_RES_JOB, name, code == 0 ? "{\"succeeded\":1}" : "{\"failed\":1}");
    cJSON_Delete(job);
}

void ebkfix_task_succeeded(struct ebkfix *x)
{
    ebkfix_put_status(
        x, &ETCDSPEC_RES_OPSTASK, "b1",
        "{\"state\":\"Succeeded\",\"lastOperation\":{\"type\":\"Execution\",\"state\":"
        "\"Succeeded\",\"description\":\"full snapshot Full-00000000-00000010-1700000000.gz "
        "taken (last revision 10)\",\"lastTransitionTime\":\"2026-01-01T00:00:00Z\"}}");
}

void ebkfix_copy_entry_name(char out[KNAME_SUBDOMAIN_MAX + 1])
{
    struct kerr_info err = { 0 };
    struct bstore_claim c;

    OK(bstore_claim_init(&c, "S3", "offsite", NULL, "copies/main", &err));
    OK(claims_entry_name(&c, out));
    bstore_claim_release(&c);
}
