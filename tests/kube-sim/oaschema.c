#include "tests/kube-sim/oaschema.h"

#include <stdio.h>
#include <string.h>

#define META "io.k8s.apimachinery.pkg.apis.meta.v1."

/* kube-apiserver's descriptions of the type and object metadata every kind has. */
static const char api_version_desc[] =
    "APIVersion defines the versioned schema of this representation of an object. Servers should "
    "convert recognized schemas to the latest internal value, and may reject unrecognized values. "
    "More info: https://git.k8s.io/community/contributors/devel/sig-architecture/"
    "api-conventions.md#resources";
static const char kind_desc[] =
    "Kind is a string value representing the REST resource this object represents. Servers may "
    "infer this from the endpoint the client submits requests to. Cannot be updated. In "
    "CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/"
    "api-conventions.md#types-kinds";
static const char metadata_desc[] =
    "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/"
    "sig-architecture/api-conventions.md#metadata";

/* The shared definitions, as JSON (our wording of what each field means). */
static const char meta_text[] =
    "{\"" META "Time\":{\"description\":\"A point in time, RFC 3339 in UTC with second precision."
    "\",\"type\":\"string\",\"format\":\"date-time\"},"
    "\"" META "FieldsV1\":{\"description\":\"The set of fields a manager owns, in the "
    "FieldsV1 format of server-side apply.\",\"type\":\"object\"},"
    "\"" META "OwnerReference\":{\"description\":\"An object this object depends on; the owner "
    "must be in the same namespace or cluster-scoped.\",\"type\":\"object\",\"required\":"
    "[\"apiVersion\",\"kind\",\"name\",\"uid\"],\"properties\":{"
    "\"apiVersion\":{\"description\":\"API version of the owner.\",\"type\":\"string\"},"
    "\"blockOwnerDeletion\":{\"description\":\"If true, and the owner has the foregroundDeletion "
    "finalizer, the owner cannot be removed from the key-value store until this reference is "
    "removed.\",\"type\":\"boolean\"},"
    "\"controller\":{\"description\":\"If true, this reference points to the managing controller; "
    "at most one reference may say so.\",\"type\":\"boolean\"},"
    "\"kind\":{\"description\":\"Kind of the owner.\",\"type\":\"string\"},"
    "\"name\":{\"description\":\"Name of the owner.\",\"type\":\"string\"},"
    "\"uid\":{\"description\":\"UID of the owner.\",\"type\":\"string\"}},"
    "\"x-kubernetes-map-type\":\"atomic\"},"
    "\"" META "ManagedFieldsEntry\":{\"description\":\"The fields one field manager owns, and the "
    "operation that last set them.\",\"type\":\"object\",\"properties\":{"
    "\"apiVersion\":{\"description\":\"The version of the resource the fields are tracked in.\","
    "\"type\":\"string\"},"
    "\"fieldsType\":{\"description\":\"The format of fieldsV1; only FieldsV1.\",\"type\":"
    "\"string\"},"
    "\"fieldsV1\":{\"description\":\"The fields owned.\",\"allOf\":[{\"$ref\":\"" KSIM_OA_REF META
    "FieldsV1\"}]},"
    "\"manager\":{\"description\":\"The name of the field manager (a client's fieldManager).\","
    "\"type\":\"string\"},"
    "\"operation\":{\"description\":\"Apply or Update.\",\"type\":\"string\"},"
    "\"subresource\":{\"description\":\"The subresource the fields were written through, empty "
    "for the main resource.\",\"type\":\"string\"},"
    "\"time\":{\"description\":\"When the fields last "
    "changed.\",\"allOf\":[{\"$ref\":\"" KSIM_OA_REF META "Time\"}]}}},"
    "\"" META "ObjectMeta\":{\"description\":\"Metadata every persisted object has: its name, "
    "namespace, labels and annotations, and what the server maintains (uid, resourceVersion, "
    "generation, timestamps, owners, finalizers, managed fields).\",\"type\":\"object\","
    "\"properties\":{"
    "\"annotations\":{\"description\":\"Non-identifying key-value metadata that tools and "
    "controllers read and write; selectors cannot match them.\",\"type\":\"object\","
    "\"additionalProperties\":{\"type\":\"string\",\"default\":\"\"}},"
    "\"creationTimestamp\":{\"description\":\"When the server created the object. Set by the "
    "server, read-only.\",\"allOf\":[{\"$ref\":\"" KSIM_OA_REF META "Time\"}]},"
    "\"deletionGracePeriodSeconds\":{\"description\":\"Seconds the object may take to terminate "
    "gracefully once deletionTimestamp is set. Read-only.\",\"type\":\"integer\",\"format\":"
    "\"int64\"},"
    "\"deletionTimestamp\":{\"description\":\"When a requested deletion takes effect: set by "
    "the server when the object is deleted while finalizers or a grace period keep it. "
    "Read-only.\",\"allOf\":[{\"$ref\":\"" KSIM_OA_REF META "Time\"}]},"
    "\"finalizers\":{\"description\":\"Keys that must all be removed before the object is "
    "removed from storage; each is removed by the controller it names.\",\"type\":\"array\","
    "\"items\":{\"type\":\"string\",\"default\":\"\"},\"x-kubernetes-list-type\":\"set\"},"
    "\"generateName\":{\"description\":\"A prefix from which the server makes a unique name "
    "when name is empty.\",\"type\":\"string\"},"
    "\"generation\":{\"description\":\"The sequence number of the desired state: the server "
    "increments it on every change of the spec. Read-only.\",\"type\":\"integer\",\"format\":"
    "\"int64\"},"
    "\"labels\":{\"description\":\"Identifying key-value pairs that label selectors match.\","
    "\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\",\"default\":\"\"}},"
    "\"managedFields\":{\"description\":\"Which field manager owns which fields (server-side "
    "apply). Maintained by the server.\",\"type\":\"array\",\"items\":{\"default\":{},"
    "\"allOf\":[{\"$ref\":\"" KSIM_OA_REF META "ManagedFieldsEntry\"}]},"
    "\"x-kubernetes-list-type\":\"atomic\"},"
    "\"name\":{\"description\":\"The object's name, unique in its namespace (in the cluster for "
    "cluster-scoped kinds). Cannot be updated.\",\"type\":\"string\"},"
    "\"namespace\":{\"description\":\"The namespace the object is in; empty for cluster-scoped "
    "kinds. Cannot be updated.\",\"type\":\"string\"},"
    "\"ownerReferences\":{\"description\":\"The objects this object depends on: the garbage "
    "collector deletes it once every owner is gone.\",\"type\":\"array\",\"items\":{"
    "\"default\":{},\"allOf\":[{\"$ref\":\"" KSIM_OA_REF META "OwnerReference\"}]},"
    "\"x-kubernetes-list-map-keys\":[\"uid\"],\"x-kubernetes-list-type\":\"map\","
    "\"x-kubernetes-patch-merge-key\":\"uid\",\"x-kubernetes-patch-strategy\":\"merge\"},"
    "\"resourceVersion\":{\"description\":\"An opaque value the server changes on every write "
    "of the object: optimistic concurrency and watches use it. Read-only.\",\"type\":\"string\"},"
    "\"selfLink\":{\"description\":\"Deprecated; never set.\",\"type\":\"string\"},"
    "\"uid\":{\"description\":\"The object's unique identity, set by the server on creation. "
    "Read-only.\",\"type\":\"string\"}}}}";

