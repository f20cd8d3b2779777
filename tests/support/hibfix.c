/* hibfix - kube-sim, a sidecar stand-in and an Etcd for the hibernation and ops-task tests. */
#include "tests/support/hibfix.h"

#include "controller/core/smember.h"

#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "common/events.h"
#include "common/k8s.h"
#include "common/hibguard.h"
#include "common/kjson.h"
#include "common/log.h"
#include "common/ktime.h"
#include "controller/core/etcdspec.h"
#include "controller/immutability/imt.h"
#include "tests/support/jsonfix.h"

static const struct k8s_resource RES_SVC = { "", "v1", "services", 1 };
static const struct k8s_resource RES_STS = { "apps", "v1", "statefulsets", 1 };
static const struct k8s_resource RES_EV = { "events.k8s.io", "v1", "events", 1 };

#define DEFAULT_PORTS                                                                \
    "[{\"name\":\"client\",\"protocol\":\"TCP\",\"port\":2379,\"targetPort\":2379}," \
    "{\"name\":\"server\",\"protocol\":\"TCP\",\"port\":2380,\"targetPort\":2380},"  \
    "{\"name\":\"backuprestore\",\"protocol\":\"TCP\",\"port\":%d,\"targetPort\":%d}]"

/* ---- the sidecar ---- */

/* The address the client connected to: the Service's clusterIP it was given. */
static void record_ip(struct hibfix_sidecar *s, struct MHD_Connection *conn)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
    struct sockaddr_in a;
    socklen_t len = sizeof(a);
    char ip[INET_ADDRSTRLEN] = "";

    if (ci && getsockname(ci->connect_fd, (struct sockaddr *)&a, &len) == 0)
        inet_ntop(AF_INET, &a.sin_addr, ip, sizeof(ip));
    pthread_mutex_lock(&s->mu);
    snprintf(s->last_ip, sizeof(s->last_ip), "%s", ip);
    pthread_mutex_unlock(&s->mu);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version, const char *data,
                                  size_t *size, void **state)
{
    struct hibfix_sidecar *s = cls;
    const char *final = MHD_lookup_connection_value(conn, MHD_GET_ARGUMENT_KIND, "final");
    struct MHD_Response *resp;
    char body[512];
    int code = 404, full = strcmp(url, "/snapshot/full") == 0;
    long rev, delay;
    enum MHD_Result ret;

    (void)version;
    (void)data;
    if (!*state) { /* first call: headers only */
        *state = s;
        return MHD_YES;
    }
    *size = 0;
    body[0] = '\0';
    if (strcmp(method, "POST") == 0 && (full || strcmp(url, "/snapshot/delta") == 0)) {
        record_ip(s, conn);
        atomic_fetch_add(&s->requests, 1);
        if (final && strcmp(final, "true") == 0)
            atomic_fetch_add(&s->finals, 1);
        if ((delay = atomic_load(&s->delay_ms)) > 0)
            ktime_sleep_ns(delay * 1000000L);
        code = atomic_load(&s->code);
        rev = atomic_fetch_add(&s->revision, 10) + 10;
        if (code == 200)
            snprintf(body, sizeof(body),
                     "{\"kind\":\"%s\",\"snapDir\":\"\",\"snapName\":\"%s-00000000-%08ld-%ld%s\","
                     "\"startRevision\":0,\"lastRevision\":%ld,\"isChunk\":false,\"isFinal\":%s}",
                     full ? "Full" : "Incr", full ? "Full" : "Incr", rev, (long)time(NULL),
                     final ? ".final" : "", rev, final ? "true" : "false");
    }
    resp = MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_COPY);
    if (!resp)
        return MHD_NO;
    ret = MHD_queue_response(conn, (unsigned)code, resp);
    MHD_destroy_response(resp);
    return ret;
}

