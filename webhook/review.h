/*
 * review - AdmissionReview decoding and encoding (admission.k8s.io v1 and v1beta1).
 *
 * review_req_decode parses the body of a POST into a struct review_req whose
 * string fields point into the parsed tree (BORROWED from the request; valid
 * until review_req_release). A body that is not an AdmissionReview gives
 * KERR_PARSE with a message for a 400 answer, and so does one in which a
 * string the decision reads decodes to text with a NUL (C strings would
 * stop there). The tree is parsed with common/jarena: it is read-only, and
 * review_req_release must run on the thread that decoded it.
 * review_req_decode_sel is the server's decoder: the same answers, but only
 * what the decision of one webhook reads is parsed into the tree
 * (webhook/jscan validates and skips the rest in the same pass).
 *
 * A struct review_resp is the answer being built: review_allow / review_deny
 * / review_errored produce exactly what controller-runtime's
 * admission.Allowed / Denied / Errored produce (status code 200 / 403 with
 * reason "Forbidden" / the given code), review_warn appends a warning and
 * review_set_patch attaches a JSON Patch. review_encode renders the
 * AdmissionReview that echoes the request's apiVersion, kind and uid.
 *
 * Pure functions: no I/O, no globals. Thread safety: a struct belongs to one
 * thread at a time; different structs may be used concurrently.
 */
#ifndef WEBHOOK_REVIEW_H
#define WEBHOOK_REVIEW_H

#include <stddef.h>

#include <cJSON.h>

#include "common/kerr.h"
#include "webhook/jscan.h"

#define REVIEW_API_V1      "admission.k8s.io/v1"
#define REVIEW_API_V1BETA1 "admission.k8s.io/v1beta1"

/* Upper bound of a message or warning text built by this module (bytes). */
#define REVIEW_MAX_TEXT (64u * 1024u * 1024u)

/*
 * Most memory the parsed tree of one review may take (common/jarena's
 * budget; the decoders answer KERR_TOOBIG past it). A review of an Etcd or
 * of a component parses into some tens of KiB; a hostile one of many small
 * values would take some 30 times its size.
 */
#define REVIEW_PARSE_BUDGET (4u * 1024u * 1024u)

/* Largest number of warnings one response carries; further ones are dropped. */
#define REVIEW_MAX_WARNINGS 8

enum review_op {
    REVIEW_OP_OTHER = 0, /* an operation this code does not know (kept in operation) */
    REVIEW_OP_CREATE,
    REVIEW_OP_UPDATE,
    REVIEW_OP_DELETE,
    REVIEW_OP_CONNECT,
};

/*
 * A decoded AdmissionRequest. Every const char * is "" when the field is
 * absent (never NULL after a successful decode) and is BORROWED from root.
 * object / old_object are NULL when absent or JSON null.
 */
struct review_req {
    cJSON *root;             /* OWNS: the whole parsed body */
    const char *api_version; /* REVIEW_API_V1 or REVIEW_API_V1BETA1 (static) */
    const char *uid;
    const char *kind_group, *kind_version, *kind_kind;
    const char *res_group, *res_version, *res_resource;
    const char *sub_resource;
    const char *name;
    const char *namespace;
    const char *operation; /* as sent, e.g. "UPDATE" */
    enum review_op op;
    const char *username;
    const cJSON *object;     /* BORROWED or NULL */
    const cJSON *old_object; /* BORROWED or NULL */
    int dry_run;
    /*
     * A DELETE that orphans the dependents: options.propagationPolicy
     * "Orphan", or the deprecated options.orphanDependents true (read
     * leniently: options of another shape read as no options).
     */
    int orphan;
};

/* An answer being built. Strings are OWNED (malloc'd) and freed by review_resp_release. */
struct review_resp {
    int allowed;
    int code;           /* status.code */
    const char *reason; /* static text: "", "Forbidden" or "Invalid" */
    char *message;      /* OWNS or NULL: status.message */
    char *details;      /* OWNS or NULL: status.details as JSON text (review_invalid) */
    char *warnings[REVIEW_MAX_WARNINGS];
    size_t n_warnings;
    char *patch; /* OWNS or NULL: a JSON Patch document (text) */
};

/* Empty request (all strings "", no tree). Cannot fail. */
void review_req_init(struct review_req *r);

/* Free the tree and reset to the init state. Safe to call twice. */
void review_req_release(struct review_req *r);

/*
 * Parse body (len bytes, need not be NUL-terminated) as an AdmissionReview.
 * r must be initialised (review_req_init) and empty. On KERR_OK r OWNS the
 * tree. Errors: KERR_PARSE (not JSON, not an AdmissionReview of a known
 * apiVersion, missing request, a field of the wrong type: the message says
 * which), KERR_TOOBIG (the tree would take more than REVIEW_PARSE_BUDGET;
 * enforced once common/jarena is installed), KERR_NOMEM. On error r is
 * left empty.
 */
enum kerr review_req_decode(struct review_req *r, const char *body, size_t len,
                            struct kerr_info *err);

