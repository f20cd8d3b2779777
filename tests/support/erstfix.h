/*
 * erstfix - the kube-sim fixture of the EtcdRestore tests (test_erst, test_erst_copy): a
 * kube-sim with Secret creds in namespace ns1 and an erst_ctx on it (setup, teardown: the
 * suite's init and fini), the objects the tests create (EtcdRestores, Etcds, EtcdBackups),
 * one erst pass, and the copy Job finished as job_exec.py finishes it. Each test file has its
 * own fx and ctx: Criterion runs each test in a process of its own.
 */
#ifndef TESTS_SUPPORT_ERSTFIX_H
#define TESTS_SUPPORT_ERSTFIX_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "common/kjson.h"
#include "controller/backups/erst.h"
#include "controller/core/etcdspec.h"
#include "tests/support/cfix.h"
#include "tests/support/jsonfix.h"

/* call returns KERR_OK (its message in err otherwise). */
#define OK(call) cr_assert_eq((call), KERR_OK, "%s: %s", #call, err.msg)

static const struct k8s_resource RES_JOB = { "batch", "v1", "jobs", 1 };
static const struct k8s_resource RES_POD = { "", "v1", "pods", 1 };

/* The source store: the live Etcd main's. */
#define SRC_STORE                                                           \
    "{\"provider\":\"aws\",\"container\":\"bkt\",\"prefix\":\"ns1--main\"," \
    "\"secretRef\":{\"name\":\"creds\"}}"

static struct cfix fx;
static struct erst_ctx ctx;

static inline void setup(void)
{
    cJSON *s;

    cfix_start(&fx, NULL);
    memset(&ctx, 0, sizeof(ctx));
    ctx.client = fx.c;
    ctx.job_image = "img:1";
    ctx.backup_wait_ms = ERST_BACKUP_WAIT_MS;
    s = jsonfix_parse("{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":"
                      "\"creds\"},\"data\":{\"accessKeyID\":\"QQ==\"}}");
    cJSON_Delete(cfix_create(&fx, &ETCDSPEC_RES_SECRET, s));
    cJSON_Delete(s);
}

static inline void teardown(void)
{
    cfix_stop(&fx);
}

/* Create the EtcdRestore name with the spec text. */
static inline void restore(const char *name, const char *spec)
{
    char text[4096];
    cJSON *o;

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"EtcdRestore\","
             "\"metadata\":{\"name\":\"%s\"},\"spec\":%s}",
             name, spec);
    o = jsonfix_parse(text);
    cJSON_Delete(cfix_create(&fx, &ERST_RES_RESTORE, o));
    cJSON_Delete(o);
}

/* One pass; its requeue. */
static inline long run(const char *name)
{
    struct kerr_info err = { 0 };
    long requeue = -1;

    OK(erst_run(&ctx, CFIX_NS, name, &requeue, &err));
    return requeue;
}

/* status.<field> of the restore name, "" when absent; in a static buffer. */
static inline const char *st(const char *name, const char *field)
{
    static char out[1024];
    char path[64];
    cJSON *o = cfix_get(&fx, &ERST_RES_RESTORE, name);
    const char *v;

    snprintf(path, sizeof(path), "status.%s", field);
    v = kjson_get_str(o, path);
    snprintf(out, sizeof(out), "%s", v ? v : "");
    cJSON_Delete(o);
    return out;
}

static inline void etcd(const char *name, const char *store)
{
    cJSON *e = cfix_etcd(name, store, NULL);

    cJSON_Delete(cfix_create(&fx, &ETCDSPEC_RES_ETCD, e));
    cJSON_Delete(e);
}

#define STORE_SPEC(target_prefix)                                                           \
    "{\"source\":{\"store\":" SRC_STORE ",\"etcdName\":\"main\"},\"target\":{\"etcdName\":" \
    "\"copy\",\"store\":{\"container\":\"bkt\",\"prefix\":\"" target_prefix "\"}}}"

static inline void assert_refused(const char *name, const char *needle)
{
    cr_assert_eq(run(name), 0);
    cr_assert_str_eq(st(name, "phase"), ERST_PHASE_FAILED, "error: %s", st(name, "error"));
    cr_assert(strstr(st(name, "error"), needle), "error \"%s\" lacks \"%s\"", st(name, "error"),
              needle);
    cr_assert_str_neq(st(name, "completionTime"), "");
    /* terminal: another pass changes nothing */
    cr_assert_eq(run(name), 0);
    cr_assert_str_eq(st(name, "phase"), ERST_PHASE_FAILED);
    cr_assert_null(cfix_get(&fx, &ETCDSPEC_RES_ETCD, "copy"));
}