/* Start s on an ephemeral port of every local address; TLS with cert/key when given. */
static void sidecar_start(struct hibfix_sidecar *s, const char *cert, const char *key)
{
    struct sockaddr_in a = { .sin_family = AF_INET };
    const union MHD_DaemonInfo *di;
    struct MHD_Daemon *d;
    unsigned flags = MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL_INTERNAL_THREAD;

    atomic_store(&s->code, 200);
    pthread_mutex_init(&s->mu, NULL);
    a.sin_addr.s_addr = htonl(INADDR_ANY); /* every clusterIP of HIBFIX_CIDR reaches it */
    if (cert)
        d = MHD_start_daemon(flags | MHD_USE_TLS, 0, NULL, NULL, on_request, s,
                             MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&a, MHD_OPTION_HTTPS_MEM_CERT,
                             cert, MHD_OPTION_HTTPS_MEM_KEY, key, MHD_OPTION_END);
    else
        d = MHD_start_daemon(flags, 0, NULL, NULL, on_request, s, MHD_OPTION_SOCK_ADDR,
                             (struct sockaddr *)&a, MHD_OPTION_END);
    cr_assert_not_null(d, "sidecar stand-in cannot listen");
    di = MHD_get_daemon_info(d, MHD_DAEMON_INFO_BIND_PORT);
    cr_assert(di && di->port > 0);
    s->daemon = d;
    s->port = di->port;
}

static void sidecar_stop(struct hibfix_sidecar *s)
{
    if (!s->daemon)
        return;
    MHD_stop_daemon(s->daemon);
    pthread_mutex_destroy(&s->mu);
    s->daemon = NULL;
}

void hibfix_tls_sidecar(struct hibfix *x, struct hibfix_sidecar *s, const char *cert,
                        const char *key)
{
    (void)x;
    memset(s, 0, sizeof(*s));
    sidecar_start(s, cert, key);
}

void hibfix_sidecar_stop(struct hibfix_sidecar *s)
{
    sidecar_stop(s);
}

/* ---- set-up ---- */

static enum kerr imt_ensure(void *arg, const cJSON *etcd, struct kerr_info *err)
{
    return imt_task_ensure_x(arg, etcd, err);
}

static enum kerr imt_delete(void *arg, const cJSON *etcd, struct kerr_info *err)
{
    return imt_task_delete_x(arg, etcd, err);
}

void hibfix_start(struct hibfix *x)
{
    struct ksim_harness_opts ho = { .sts_delay_ms = -1, .service_cidr = HIBFIX_CIDR };
    struct ev_opts eo = { .reporting_controller = "etcd-warden.io/controller",
                          .reporting_instance = "test",
                          .retry_interval_ms = 100,
                          .spam_qps = -1 };

    memset(x, 0, sizeof(*x));
    cfix_start(&x->f, &ho);
    log_set_level(LOG_ERROR); /* the steps' warnings are what the tests provoke */
    sidecar_start(&x->sc, NULL, NULL);
    cr_assert_eq(ev_new(x->f.c, &eo, &x->ev, NULL), KERR_OK);
    x->f.x.events = x->ev;
    x->hib = (struct hib_env){ .client = x->f.c,
                               .events = x->ev,
                               .plan = { .retries = 3, .backoff_ms = 100, .poll_ms = 100 },
                               .bucket = etcdspec_bucket_state,
                               .imt_ensure = imt_ensure,
                               .imt_delete = imt_delete,
                               .imt_arg = &x->f.x };
    x->ot = (struct otask_env){ .client = x->f.c, .events = x->ev, .requeue_ms = 100 };
}

void hibfix_stop(struct hibfix *x)
{
    ev_free(x->ev);
    sidecar_stop(&x->sc);
    if (x->f.h)
        cfix_stop(&x->f);
    memset(x, 0, sizeof(*x));
}

static void own(cJSON *o, const cJSON *etcd)
{
    cJSON *ref = NULL, *refs = cJSON_CreateArray();

    cr_assert_eq(etcdspec_owner_ref(etcd, &ref, NULL), KERR_OK);
    cJSON_AddItemToArray(refs, ref);
    cr_assert_eq(kjson_set(o, "metadata.ownerReferences", refs, NULL), KERR_OK);
}

