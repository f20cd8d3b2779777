/*
 * apierr - API errors as kube-apiserver reports them: a metav1.Status with
 * the HTTP code, the reason and the message wording of k8s.io/apimachinery
 * pkg/api/errors (NewNotFound, NewAlreadyExists, NewConflict, NewInvalid,
 * ...), so that kubectl prints exactly what it prints against a cluster:
 * "Error from server (NotFound): statefulsets.apps "x" not found".
 *
 * Ownership: struct ksim_apierr is a plain value with fixed-size fields;
 * ksim_apierr_to_json returns a tree the caller OWNS.
 * Thread safety: all functions are reentrant.
 */
#ifndef KSIM_APIERR_H
#define KSIM_APIERR_H

#include <cJSON.h>

#include "common/kerr.h"

struct ksim_apierr {
    int code;           /* HTTP status; 0 = no error */
    char reason[64];    /* StatusReason: "NotFound", ... ("" allowed, as webhooks may send) */
    char message[2048]; /* Status.message */
    char name[256];     /* details.name */
    char group[256];    /* details.group */
    char kind[256];     /* details.kind (a resource plural for most errors, a Kind for Invalid) */
    char field[256];    /* details.causes[0].field for Invalid, else "" */
    char cause_reason[64];    /* details.causes[0].reason, e.g. "FieldValueInvalid" */
    char cause_message[1024]; /* details.causes[0].message when it differs from the message */
    int retry_after;          /* details.retryAfterSeconds and the Retry-After header, 0 = none */
    char causes[6144]; /* details.causes as a JSON array when set by ksim_apierr_invalid_list */
};

/* One field error of a field.ErrorList (k8s.io/apimachinery pkg/util/validation/field). */
struct ksim_fielderr {
    char field[256]; /* "spec.deletionPolicy" */
    char reason[32]; /* the cause type: "FieldValueNotSupported", ... */
    char body[768];  /* ErrorBody(): "Unsupported value: \"Keep\": supported values: ..." */
};

/* Reset to "no error". */
void ksim_apierr_clear(struct ksim_apierr *e);

/*
 * Fill e with code, reason and a formatted message (no details). Returns
 * the code so handlers can `return ksim_apierr_set(...)`.
 */
int ksim_apierr_set(struct ksim_apierr *e, int code, const char *reason, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Set details.name / group / kind (NULLs are ""). */
void ksim_apierr_details(struct ksim_apierr *e, const char *name, const char *group,
                         const char *kind);

/* "statefulsets.apps" or "pods": how kube names a resource in messages. */
void ksim_apierr_qualified(const char *group, const char *plural, char *out, size_t size);

/* 404: <res> "<name>" not found. */
int ksim_apierr_not_found(struct ksim_apierr *e, const char *group, const char *plural,
                          const char *name);

/* 409 AlreadyExists: <res> "<name>" already exists. */
int ksim_apierr_exists(struct ksim_apierr *e, const char *group, const char *plural,
                       const char *name);

/* 409 Conflict: Operation cannot be fulfilled on <res> "<name>": <why>. */
int ksim_apierr_conflict(struct ksim_apierr *e, const char *group, const char *plural,
                         const char *name, const char *why);

/*
 * 422 Invalid: <Kind>.<group> "<name>" is invalid: <field>: <detail>.
 * field_detail is "spec.replicas: Invalid value: -1: must be ...";
 * field (the part before ": ") and cause (FieldValueInvalid, ...) go to
 * details.causes.
 */
int ksim_apierr_invalid(struct ksim_apierr *e, const char *group, const char *kind,
                        const char *name, const char *field, const char *cause,
                        const char *field_detail);

/*
 * 422 Invalid from n (>= 1) field errors, as kube-apiserver's NewInvalid:
 * the message "<Kind>.<group> \"<name>\" is invalid: <field>: <body>", or with
 * several distinct errors "... is invalid: [<field>: <body>, <field>: <body>]"
 * (duplicates once), and one details.causes entry {reason, message: body,
 * field} per error. Messages longer than the buffers are cut.
 */
int ksim_apierr_invalid_list(struct ksim_apierr *e, const char *group, const char *kind,
                             const char *name, const struct ksim_fielderr *errs, size_t n);

/* 403 Forbidden: <res> "<name>" is forbidden: <why>. */
int ksim_apierr_forbidden(struct ksim_apierr *e, const char *group, const char *plural,
                          const char *name, const char *why);

/* 400 BadRequest with the message as given. */
int ksim_apierr_bad_request(struct ksim_apierr *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* 500 InternalError: "Internal error occurred: <msg>". */
int ksim_apierr_internal(struct ksim_apierr *e, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The Status object (kind Status, apiVersion v1). On KERR_OK *out OWNS it. */
enum kerr ksim_apierr_to_json(const struct ksim_apierr *e, cJSON **out);

/*
 * Read a Status (BORROWED, e.g. from an admission response) into e, with
 * code defaulting to dflt_code when missing.
 */
void ksim_apierr_from_status(struct ksim_apierr *e, const cJSON *status, int dflt_code);

#endif