/* The arguments of the Job's container. */
static inline int job_has_arg(const cJSON *job, const char *want)
{
    const cJSON *a;

    cJSON_ArrayForEach (a, kjson_get(job, "spec.template.spec.containers.0.args")) {
        if (cJSON_IsString(a) && strcmp(a->valuestring, want) == 0)
            return 1;
    }
    return 0;
}

/* What job_exec.py writes for a finished Job: its Pod with the termination message, then the
 * Job's status. */
static inline void finish_job(const char *job, int ok, const char *message)
{
    struct k8s_write_opts wo = { .subresource = "status" };
    struct kerr_info err = { 0 };
    cJSON *j = cfix_get(&fx, &RES_JOB, job), *pod, *patch;
    char text[4096];

    cr_assert_not_null(j, "no Job %s", job);
    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s-abcde\","
             "\"labels\":{\"controller-uid\":\"%s\",\"job-name\":\"%s\"}},\"spec\":{"
             "\"containers\":[{\"name\":\"copy\",\"image\":\"img:1\"}]}}",
             job, kjson_get_str(j, "metadata.uid"), job);
    pod = jsonfix_parse(text);
    cJSON_Delete(cfix_create(&fx, &RES_POD, pod));
    cJSON_Delete(pod);
    patch = cJSON_CreateObject();
    OK(kjson_set_str(patch, "status.phase", ok ? "Succeeded" : "Failed", &err));
    OK(kjson_set(patch, "status.containerStatuses",
                 jsonfix_parse("[{\"name\":\"copy\",\"state\":{\"terminated\":{}}}]"), &err));
    OK(kjson_set_int(patch, "status.containerStatuses.0.state.terminated.exitCode", ok ? 0 : 1,
                     &err));
    OK(kjson_set_str(patch, "status.containerStatuses.0.state.terminated.message", message, &err));
    snprintf(text, sizeof(text), "%s-abcde", job);
    OK(k8s_patch(fx.c, &RES_POD, CFIX_NS, text, K8S_PATCH_MERGE, patch, &wo, NULL, &err));
    cJSON_Delete(patch);
    patch = jsonfix_parse(ok ? "{\"status\":{\"succeeded\":1}}" : "{\"status\":{\"failed\":1}}");
    OK(k8s_patch(fx.c, &RES_JOB, CFIX_NS, job, K8S_PATCH_MERGE, patch, &wo, NULL, &err));
    cJSON_Delete(patch);
    cJSON_Delete(j);
}

static const char SUMMARY[] =
    "{\"snapshots\":[{\"name\":\"Full-00000000-00000010-1700000000.gz\",\"kind\":\"Full\","
    "\"startRevision\":0,\"lastRevision\":10,\"size\":100,\"md5\":"
    "\"d41d8cd98f00b204e9800998ecf8427e\","
    "\"destination\":\"ns1--copy/v2/Full-00000000-00000010-1700000000.gz\"},"
    "{\"name\":\"Incr-00000011-00000020-1700000100.gz\",\"kind\":\"Incr\",\"startRevision\":11,"
    "\"lastRevision\":20,\"size\":5,\"md5\":\"d41d8cd98f00b204e9800998ecf8427e\","
    "\"destination\":\"ns1--copy/v2/Incr-00000011-00000020-1700000100.gz\"}],\"total\":2}";

static inline void backup(const char *name, const char *status)
{
    char text[2048];
    cJSON *o, *b;
    struct kerr_info err = { 0 };
    struct k8s_write_opts wo = { .subresource = "status" };

    snprintf(text, sizeof(text),
             "{\"apiVersion\":\"etcd-warden.io/v1alpha1\",\"kind\":\"EtcdBackup\","
             "\"metadata\":{\"name\":\"%s\"},\"spec\":{\"etcdName\":\"main\",\"destination\":"
             "{\"provider\":\"S3\",\"container\":\"offsite\",\"prefix\":\"backups/main\","
             "\"secretRef\":{\"name\":\"creds\"}}}}",
             name);
    o = jsonfix_parse(text);
    b = cfix_create(&fx, &ERST_RES_BACKUP, o);
    cJSON_Delete(o);
    OK(kjson_set(b, "status", jsonfix_parse(status), &err));
    OK(k8s_update(fx.c, &ERST_RES_BACKUP, CFIX_NS, name, b, &wo, NULL, &err));
    cJSON_Delete(b);
}

#define BACKUP_SPEC(b)                                                                     \
    "{\"source\":{\"backupName\":\"" b "\"},\"target\":{\"etcdName\":\"copy\",\"store\":{" \
    "\"container\":\"bkt\",\"prefix\":\"ns1--copy\"}}}"

#endif