static void labels(cJSON *o, const char *name)
{
    const char *m[] = { "metadata", "labels", ETCDSPEC_LABEL_MANAGED_BY, NULL };
    const char *p[] = { "metadata", "labels", ETCDSPEC_LABEL_PART_OF, NULL };

    cr_assert_eq(kjson_setv(o, m, cJSON_CreateString(ETCDSPEC_MANAGED_BY_DRUID), NULL), KERR_OK);
    cr_assert_eq(kjson_setv(o, p, cJSON_CreateString(name), NULL), KERR_OK);
}

static void make_ready(struct hibfix *x, cJSON *etcd)
{
    struct k8s_write_opts wo = { .subresource = "status" };
    cJSON *out = NULL;
    struct kerr_info e;

    cr_assert_eq(kjson_set(etcd, "status",
                           jsonfix_parse("{\"ready\":true,\"replicas\":3,\"conditions\":[{\"type\":"
                                         "\"Ready\",\"status\":\"True\",\"reason\":\"Quorate\"}]}"),
                           NULL),
                 KERR_OK);
    cr_assert_eq(k8s_update(x->f.c, &ETCDSPEC_RES_ETCD, CFIX_NS, NULL, etcd, &wo, &out, &e),
                 KERR_OK, "%s", e.msg);
    cJSON_Delete(out);
}

/* The backuprestore port of the Service ports (JSON text), else def: etcd-druid sets the
 * Service's and the sidecar container's from the one spec.backup.port. */
static int service_backup_port(const char *ports, int def)
{
    cJSON *a = jsonfix_parse(ports), *p;
    int port = def;

    cJSON_ArrayForEach (p, a) {
        const char *n = kjson_get_str(p, "name");
        int64_t v;

        if (n && strcmp(n, "backuprestore") == 0 && kjson_get_int64(p, "port", &v) == KERR_OK)
            port = (int)v;
    }
    cJSON_Delete(a);
    return port;
}

/* The pods <sts>-0..2 of the StatefulSet sts as its controller makes them (its pod template's
 * spec, a volume per claim template on claim <template>-<sts>-<n>), Running at
 * HIBFIX_POD_IP_FMT (the kubelet's report, through /status). */
static void member_pods(struct hibfix *x, const cJSON *sts)
{
    struct k8s_write_opts wo = { .subresource = "status" };
    const char *name = kjson_get_str(sts, "metadata.name");
    const cJSON *vct;
    char text[1024];
    cJSON *o, *p, *spec, *vols;
    int i;

    for (i = 0; i < 3; i++) {
        snprintf(text, sizeof(text),
                 "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s-%d\","
                 "\"labels\":{\"app\":\"etcd\"},\"ownerReferences\":[{\"apiVersion\":\"apps/v1\","
                 "\"kind\":\"StatefulSet\",\"name\":\"%s\",\"uid\":\"%s\",\"controller\":true,"
                 "\"blockOwnerDeletion\":true}]}}",
                 name, i, name, kjson_get_str(sts, "metadata.uid"));
        o = jsonfix_parse(text);
        spec = cJSON_Duplicate(kjson_get(sts, "spec.template.spec"), 1);
        cr_assert_not_null(spec, "StatefulSet %s has a pod template", name);
        vols = cJSON_GetObjectItem(spec, "volumes");
        if (!vols)
            vols = cJSON_AddArrayToObject(spec, "volumes");
        cJSON_ArrayForEach (vct, kjson_get_arr(sts, "spec.volumeClaimTemplates")) {
            const char *t = kjson_get_str(vct, "metadata.name");

            snprintf(text, sizeof(text),
                     "{\"name\":\"%s\",\"persistentVolumeClaim\":{\"claimName\":\"%s-%s-%d\"}}", t,
                     t, name, i);
            cJSON_AddItemToArray(vols, jsonfix_parse(text));
        }
        cJSON_AddItemToObject(o, "spec", spec);
        cJSON_Delete(cfix_create(&x->f, &ETCDSPEC_RES_POD, o));
        cJSON_Delete(o);
        snprintf(text, sizeof(text),
                 "{\"status\":{\"phase\":\"Running\",\"podIP\":\"" HIBFIX_POD_IP_FMT "\"}}", i);
        p = jsonfix_parse(text);
        snprintf(text, sizeof(text), "%s-%d", name, i);
        cr_assert_eq(k8s_patch(x->f.c, &ETCDSPEC_RES_POD, CFIX_NS, text, K8S_PATCH_MERGE, p, &wo,
                               NULL, NULL),
                     KERR_OK, "status of pod %s", text);
        cJSON_Delete(p);
        {
            char why[512] = "";
            cJSON *pod = cfix_get(&x->f, &ETCDSPEC_RES_POD, text);

            cr_assert(smember_is_member(sts, pod, why, sizeof(why)) >= 0, "pod %s: %s", text, why);
            cJSON_Delete(pod);
        }
    }
}

