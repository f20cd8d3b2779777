/*
 * libFuzzer target: controller/core/cwriter, whether a workload or pod of any namespace may
 * write a store (hostile JSON: any tenant who may create a Deployment, Job or Pod writes it),
 * and common/ststore's reading of one container under any name.
 *
 * Input: an object as JSON, judged as each kind (its pod template where that kind has it).
 * Properties checked: it never crashes; the answer is KERR_OK; a hold names the kind it was
 * judged as; a finished pod or Job holds nothing; every container's store reads as OK,
 * KERR_NOTFOUND or KERR_INVAL, with a reason unless OK, and a store read has a known provider.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "common/kjson.h"
#include "common/ststore.h"
#include "controller/core/cwriter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const kind_words[CWRITER_KINDS] = { "StatefulSet", "Deployment", "ReplicaSet",
                                                       "DaemonSet",   "Job",        "CronJob",
                                                       "pod" };

static void containers(const cJSON *spec)
{
    const cJSON *c;
    struct ststore s;
    char why[STSTORE_WHY_MAX];

    cJSON_ArrayForEach (c, kjson_get(spec, "containers")) {
        enum kerr rc;

        (void)ststore_looks_like_sidecar(c);
        rc = ststore_read_container(spec, c, &s, why, sizeof(why));
        if (rc != KERR_OK && rc != KERR_NOTFOUND && rc != KERR_INVAL)
            abort();
        if (rc == KERR_OK ? !bstore_provider_kind(s.provider) : !why[0])
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cJSON *obj = cJSON_ParseWithLength((const char *)data, size);
    struct bstore_claim c;
    char why[CWRITER_WHY_MAX];

    if (bstore_claim_init(&c, "aws", "etcd-bucket", NULL, "a/etcd", NULL) != KERR_OK)
        abort();
    for (int k = 0; k < CWRITER_KINDS; k++) {
        if (cwriter_held_in(obj, (enum cwriter_kind)k, &c, why, sizeof(why)) != KERR_OK)
            abort();
        if (why[0] && !strstr(why, kind_words[k]))
            abort();
    }
    containers(kjson_get(obj, "spec"));
    containers(kjson_get(obj, "spec.template.spec"));
    bstore_claim_release(&c);
    cJSON_Delete(obj);
    return 0;
}