/*
 * What a decision reads of a review, for the selective decoder: the
 * envelope and request fields always (userInfo: its username; options:
 * propagationPolicy and orphanDependents), and of the
 * objects
 *   COMPONENTS  metadata name, namespace, labels, deletionTimestamp, uid,
 *               resourceVersion, generation, ownerReferences, creationTimestamp;
 *               spec.replicas, spec.ordinals,
 *               the names of spec.volumeClaimTemplates, the name,
 *               volumeMounts, env and envFrom of each of
 *               spec.template.spec.containers and spec.template.spec.volumes;
 *   ETCD        the whole metadata and the whole spec;
 *   MUTATE      the whole metadata, and of the object the ownerReferences
 *               of each of spec.volumeClaimTemplates (every element kept,
 *               so indices hold);
 *   ALL         everything.
 */
enum review_need {
    REVIEW_NEED_ALL = 0,
    REVIEW_NEED_COMPONENTS,
    REVIEW_NEED_ETCD,
    REVIEW_NEED_MUTATE,
    REVIEW_NEED_ENVELOPE, /* no object: the answer to a review too large to decide */
    REVIEW_NEED_LABELS,   /* of the objects metadata name, namespace, labels (the same) */
};

/*
 * As review_req_decode, then refuses (KERR_PARSE, a 400 answer) a review in
 * which a string that need reads (a key or a value) decodes to text with a
 * NUL character: every comparison here is of C strings and would stop at
 * it, where Go compares the whole string. review_req_decode is this with
 * REVIEW_NEED_ALL. The full tree is parsed.
 */
enum kerr review_req_decode_tree(struct review_req *r, const char *body, size_t len,
                                 enum review_need need, struct kerr_info *err);

/*
 * The selective decoder: the same answer as review_req_decode_tree for
 * every body (the same errors, word for word, for the same bodies; the
 * same field values; trees that read the same along every path need names),
 * but the body is read once by webhook/jscan and only the parts need names
 * are parsed into a tree; the rest is validated and skipped. object and
 * old_object are then partial: read only what need names.
 */
enum kerr review_req_decode_sel(struct review_req *r, const char *body, size_t len,
                                enum review_need need, struct kerr_info *err);

/* Static name of an operation enum ("CREATE", ...; "" for OTHER). */
const char *review_op_name(enum review_op op);

/* Empty response: not allowed, code 0, no message. Cannot fail. */
void review_resp_init(struct review_resp *r);

/* Free every string and reset to the init state. Safe to call twice. */
void review_resp_release(struct review_resp *r);

/*
 * admission.Allowed(message): allowed, code 200, reason "", message from
 * fmt. Replaces an earlier verdict (warnings and patch are kept).
 * KERR_NOMEM / KERR_TOOBIG on failure.
 */
enum kerr review_allow(struct review_resp *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), warn_unused_result));

/* admission.Denied(message): not allowed, code 403, reason "Forbidden". */
enum kerr review_deny(struct review_resp *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), warn_unused_result));

/*
 * Refused as kube-apiserver refuses an object that fails validation (a CRD's
 * x-kubernetes-validations rule): code 422, reason "Invalid", the message from
 * fmt ("<Kind>.<group> \"<name>\" is invalid: <field>: <detail>") and
 * status.details (BORROWED, copied; a JSON object: name, group, kind, causes),
 * which kubectl prints ("The <Kind> \"<name>\" is invalid: <field>: <detail>").
 * KERR_NOMEM / KERR_TOOBIG on failure.
 */
enum kerr review_invalid(struct review_resp *r, const cJSON *details, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), warn_unused_result));

/* admission.Errored(code, err): not allowed, the given code, no reason. */
enum kerr review_errored(struct review_resp *r, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), warn_unused_result));

/* Append a warning (dropped silently past REVIEW_MAX_WARNINGS). */
enum kerr review_warn(struct review_resp *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), warn_unused_result));

/*
 * Attach the JSON Patch ops (BORROWED; a cJSON array) as the response
 * patch; an empty array clears it. KERR_NOMEM on failure.
 */
enum kerr review_set_patch(struct review_resp *r, const cJSON *ops, struct kerr_info *err);

/*
 * Render the AdmissionReview answering req (BORROWED; NULL when the request
 * could not be decoded: apiVersion v1, uid ""). The response echoes
 * apiVersion, kind and uid; a code of 0 is sent as 200 (controller-runtime's
 * Complete). On KERR_OK *out TAKES a NUL-terminated malloc'd text (free())
 * of *len bytes.
 */
enum kerr review_encode(const struct review_req *req, const struct review_resp *resp, char **out,
                        size_t *len, struct kerr_info *err);

/*
 * Convenience for transport-level failures: an AdmissionReview (v1, or the
 * apiVersion of req when given) with allowed false, code and message.
 */
enum kerr review_encode_error(const struct review_req *req, int code, const char *message,
                              char **out, size_t *len, struct kerr_info *err);

#endif