void hibfix_backup_port(struct hibfix *x, const char *name, int port)
{
    char text[512];
    cJSON *p;

    snprintf(text, sizeof(text),
             "[{\"op\":\"replace\",\"path\":\"/spec/template/spec/containers/1/ports/0/"
             "containerPort\",\"value\":%d},{\"op\":\"replace\",\"path\":"
             "\"/spec/template/spec/containers/1/args/1\",\"value\":\"--server-port=%d\"}]",
             port, port);
    p = jsonfix_parse(text);
    cr_assert_eq(k8s_patch(x->f.c, &RES_STS, CFIX_NS, name, K8S_PATCH_JSON, p, NULL, NULL, NULL),
                 KERR_OK);
    cJSON_Delete(p);
}

/* The backup sidecar's store in sts's template as etcd-druid renders it from etcd's
 * spec.backup.store (--storage-provider, --store-prefix, env STORAGE_CONTAINER). */
static void sidecar_store(cJSON *sts, const cJSON *etcd)
{
    const char *prov = kjson_get_str(etcd, "spec.backup.store.provider");
    const char *prefix = kjson_get_str(etcd, "spec.backup.store.prefix");
    const char *bucket = kjson_get_str(etcd, "spec.backup.store.container");
    cJSON *c = cJSON_GetArrayItem((cJSON *)kjson_get(sts, "spec.template.spec.containers"), 1);
    cJSON *args = cJSON_GetObjectItemCaseSensitive(c, "args"), *env, *e;
    char arg[1100];

    if (!prov || !prefix || !bucket || !args)
        return;
    if (strcmp(prov, "aws") == 0 || strcmp(prov, "s3") == 0)
        prov = "S3";
    snprintf(arg, sizeof(arg), "--storage-provider=%s", prov);
    cJSON_AddItemToArray(args, cJSON_CreateString(arg));
    snprintf(arg, sizeof(arg), "--store-prefix=%s", prefix);
    cJSON_AddItemToArray(args, cJSON_CreateString(arg));
    env = cJSON_AddArrayToObject(c, "env");
    e = cJSON_CreateObject();
    cr_assert(env && e);
    cJSON_AddStringToObject(e, "name", "STORAGE_CONTAINER");
    cJSON_AddStringToObject(e, "value", bucket);
    cJSON_AddItemToArray(env, e);
}

