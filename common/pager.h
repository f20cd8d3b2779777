/*
 * pager - LIST a resource in pages, as client-go's tools/pager, projecting
 * every page as it arrives: the list of an informer, and k8s_list_all of
 * common/k8s.h.
 *
 * Without a resource_version the LIST is a consistent read. Requests of at
 * most limit items follow metadata.continue until the list is complete (a
 * token that does not advance fails the list); a continue token that
 * expired (410) restarts the list once in one piece, without a limit,
 * dropping what was collected. Each item passes through the optional
 * projection before the next page is fetched, so a large list never sits
 * in memory whole. Between pages the optional stopped() callback may cut
 * the list short.
 *
 * Ownership: the client, the resource and the option strings are BORROWED;
 * the items are OWNED by the caller.
 * Thread safety: as the client (common/k8s.h); a call keeps no state.
 */
#ifndef COMMON_PAGER_H
#define COMMON_PAGER_H

#include <stddef.h>

#include <cJSON.h>

#include "common/k8s.h"
#include "common/kerr.h"
#include "common/store.h"

struct pager_opts {
    const char *label_selector;         /* NULL: none */
    const char *field_selector;         /* NULL: none */
    long limit;                         /* items per page; <= 0: one request */
    const char *resource_version;       /* first request only; NULL: consistent read */
    const char *resource_version_match; /* first request only; needs resource_version */
    long timeout_seconds;               /* server-side timeoutSeconds of each request; 0: unset */
    store_project_fn project;           /* NULL: items whole; an error fails the list */
    void *project_ctx;                  /* BORROWED, passed to project */
    int (*stopped)(void *arg);          /* optional, asked between pages: non-zero stops */
    void *stopped_arg;                  /* BORROWED, passed to stopped */
    /*
     * With project: parse each page into the calling thread's arena (common/jarena; make it
     * large enough with jarena_thread_reserve), as only the projections are kept. Ignored
     * without project.
     */
    int arena;
};

/*
 * LIST res in ns (NULL: all namespaces). On KERR_OK *items OWNS a cJSON
 * array of the (projected) items and rv (rv_n bytes) holds the list's
 * resourceVersion ("" when the answer had none). KERR_CANCELLED when
 * stopped() asked to stop, the API error of a request (KERR_GONE when a
 * restarted list expires again), KERR_PARSE when a continue token comes
 * back unchanged, the projection's error, KERR_NOMEM.
 */
enum kerr pager_list(struct k8s_client *c, const struct k8s_resource *res, const char *ns,
                     const struct pager_opts *o, cJSON **items, char *rv, size_t rv_n,
                     struct kerr_info *err);

/*
 * As pager_list, but on KERR_OK *out OWNS one List object: the first page's
 * (kind, apiVersion, metadata without continue and remainingItemCount)
 * whose "items" holds every (projected) item and whose
 * metadata.resourceVersion is the last page's.
 */
enum kerr pager_list_object(struct k8s_client *c, const struct k8s_resource *res, const char *ns,
                            const struct pager_opts *o, cJSON **out, struct kerr_info *err);

#endif