/* "etcd-warden.io" -> "io.etcd-warden": the domain's labels in reverse order. */
static void reverse_domain(const char *group, char *out, size_t size)
{
    const char *end = group + strlen(group), *dot;
    size_t n = 0;

    out[0] = '\0';
    while (end > group && n + 1 < size) {
        for (dot = end; dot > group && dot[-1] != '.'; dot--)
            ;
        n += (size_t)snprintf(out + n, size - n, "%s%.*s", n ? "." : "", (int)(end - dot), dot);
        if (n >= size)
            return;
        end = dot > group ? dot - 1 : group;
    }
}

static void kind_name(const struct ksim_rtype *rt, char *name, size_t size)
{
    char rev[256];
    size_t label;

    if (rt->custom) {
        reverse_domain(rt->group, rev, sizeof(rev));
        snprintf(name, size, "%s.%s.%s", rev, rt->version, rt->kind);
    } else if (strcmp(rt->group, "apiextensions.k8s.io") == 0) {
        snprintf(name, size, "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.%s.%s",
                 rt->version, rt->kind);
    } else {
        /* "rbac.authorization.k8s.io" -> "rbac", "" -> "core" */
        label = strcspn(rt->group, ".");
        snprintf(name, size, "io.k8s.api.%.*s.%s.%s", label ? (int)label : 4,
                 label ? rt->group : "core", rt->version, rt->kind);
    }
}