cJSON *hibfix_etcd(struct hibfix *x, const char *name, const char *store, const char *ports,
                   int sts)
{
    char text[2048], svc_name[300];
    cJSON *e = cfix_etcd(name, store, "0 */6 * * *"), *etcd, *o, *made;

    etcd = cfix_create(&x->f, &ETCDSPEC_RES_ETCD, e);
    cJSON_Delete(e);
    make_ready(x, etcd);
    snprintf(svc_name, sizeof(svc_name), "%s-client", name);
    if (!ports) {
        snprintf(text, sizeof(text), DEFAULT_PORTS, x->sc.port, x->sc.port);
        ports = text;
    }
    o = jsonfix_parse("{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"spec\":{\"type\":"
                      "\"ClusterIP\"}}");
    cr_assert_eq(kjson_set_str(o, "metadata.name", svc_name, NULL), KERR_OK);
    cr_assert_eq(kjson_set(o, "spec.ports", jsonfix_parse(ports), NULL), KERR_OK);
    labels(o, name);
    own(o, etcd);
    cJSON_Delete(cfix_create(&x->f, &RES_SVC, o));
    cJSON_Delete(o);
    if (sts) {
        snprintf(text, sizeof(text),
                 "{\"apiVersion\":\"apps/v1\",\"kind\":\"StatefulSet\",\"spec\":{"
                 "\"replicas\":3,\"serviceName\":\"p\",\"selector\":{\"matchLabels\":"
                 "{\"app\":\"etcd\"}},\"template\":{\"metadata\":{\"labels\":{\"app\":"
                 "\"etcd\"}},\"spec\":{\"containers\":[{\"name\":\"etcd\",\"image\":"
                 "\"etcd\",\"volumeMounts\":[{\"name\":\"%s\",\"mountPath\":\"/var/etcd/data\"}]},"
                 "{\"name\":\"backup-restore\",\"image\":\"etcdbrctl\",\"args\":[\"server\","
                 "\"--server-port=%d\"],\"ports\":"
                 "[{\"name\":\"server\",\"containerPort\":%d}],\"volumeMounts\":[{\"name\":"
                 "\"%s\",\"mountPath\":\"/var/etcd/data\"}]}]}},\"volumeClaimTemplates\":[{"
                 "\"metadata\":{\"name\":\"%s\"},\"spec\":{\"accessModes\":[\"ReadWriteOnce\"],"
                 "\"resources\":{\"requests\":{\"storage\":\"1Gi\"}}}}]}}",
                 name, service_backup_port(ports, x->sc.port),
                 service_backup_port(ports, x->sc.port), name, name);
        o = jsonfix_parse(text);
        cr_assert_eq(kjson_set_str(o, "metadata.name", name, NULL), KERR_OK);
        sidecar_store(o, etcd);
        labels(o, name);
        own(o, etcd);
        made = cfix_create(&x->f, &RES_STS, o);
        cJSON_Delete(o);
        member_pods(x, made);
        cJSON_Delete(made);
    }
    cJSON_Delete(etcd);
    return hibfix_get_etcd(x, name);
}

void hibfix_annotate(struct hibfix *x, const char *name, const char *key, const char *value)
{
    char cmd[512], *out = NULL;

    if (value)
        snprintf(cmd, sizeof(cmd), "annotate --overwrite etcd %s -n %s %s=%s", name, CFIX_NS, key,
                 value);
    else
        snprintf(cmd, sizeof(cmd), "annotate etcd %s -n %s %s-", name, CFIX_NS, key);
    cr_assert_eq(ksim_harness_kubectl(x->f.h, NULL, cmd, &out), 0, "kubectl %s: %s", cmd,
                 out ? out : "");
    free(out);
}

cJSON *hibfix_get_etcd(struct hibfix *x, const char *name)
{
    return cfix_get(&x->f, &ETCDSPEC_RES_ETCD, name);
}

const char *hibfix_phase(struct hibfix *x, const char *name)
{
    static char phase[64];
    cJSON *e = hibfix_get_etcd(x, name);
    const char *p = e ? etcdspec_annotation(e, HIB_ANN_PHASE) : NULL;

    snprintf(phase, sizeof(phase), "%s", p ? p : "");
    cJSON_Delete(e);
    return phase;
}

