/*
 * libFuzzer target: a review too large to decide, as warden-webhook reads it (webhook/bigrev):
 * any input decoded with the envelope-and-labels schema (REVIEW_NEED_LABELS) and with the
 * envelope alone, then judged by bigrev_unguarded against a namespace holding one Etcd
 * (etcd-main of shoot) and one without. Checked against its promises (aborts otherwise): a
 * review of the Etcd's own ConfigMap etcd-main-config in shoot is never proven unguarded, and
 * a review of any kind but ConfigMap, PVC or StatefulSet never is.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "common/log.h"
#include "webhook/bigrev.h"
#include "webhook/lookup.h"
#include "webhook/review.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int routed(const char *kind)
{
    return strcmp(kind, "ConfigMap") == 0 || strcmp(kind, "PersistentVolumeClaim") == 0 ||
           strcmp(kind, "StatefulSet") == 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static cJSON *etcds;
    struct lookup_mem mem;
    struct lookup lk;
    struct review_req req;
    char why[512];
    int ok;

    if (!etcds) {
        log_set_level(LOG_ERROR);
        etcds = cJSON_Parse("[{\"metadata\":{\"namespace\":\"shoot\",\"name\":\"etcd-main\","
                            "\"uid\":\"u1\"},\"spec\":{\"replicas\":3}}]");
        if (!etcds)
            abort();
    }
    memset(&mem, 0, sizeof(mem));
    mem.etcds = etcds;
    lookup_mem_bind(&mem, &lk);
    for (int need = REVIEW_NEED_ENVELOPE; need <= REVIEW_NEED_LABELS; need++) {
        review_req_init(&req);
        if (review_req_decode_sel(&req, (const char *)data, size, (enum review_need)need, NULL) ==
            KERR_OK) {
            ok = bigrev_unguarded(&lk, &req, why, sizeof(why));
            if (ok && !routed(req.kind_kind))
                abort();
            if (ok && strcmp(req.kind_kind, "ConfigMap") == 0 &&
                strcmp(req.namespace, "shoot") == 0 && strcmp(req.name, "etcd-main-config") == 0)
                abort();
        }
        review_req_release(&req);
    }
    return 0;
}