/* Set properties[key] to a fresh string property with description desc. */
static int set_string(cJSON *props, const char *key, const char *desc)
{
    cJSON *p = cJSON_CreateObject();

    if (!p || !cJSON_AddStringToObject(p, "description", desc) ||
        !cJSON_AddStringToObject(p, "type", "string")) {
        cJSON_Delete(p);
        return -1;
    }
    cJSON_DeleteItemFromObjectCaseSensitive(props, key);
    return cJSON_AddItemToObject(props, key, p) ? 0 : (cJSON_Delete(p), -1);
}

/* apiVersion, kind and metadata, as kube-apiserver sets them on every kind's schema. */
static int set_standard(cJSON *schema)
{
    cJSON *props = cJSON_GetObjectItemCaseSensitive(schema, "properties"), *meta, *all, *ref;

    if (!props && !(props = cJSON_AddObjectToObject(schema, "properties")))
        return -1;
    if (set_string(props, "apiVersion", api_version_desc) != 0 ||
        set_string(props, "kind", kind_desc) != 0)
        return -1;
    cJSON_DeleteItemFromObjectCaseSensitive(props, "metadata");
    if (!(meta = cJSON_AddObjectToObject(props, "metadata")) ||
        !cJSON_AddStringToObject(meta, "description", metadata_desc) ||
        !cJSON_AddObjectToObject(meta, "default") ||
        !(all = cJSON_AddArrayToObject(meta, "allOf")) || !(ref = cJSON_CreateObject()) ||
        !cJSON_AddItemToArray(all, ref) ||
        !cJSON_AddStringToObject(ref, "$ref", KSIM_OA_REF META "ObjectMeta"))
        return -1;
    return 0;
}

static int add_gvk(const struct ksim_rtype *rt, cJSON *schema)
{
    cJSON *list = cJSON_AddArrayToObject(schema, "x-kubernetes-group-version-kind"), *gvk;

    if (!list || !(gvk = cJSON_CreateObject()) || !cJSON_AddItemToArray(list, gvk) ||
        !cJSON_AddStringToObject(gvk, "group", rt->group) ||
        !cJSON_AddStringToObject(gvk, "kind", rt->kind) ||
        !cJSON_AddStringToObject(gvk, "version", rt->version))
        return -1;
    return 0;
}

/* A built-in kind: its standard fields only, and a description that says so. */
static cJSON *builtin_schema(const struct ksim_rtype *rt)
{
    char desc[512];
    cJSON *s = cJSON_CreateObject();

    snprintf(desc, sizeof(desc),
             "%s of %s%s%s, a built-in kind. kube-sim publishes its standard fields only "
             "(apiVersion, kind, metadata); the Kubernetes API reference describes the "
             "others: https://kubernetes.io/docs/reference/kubernetes-api/",
             rt->kind, rt->group, *rt->group ? "/" : "", rt->version);
    if (s && (!cJSON_AddStringToObject(s, "description", desc) ||
              !cJSON_AddStringToObject(s, "type", "object"))) {
        cJSON_Delete(s);
        return NULL;
    }
    return s;
}

cJSON *ksim_oaschema_kind(const struct ksim_rtype *rt, char *name, size_t size)
{
    cJSON *s;
    int standard = 1;

    kind_name(rt, name, size);
    if (rt->custom && rt->schema) {
        s = cJSON_Duplicate(rt->schema, 1);
    } else if (rt->custom) {
        /* no schema: kube-apiserver publishes a bare object, without properties */
        s = cJSON_CreateObject();
        standard = 0;
        if (s && !cJSON_AddStringToObject(s, "type", "object")) {
            cJSON_Delete(s);
            s = NULL;
        }
    } else {
        s = builtin_schema(rt);
    }
    if (s && ((standard && set_standard(s) != 0) || add_gvk(rt, s) != 0)) {
        cJSON_Delete(s);
        s = NULL;
    }
    return s;
}

int ksim_oaschema_add_meta(cJSON *schemas)
{
    cJSON *defs = cJSON_Parse(meta_text), *d;

    if (!defs)
        return -1;
    while ((d = defs->child)) {
        cJSON_DetachItemViaPointer(defs, d);
        if (!cJSON_AddItemToObject(schemas, d->string, d)) {
            cJSON_Delete(d);
            cJSON_Delete(defs);
            return -1;
        }
    }
    cJSON_Delete(defs);
    return 0;
}