void hibfix_druid_task(struct hibfix *x, const char *name, const char *etcd, const char *state,
                       int create)
{
    struct k8s_write_opts wo = { .subresource = "status" };
    cJSON *t, *e, *refs, *ref = NULL, *out = NULL;
    struct kerr_info err;

    if (create) {
        e = hibfix_get_etcd(x, etcd);
        cr_assert_not_null(e);
        t = jsonfix_parse("{\"apiVersion\":\"druid.gardener.cloud/v1alpha1\",\"kind\":"
                          "\"EtcdOpsTask\",\"spec\":{\"config\":{\"onDemandSnapshot\":"
                          "{\"type\":\"full\"}}}}");
        cr_assert_eq(kjson_set_str(t, "metadata.name", name, NULL), KERR_OK);
        cr_assert_eq(kjson_set_str(t, "spec.etcdName", etcd, NULL), KERR_OK);
        cr_assert_eq(etcdspec_owner_ref(e, &ref, NULL), KERR_OK);
        refs = cJSON_CreateArray();
        cJSON_AddItemToArray(refs, ref);
        cr_assert_eq(kjson_set(t, "metadata.ownerReferences", refs, NULL), KERR_OK);
        cJSON_Delete(cfix_create(&x->f, &ETCDSPEC_RES_OPSTASK, t));
        cJSON_Delete(t);
        cJSON_Delete(e);
    }
    if (!state)
        return;
    t = cfix_get(&x->f, &ETCDSPEC_RES_OPSTASK, name);
    cr_assert_not_null(t, "task %s", name);
    cr_assert_eq(kjson_set_str(t, "status.state", state, NULL), KERR_OK);
    cr_assert_eq(k8s_update(x->f.c, &ETCDSPEC_RES_OPSTASK, CFIX_NS, NULL, t, &wo, &out, &err),
                 KERR_OK, "%s", err.msg);
    cJSON_Delete(out);
    cJSON_Delete(t);
}

cJSON *hibfix_tasks(struct hibfix *x)
{
    cJSON *list = NULL, *items;
    struct kerr_info e;

    cr_assert_eq(k8s_list(x->f.c, &ETCDSPEC_RES_OPSTASK, CFIX_NS, NULL, &list, &e), KERR_OK, "%s",
                 e.msg);
    items = cJSON_DetachItemFromObjectCaseSensitive(list, "items");
    cJSON_Delete(list);
    return items ? items : cJSON_CreateArray();
}

/* rc of a step: asserted KERR_OK, or only counted when x->tolerate (API faults on). */
static void step_rc(struct hibfix *x, enum kerr rc, const char *who, const struct kerr_info *e)
{
    if (rc == KERR_OK)
        return;
    cr_assert(x->tolerate, "%s: %s", who, e->msg);
    x->errors++;
}

long hibfix_round(struct hibfix *x, const char *name)
{
    cJSON *etcd = NULL, *list = NULL;
    const cJSON *t;
    struct kerr_info e;
    long requeue = 0, tq = 0;
    enum kerr rc;

    rc = k8s_get(x->f.c, &ETCDSPEC_RES_ETCD, CFIX_NS, name, NULL, &etcd, &e);
    if (rc != KERR_NOTFOUND)
        step_rc(x, rc, "get etcd", &e);
    if (etcd) {
        step_rc(x, hib_step(&x->hib, etcd, &requeue, &e), "hib_step", &e);
        cJSON_Delete(etcd);
    }
    rc = k8s_list(x->f.c, &ETCDSPEC_RES_OPSTASK, CFIX_NS, NULL, &list, &e);
    step_rc(x, rc, "list tasks", &e);
    cJSON_ArrayForEach (t, kjson_get_arr(list, "items")) {
        const char *tn = kjson_get_str(t, "metadata.name");

        if (x->hold_prefix && tn && strncmp(tn, x->hold_prefix, strlen(x->hold_prefix)) == 0)
            continue;
        rc = otask_step(&x->ot, CFIX_NS, kjson_get_str(t, "metadata.name"), &tq, &e);
        step_rc(x, rc, "otask_step", &e);
    }
    cJSON_Delete(list);
    return requeue;
}

