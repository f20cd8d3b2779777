/*
 * informer_int - what common/informer.c (the thread, the watch, the life
 * cycle) and common/inflist.c (the list, the relist's differences, the
 * handlers and the resync) share: the informer's state and their helpers.
 * Not for other modules.
 */
#ifndef COMMON_INFORMER_INT_H
#define COMMON_INFORMER_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include <cJSON.h>

#include "common/backoff.h"
#include "common/informer.h"

/*
 * The arena a LIST's pages are parsed into (common/jarena): a page of 500 StatefulSets is
 * some 5 MB of cJSON nodes; what does not fit is malloc'd. Freed when the list is done.
 */
#define INF_LIST_ARENA (8u * 1024u * 1024u)

enum state { INF_NEW, INF_RUNNING, INF_STOPPED };

struct inf {
    struct k8s_client *client; /* BORROWED */
    struct inf_opts o;         /* defaults filled in */
    struct store *store;       /* OWNS, or BORROWED when opts.store is set */
    struct inf_handlers *h;
    size_t nh;
    pthread_t thread;
    enum state state;
    atomic_int cancel; /* cancels the watch in flight */

    pthread_mutex_t mu; /* guards what follows, cond waits for it */
    pthread_cond_t cond;
    int stopping;
    atomic_int synced; /* written under mu; read without it (every lookup asks) */
    struct inf_stats st;
    char rv[INF_RV_MAX];

    /* Used by the informer thread only. */
    struct backoff bo; /* also the random source of the watch timeouts */
    long long next_resync_ms;
};

/* 1 once inf_stop was called; arg is the struct inf (also a pager_opts.stopped). */
int inf_stopping(void *arg);

/* Count one more in *counter, a field of inf->st. */
void inf_stat_inc(struct inf *inf, unsigned long *counter);

/* The last resourceVersion seen. */
void inf_set_rv(struct inf *inf, const char *rv);

/* Call every handler's on_add / on_update / on_delete; the objects are BORROWED. */
void inf_call_add(struct inf *inf, const cJSON *obj);
void inf_call_update(struct inf *inf, const cJSON *old_obj, const cJSON *new_obj);
void inf_call_delete(struct inf *inf, const cJSON *obj);

/* Re-deliver every stored object of the informer to on_update(obj, obj); plan the next. */
void inf_resync(struct inf *inf);

/*
 * LIST the resource and replace the informer's objects (its scope of a shared store), call
 * the handlers for the differences, set the resourceVersion and mark the informer synced.
 */
enum kerr inf_list(struct inf *inf);

#endif
