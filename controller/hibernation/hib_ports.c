/*
 * hib_ports - the pure Service edits of hibernation (see hib.h): the client
 * and server ports cut and remembered in etcd-warden.io/removed-ports, put
 * back on wake-up, and the state of the Service for the decision.
 */
#include <stdlib.h>
#include <string.h>

#include "common/kjson.h"
#include "controller/core/etcdspec.h"
#include "controller/hibernation/hib.h"

#define PORT_CLIENT "client"
#define PORT_SERVER "server"
#define PORT_BACKUP "backuprestore"

static const char *port_name(const cJSON *p)
{
    return kjson_get_str(p, "name");
}

static int is_cut_port(const cJSON *p)
{
    const char *n = port_name(p);
    return n && (strcmp(n, PORT_CLIENT) == 0 || strcmp(n, PORT_SERVER) == 0);
}

static int has_port(const cJSON *ports, const char *name)
{
    const cJSON *p;

    cJSON_ArrayForEach (p, ports) {
        if (port_name(p) && strcmp(port_name(p), name) == 0)
            return 1;
    }
    return 0;
}

/* The remembered ports of svc: 1 and *out OWNS the array, 0 none, -1 malformed. */
static int remembered_ports(const cJSON *svc, cJSON **out)
{
    const char *text = etcdspec_annotation(svc, HIB_ANN_REMOVED_PORTS);
    cJSON *arr = NULL;
    const cJSON *p;

    *out = NULL;
    if (!text)
        return 0;
    if (kjson_parse(text, strlen(text), NULL, &arr, NULL, NULL) != KERR_OK)
        return -1;
    if (!cJSON_IsArray(arr))
        goto bad;
    cJSON_ArrayForEach (p, arr) {
        if (!cJSON_IsObject(p) || !port_name(p))
            goto bad;
    }
    *out = arr;
    return 1;
bad:
    cJSON_Delete(arr);
    return -1;
}

enum hibplan_svc hib_svc_state(const cJSON *svc, int *remembered)
{
    const cJSON *ports = kjson_get_arr(svc, "spec.ports");
    cJSON *mem = NULL;
    int rem, open;

    *remembered = 0;
    if (!svc)
        return HIBPLAN_SVC_MISSING;
    rem = remembered_ports(svc, &mem);
    cJSON_Delete(mem);
    if (rem < 0)
        return HIBPLAN_SVC_BAD;
    *remembered = rem;
    open = has_port(ports, PORT_CLIENT) || has_port(ports, PORT_SERVER);
    if (open)
        return has_port(ports, PORT_BACKUP) ? HIBPLAN_SVC_OPEN : HIBPLAN_SVC_BAD;
    return rem ? HIBPLAN_SVC_CUT : HIBPLAN_SVC_BAD;
}

static enum kerr set_annotation(cJSON *obj, const char *key, const char *value,
                                struct kerr_info *err)
{
    const char *segs[] = { "metadata", "annotations", key, NULL };

    if (!value) {
        kjson_deletev(obj, segs);
        return KERR_OK;
    }
    return kjson_setv(obj, segs, cJSON_CreateString(value), err);
}

enum kerr hib_ports_cut(const cJSON *svc, cJSON **out, struct kerr_info *err)
{
    cJSON *copy = NULL, *ports, *removed = NULL, *p, *next;
    char *text = NULL;
    int remembered = 0;
    enum kerr rc;

    *out = NULL;
    if (hib_svc_state(svc, &remembered) != HIBPLAN_SVC_OPEN)
        return kerr_set(err, KERR_INVAL,
                        "Service has no client/server port to cut or no backuprestore port");
    rc = kerr_set(err, KERR_NOMEM, "out of memory");
    if (!(copy = cJSON_Duplicate(svc, 1)) || !(removed = cJSON_CreateArray()))
        goto out;
    ports = (cJSON *)kjson_get_arr(copy, "spec.ports");
    for (p = ports ? ports->child : NULL; p; p = next) {
        next = p->next;
        if (is_cut_port(p))
            cJSON_AddItemToArray(removed, cJSON_DetachItemViaPointer(ports, p));
    }
    /* Ports cut again after a wake-up that never completed: the first memory stays. */
    if (!remembered) {
        rc = kjson_print(removed, &text, NULL, err);
        if (rc != KERR_OK || (rc = set_annotation(copy, HIB_ANN_REMOVED_PORTS, text, err)))
            goto out;
    }
    *out = copy;
    copy = NULL;
    rc = KERR_OK;
out:
    free(text);
    cJSON_Delete(removed);
    cJSON_Delete(copy);
    return rc;
}

enum kerr hib_ports_restore(const cJSON *svc, cJSON **out, struct kerr_info *err)
{
    cJSON *copy = NULL, *mem = NULL, *ports, *p, *fresh = NULL;
    enum kerr rc;

    *out = NULL;
    if (remembered_ports(svc, &mem) <= 0)
        return kerr_set(err, KERR_PARSE, "annotation %s is missing or not a JSON array of ports",
                        HIB_ANN_REMOVED_PORTS);
    rc = kerr_set(err, KERR_NOMEM, "out of memory");
    if (!(copy = cJSON_Duplicate(svc, 1)) || !(fresh = cJSON_CreateArray()))
        goto out;
    ports = (cJSON *)kjson_get_arr(copy, "spec.ports");
    cJSON_ArrayForEach (p, mem) {
        if (!has_port(ports, port_name(p)) && !cJSON_AddItemToArray(fresh, cJSON_Duplicate(p, 1)))
            goto out;
    }
    while (ports && ports->child)
        cJSON_AddItemToArray(fresh, cJSON_DetachItemViaPointer(ports, ports->child));
    if ((rc = kjson_set(copy, "spec.ports", fresh, err)) != KERR_OK) {
        fresh = NULL; /* kjson_set takes it even on failure */
        goto out;
    }
    fresh = NULL;
    set_annotation(copy, HIB_ANN_REMOVED_PORTS, NULL, NULL);
    *out = copy;
    copy = NULL;
out:
    cJSON_Delete(fresh);
    cJSON_Delete(mem);
    cJSON_Delete(copy);
    return rc;
}