int hibfix_drive(struct hibfix *x, const char *name, const char *want, long timeout_ms)
{
    int64_t end = ktime_mono_ms() + timeout_ms;
    long rq;

    while (ktime_mono_ms() < end) {
        rq = hibfix_round(x, name);
        if (strcmp(hibfix_phase(x, name), want) == 0)
            return 1;
        ktime_sleep_ns((rq > 0 && rq < 50 ? rq : 50) * 1000000L);
    }
    return 0;
}

static int task_with_prefix(struct hibfix *x, const char *prefix)
{
    cJSON *items = hibfix_tasks(x);
    const cJSON *t;
    int n = 0;

    cJSON_ArrayForEach (t, items) {
        const char *tn = kjson_get_str(t, "metadata.name");

        n += tn && strncmp(tn, prefix, strlen(prefix)) == 0;
    }
    cJSON_Delete(items);
    return n > 0;
}

int hibfix_await_task(struct hibfix *x, const char *name, const char *prefix, long timeout_ms)
{
    int64_t end = ktime_mono_ms() + timeout_ms;
    long rq;

    while (!task_with_prefix(x, prefix)) {
        if (ktime_mono_ms() >= end)
            return 0;
        rq = hibfix_round(x, name);
        ktime_sleep_ns((rq > 0 && rq < 50 ? rq : 50) * 1000000L);
    }
    return 1;
}

void hibfix_after_cut(struct hibfix *x, const char *name)
{
    cJSON *e = hibfix_get_etcd(x, name);
    time_t cut = 0;

    cr_assert_eq(hibguard_cut_at(e, &cut, NULL), KERR_OK, "Etcd %s has no traffic cut", name);
    cJSON_Delete(e);
    while (time(NULL) <= cut)
        ktime_sleep_ns(20000000L);
}

void hibfix_sts(struct hibfix *x, const char *name, int *spec, int *status)
{
    cJSON *s = cfix_get(&x->f, &RES_STS, name);
    int64_t v;

    *spec = *status = -1;
    if (!s)
        return;
    *spec = kjson_get_int64(s, "spec.replicas", &v) == KERR_OK ? (int)v : 0;
    *status = kjson_get_int64(s, "status.replicas", &v) == KERR_OK ? (int)v : 0;
    cJSON_Delete(s);
}

char *hibfix_ports(struct hibfix *x, const char *svc)
{
    cJSON *s = cfix_get(&x->f, &RES_SVC, svc);
    char *text = NULL;

    if (!s)
        return NULL;
    cr_assert_eq(kjson_print(kjson_get(s, "spec.ports"), &text, NULL, NULL), KERR_OK);
    cJSON_Delete(s);
    return text;
}

int hibfix_events(struct hibfix *x, const char *reason, const char *type)
{
    cJSON *list = NULL;
    const cJSON *ev;
    int n = 0;

    cr_assert_eq(k8s_list(x->f.c, &RES_EV, CFIX_NS, NULL, &list, NULL), KERR_OK);
    cJSON_ArrayForEach (ev, kjson_get_arr(list, "items")) {
        const char *r = kjson_get_str(ev, "reason"), *t = kjson_get_str(ev, "type");
        if (r && strcmp(r, reason) == 0 && (!type || (t && strcmp(t, type) == 0)))
            n++;
    }
    cJSON_Delete(list);
    return n;
}

void hibfix_last_ip(struct hibfix *x, char *out, size_t n)
{
    pthread_mutex_lock(&x->sc.mu);
    snprintf(out, n, "%s", x->sc.last_ip);
    pthread_mutex_unlock(&x->sc.mu);
}

void hibfix_break_glass(struct hibfix *x, const char *name, const char *reason)
{
    char when[KTIME_LEN + 1], value[256];

    cr_assert_eq(ktime_format(time(NULL) + 3600, when), KERR_OK);
    snprintf(value, sizeof(value), "'%s %s'", when, reason); /* one shell word */
    hibfix_annotate(x, name, HIBGUARD_ANN_BREAK_GLASS, value);
}
