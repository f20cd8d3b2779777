/*
 * libFuzzer target: kube-sim's metadata validation of what clients send
 * (object JSON: name, labels, annotations) and kname's promise checked
 * against it: for any valid DNS-1123 subdomain, every name and label value
 * the controller derives is one kube-apiserver accepts (aborts otherwise).
 * The first byte picks the check.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "controller/core/imtjob.h"
#include "controller/core/kname.h"
#include "tests/kube-sim/validate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char g_core[] = "", g_batch[] = "batch", p_cm[] = "configmaps", k_cm[] = "ConfigMap",
            p_cj[] = "cronjobs", k_cj[] = "CronJob";

static void object(const char *text, size_t len, int cronjob)
{
    struct ksim_rtype rt;
    struct ksim_apierr e;
    cJSON *doc = NULL;
    const char *name;

    if (kjson_parse(text, len, NULL, &doc, NULL, NULL) != KERR_OK)
        return;
    memset(&rt, 0, sizeof(rt));
    rt.group = cronjob ? g_batch : g_core;
    rt.plural = cronjob ? p_cj : p_cm;
    rt.kind = cronjob ? k_cj : k_cm;
    ksim_apierr_clear(&e);
    (void)ksim_validate_meta(&rt, doc, &e);
    name = kjson_get_str(doc, "metadata.name");
    if (name)
        (void)ksim_validate_name(&rt, name, &e);
    cJSON_Delete(doc);
}

static void derived(const char *name)
{
    char why[1024], task[KNAME_SUBDOMAIN_MAX + 1], cj[IMTJOB_CRONJOB_MAX + 1];
    char lab[KNAME_LABEL_MAX + 1];

    if (!ksim_valid_subdomain(name, why, sizeof(why)))
        return;
    if (imtjob_task_name(name, task, sizeof(task)) != KERR_OK ||
        !ksim_valid_subdomain(task, why, sizeof(why)))
        abort();
    imtjob_cronjob_name(task, cj);
    if (!ksim_valid_subdomain(cj, why, sizeof(why)) || strlen(cj) > KSIM_CRONJOB_NAME_MAX)
        abort();
    if (kname_label_value(name, lab) != KERR_OK || !ksim_valid_label_value(lab, why, sizeof(why)))
        abort();
    if (kname_label_value(task, lab) != KERR_OK || !ksim_valid_label_value(lab, why, sizeof(why)))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text;

    if (size < 1 || size > 64 * 1024)
        return 0;
    text = malloc(size);
    if (!text)
        return 0;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    switch (data[0] % 3) {
    case 0:
        object(text, size - 1, 0);
        break;
    case 1:
        object(text, size - 1, 1);
        break;
    default:
        derived(text);
        break;
    }
    free(text);
    return 0;
}
