/* bigrev - whether a review too large to decide is the guard's business; see bigrev.h. */
#include "webhook/bigrev.h"

#include <stdio.h>
#include <string.h>

#include "webhook/cfgguard.h"
#include "webhook/member.h"

/* The kinds routed to warden-webhook from every namespace, without an objectSelector. */
static int routed_everywhere(const struct review_req *req)
{
    return !*req->sub_resource && (member_is_kind(req, "", "ConfigMap") ||
                                   member_is_kind(req, "", "PersistentVolumeClaim") ||
                                   member_is_kind(req, "apps", "StatefulSet"));
}

/* obj's labels name etcd-druid as its manager, as member_decode reads them. */
static int druid_labelled(const cJSON *obj)
{
    const char *v = lookup_map_get(lookup_meta_map(obj, "labels"), LOOKUP_LABEL_MANAGED_BY);

    return v && strcmp(v, LOOKUP_MANAGED_BY_DRUID) == 0;
}

/* 1 when name is no "<etcd>-config" of an Etcd of ns, as the API server says; else 0, why. */
static int no_etcd_config(const struct lookup *lk, const char *ns, const char *name, char *why,
                          size_t size)
{
    char etcd[LOOKUP_NAME_MAX + 1];
    struct lookup_etcd e;
    struct kerr_info ke;
    enum kerr rc;

    if (!cfgguard_etcd_of(name, etcd, sizeof(etcd)))
        return 1;
    kerr_clear(&ke);
    rc = lk->etcd(lk->ctx, ns, etcd, &e, &ke);
    if (rc == KERR_NOTFOUND && !lookup_unconfirmed(rc, &ke))
        return 1;
    if (rc == KERR_OK)
        snprintf(why, size, "ConfigMap %.253s is the configuration of Etcd %s/%s", name, ns, etcd);
    else
        snprintf(why, size, "Etcd %s/%s could not be read: %.200s", ns, etcd, ke.msg);
    return 0;
}

/* Rule 2 of bigrev.h for the ConfigMap of req. */
static int no_etcds_configmap(const struct lookup *lk, const struct review_req *req, char *why,
                              size_t size)
{
    const char *names[3] = { req->name, lookup_meta_str(req->object, "name"),
                             lookup_meta_str(req->old_object, "name") };
    size_t i;

    if (druid_labelled(req->object) || druid_labelled(req->old_object)) {
        snprintf(why, size, "ConfigMap %s/%s carries %s=%s: a component of an Etcd", req->namespace,
                 req->name, LOOKUP_LABEL_MANAGED_BY, LOOKUP_MANAGED_BY_DRUID);
        return 0;
    }
    for (i = 0; i < 3; i++) {
        if ((i > 0 && strcmp(names[i], names[0]) == 0) ||
            (i > 1 && strcmp(names[i], names[1]) == 0))
            continue; /* that name was looked up already (one name, as a rule) */
        if (!no_etcd_config(lk, req->namespace, names[i], why, size))
            return 0;
    }
    snprintf(why, size,
             "ConfigMap %s/%s is no Etcd's: not labelled as etcd-druid's, and no Etcd of the "
             "namespace has a ConfigMap of its name",
             req->namespace, req->name);
    return 1;
}

int bigrev_unguarded(const struct lookup *lk, const struct review_req *req, char *why, size_t size)
{
    struct kerr_info ke;
    enum kerr rc;
    int any = 1;

    snprintf(why, size, "not a kind routed from every namespace");
    if (!routed_everywhere(req) || !*req->namespace)
        return 0;
    kerr_clear(&ke);
    rc = lk->etcd_any ? lk->etcd_any(lk->ctx, req->namespace, &any, &ke)
                      : kerr_set(&ke, KERR_UNSUPPORTED, "no lookup of a namespace's Etcds");
    if (rc == KERR_OK && !any) {
        snprintf(why, size, "namespace %s holds no Etcd", req->namespace);
        return 1;
    }
    if (!member_is_kind(req, "", "ConfigMap")) {
        if (rc == KERR_OK)
            snprintf(why, size, "namespace %s holds an Etcd", req->namespace);
        else
            snprintf(why, size, "the Etcds of namespace %s could not be listed: %.200s",
                     req->namespace, ke.msg);
        return 0;
    }
    return no_etcds_configmap(lk, req, why, size);
}
