/*
 * write - POST, PUT and PATCH as kube-apiserver's generic registry runs
 * them: decoding and URL checks, namespace existence, generateName,
 * mutating admission, BeforeCreate/BeforeUpdate semantics (obj module),
 * validation, validating admission, dryRun, optimistic concurrency (409 on
 * a stale resourceVersion; PATCH and unconditional updates retry on a
 * concurrent change like GuaranteedUpdate), no-op updates that write
 * nothing, the status and scale subresources, objects that go away when an
 * update removes their last finalizer while they are being deleted, and the
 * side effects of writing CRDs (their resources are served at once).
 *
 * The functions taking a struct ksim_write_ctx are also what kube-sim's own
 * controllers call, with their service-account identity, so their writes
 * pass through admission like kube-controller-manager's do.
 *
 * Ownership: objects passed as cJSON * are TAKEN unless marked BORROWED;
 * *out results are OWNED by the caller. Thread safety: reentrant.
 */
#ifndef KSIM_WRITE_H
#define KSIM_WRITE_H

#include <cJSON.h>

#include "tests/kube-sim/api.h"
#include "tests/kube-sim/patch.h"

struct ksim_write_ctx {
    struct ksim_api *api;
    const struct ksim_rtype *rt;
    const char *ns;   /* "" for cluster scope */
    const char *name; /* "" for POST */
    const char *sub;  /* "", "status", "scale" */
    const struct ksim_user *user;
    int dry_run;
    const char *field_manager; /* or NULL */
    struct ksim_resp *resp;    /* receives Warning texts; may be NULL */
};

/*
 * Create obj (TAKEN). Returns 201 and *out (the stored object), or the error
 * code with e filled.
 */
int ksim_write_create(const struct ksim_write_ctx *c, cJSON *obj, cJSON **out,
                      struct ksim_apierr *e);

/* Replace the object (PUT; obj TAKEN). 200 and *out, or the error code. */
int ksim_write_update(const struct ksim_write_ctx *c, cJSON *obj, cJSON **out,
                      struct ksim_apierr *e);

/*
 * PATCH with a parsed patch (BORROWED). An apply patch of a missing object
 * creates it (201). force is the apply ?force flag. 200/201 and *out, or
 * the error code.
 */
int ksim_write_patch(const struct ksim_write_ctx *c, enum ksim_patch_type type, const cJSON *patch,
                     int force, cJSON **out, struct ksim_apierr *e);

/*
 * Change the live object with fn (called on a private copy, possibly more
 * than once when a concurrent write intervenes): fn returns 0 to write the
 * copy, 1 to leave the object alone, or an HTTP error code with e filled.
 * The write goes through admission as an UPDATE. 200 and *out (may be
 * NULL), or the error code.
 */
int ksim_write_modify(const struct ksim_write_ctx *c,
                      int (*fn)(cJSON *obj, void *arg, struct ksim_apierr *e), void *arg,
                      cJSON **out, struct ksim_apierr *e);

/* ---- building blocks shared with the delete and scale paths ---- */

struct ksim_admit_attrs;

/* The options object admission sees: {"kind":kind,"apiVersion":"meta.k8s.io/v1",...}. OWNS. */
cJSON *ksim_write_options(const struct ksim_write_ctx *c, const char *kind);

/* Fill admission attributes for c (pointers BORROWED from c, old and options). */
void ksim_write_attrs(const struct ksim_write_ctx *c, const char *operation, const cJSON *old,
                      const cJSON *options, struct ksim_admit_attrs *a);

/*
 * Admit, prepare, validate and store next (TAKEN) as the new state of cur
 * (BORROWED, read from the store). *retry is set when the store changed
 * underneath (the caller may re-read and try again). 200 and *out, or the
 * error code with e filled.
 */
int ksim_write_commit(const struct ksim_write_ctx *c, const cJSON *cur, cJSON *next, cJSON **out,
                      int *retry, struct ksim_apierr *e);

/*
 * Store next (TAKEN, in the API form) over cur (BORROWED) if cur's
 * resourceVersion is still the stored one: converted to the stored form,
 * and on KERR_OK *out OWNS what was stored, in the API form. KERR_CONFLICT,
 * KERR_NOTFOUND or KERR_NOMEM otherwise, with err filled. No admission.
 */
enum kerr ksim_write_store(const struct ksim_write_ctx *c, const cJSON *cur, cJSON *next,
                           cJSON **out, struct kerr_info *err);

/* The stored object for c (404 in e when absent). */
int ksim_write_get(const struct ksim_write_ctx *c, cJSON **out, struct ksim_apierr *e);

/* Decode a request body as a JSON object. 0 and *out OWNS it, or 400 in e. */
int ksim_write_decode(const char *body, size_t len, cJSON **out, struct ksim_apierr *e);

/* dryRun=All? 0 or 1; 400 in e for another value. */
int ksim_write_dry_run(const struct ksim_req *req, int *dry_run, struct ksim_apierr *e);

/*
 * The dryRun of DeleteOptions (options BORROWED, NULL: none), where kubectl sends it for a
 * DELETE (not in the query): ["All"] sets *dry_run to 1, absent or [] leaves it; 422 in e for
 * another value, as kube-apiserver answers.
 */
int ksim_write_options_dry_run(const cJSON *options, int *dry_run, struct ksim_apierr *e);

#endif
