/*
 * read - GET and LIST: single objects, the status and scale subresources,
 * and collections with labelSelector, fieldSelector, limit/continue and
 * resourceVersion semantics, served as JSON or as a meta.k8s.io/v1 Table.
 * A GET with ?watch=1 is handed to the watch module.
 *
 * Continue tokens are opaque (base64url of {"v":"meta.k8s.io/v1","rv":N,
 * "start":KEY}); pages after the first are read from the current state
 * (kube-sim keeps no MVCC snapshots) but report the first page's
 * resourceVersion, and expire with 410 once that resourceVersion leaves the
 * watch history, as kube-apiserver's do after compaction.
 *
 * Ownership: BORROWED arguments; results go into the response.
 * Thread safety: reentrant.
 */
#ifndef KSIM_READ_H
#define KSIM_READ_H

#include "tests/kube-sim/api.h"
#include "tests/kube-sim/fsel.h"
#include "tests/kube-sim/sel.h"

/* Serve a GET on tgt (object, subresource, collection or watch). */
void ksim_read_handle(struct ksim_api *api, const struct ksim_req *req,
                      const struct ksim_target *tgt, struct ksim_resp *resp);

/* Request filters: label and field selectors of a list or watch. */
struct ksim_read_filter {
    struct ksim_sel *labels;  /* OWNS or NULL */
    struct ksim_fsel *fields; /* OWNS or NULL */
};

/*
 * Parse ?labelSelector= and ?fieldSelector= (checking the field names rt
 * supports: "field label not supported: X"). 0, or 400 in e.
 */
int ksim_read_filter_init(struct ksim_read_filter *f, const struct ksim_rtype *rt,
                          const struct ksim_req *req, struct ksim_apierr *e);

/* Does obj pass both selectors? */
int ksim_read_filter_match(const struct ksim_read_filter *f, const cJSON *obj);

void ksim_read_filter_release(struct ksim_read_filter *f);

#endif
