/* snapfetch - pieces of a chain fetched ahead in parallel; see snapfetch.h. */
#include "controller/snapshot/snapfetch.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

struct piece {
    size_t idx;
    int64_t off;
    size_t len;
};

struct slot {
    unsigned char *buf; /* OWNS: piece bytes, allocated by the first fetcher to fill it */
    size_t ready;       /* piece number + 1 held and read, 0: none */
    enum kerr rc;
    struct kerr_info err;
};

struct fetcher {
    struct snapfetch *f;
    struct ostore *store; /* BORROWED */
    pthread_t thread;
    bool started;
};

struct snapfetch {
    const struct snapfetch_item *items; /* BORROWED */
    struct piece *pieces;               /* OWNS */
    size_t npieces, piece, nslots;
    struct slot *slots; /* OWNS */
    struct fetcher fetchers[SNAPFETCH_MAX_FETCHERS];
    size_t nfetchers;
    pthread_mutex_t mu;
    pthread_cond_t ready_cv; /* a piece was read */
    pthread_cond_t free_cv;  /* a piece was released, or stop */
    size_t next;             /* the next piece a fetcher takes */
    size_t cursor;           /* the next piece the consumer takes */
    bool stop;
};

static void *fetch_main(void *arg)
{
    struct fetcher *me = arg;
    struct snapfetch *f = me->f;

    for (;;) {
        size_t k;
        struct slot *sl;
        const struct piece *p;
        enum kerr rc;
        struct kerr_info err = { 0 };

        pthread_mutex_lock(&f->mu);
        while (!f->stop && f->next < f->npieces && f->next >= f->cursor + f->nslots)
            pthread_cond_wait(&f->free_cv, &f->mu);
        if (f->stop || f->next >= f->npieces) {
            pthread_mutex_unlock(&f->mu);
            return NULL;
        }
        k = f->next++;
        pthread_mutex_unlock(&f->mu);
        /* Piece k - nslots was released: the slot is this thread's until ready is set. */
        sl = &f->slots[k % f->nslots];
        p = &f->pieces[k];
        if (!sl->buf && (sl->buf = malloc(f->piece)) == NULL)
            rc = kerr_set(&err, KERR_NOMEM, NULL);
        else
            rc = me->store->ops->read(me->store, f->items[p->idx].obj, p->off, sl->buf, p->len,
                                      &err);
        pthread_mutex_lock(&f->mu);
        sl->rc = rc;
        sl->err = err;
        sl->ready = k + 1;
        pthread_cond_broadcast(&f->ready_cv);
        pthread_mutex_unlock(&f->mu);
    }
}

static enum kerr cut(struct snapfetch *f, size_t n, struct kerr_info *err)
{
    size_t cap = 0;

    for (size_t i = 0; i < n; i++) {
        const struct ostore_obj *o = f->items[i].obj;
        for (int64_t off = 0; o && off < o->size; off += (int64_t)f->piece) {
            if (f->npieces == cap) {
                size_t ncap = cap ? 2 * cap : 256;
                struct piece *v = realloc(f->pieces, ncap * sizeof(*v));
                if (!v)
                    return kerr_set(err, KERR_NOMEM, NULL);
                f->pieces = v;
                cap = ncap;
            }
            f->pieces[f->npieces++] = (struct piece){
                .idx = i,
                .off = off,
                .len =
                    (size_t)(o->size - off < (int64_t)f->piece ? o->size - off : (int64_t)f->piece),
            };
        }
    }
    return KERR_OK;
}

enum kerr snapfetch_start(struct ostore *const *stores, size_t nstores,
                          const struct snapfetch_item *items, size_t n, size_t piece, size_t slots,
                          struct snapfetch **out, struct kerr_info *err)
{
    struct snapfetch *f;
    enum kerr rc;

    *out = NULL;
    if (nstores == 0 || nstores > SNAPFETCH_MAX_FETCHERS || piece == 0 || slots == 0)
        return kerr_set(err, KERR_INVAL, "snapfetch: %zu fetchers, pieces of %zu, %zu slots",
                        nstores, piece, slots);
    if ((f = calloc(1, sizeof(*f))) == NULL)
        return kerr_set(err, KERR_NOMEM, NULL);
    f->items = items;
    f->piece = piece;
    f->nslots = slots;
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->ready_cv, NULL);
    pthread_cond_init(&f->free_cv, NULL);
    if ((rc = cut(f, n, err)) != KERR_OK)
        goto fail;
    if ((f->slots = calloc(slots, sizeof(*f->slots))) == NULL) {
        rc = kerr_set(err, KERR_NOMEM, NULL);
        goto fail;
    }
    for (size_t i = 0; i < nstores && i < f->npieces; i++) {
        struct fetcher *t = &f->fetchers[i];
        int e;
        t->f = f;
        t->store = stores[i];
        if ((e = pthread_create(&t->thread, NULL, fetch_main, t)) != 0) {
            rc = kerr_set(err, KERR_INTERNAL, "snapfetch: cannot start a fetcher (error %d)", e);
            goto fail;
        }
        t->started = true;
        f->nfetchers = i + 1;
    }
    *out = f;
    return KERR_OK;
fail:
    snapfetch_free(f);
    return rc;
}

/* Wait for piece k (the cursor) to be read. Called with mu held. */
static struct slot *wait_ready(struct snapfetch *f, size_t k)
{
    struct slot *sl = &f->slots[k % f->nslots];

    while (sl->ready != k + 1)
        pthread_cond_wait(&f->ready_cv, &f->mu);
    return sl;
}

int snapfetch_take(struct snapfetch *f, size_t idx, int64_t off, size_t len,
                   const unsigned char **data, enum kerr *rc, struct kerr_info *err)
{
    const struct piece *p;
    struct slot *sl;

    if (!f)
        return 0;
    pthread_mutex_lock(&f->mu);
    /* Pieces of objects the consumer went past (it stopped reading them) are dropped. */
    while (f->cursor < f->npieces && f->pieces[f->cursor].idx < idx) {
        wait_ready(f, f->cursor);
        f->cursor++;
        pthread_cond_broadcast(&f->free_cv);
    }
    p = f->cursor < f->npieces ? &f->pieces[f->cursor] : NULL;
    if (!p || p->idx != idx || p->off != off || p->len != len) {
        pthread_mutex_unlock(&f->mu);
        return 0;
    }
    sl = wait_ready(f, f->cursor);
    pthread_mutex_unlock(&f->mu);
    *data = sl->buf;
    *rc = sl->rc;
    if (sl->rc != KERR_OK)
        *err = sl->err;
    return 1;
}

void snapfetch_release(struct snapfetch *f)
{
    pthread_mutex_lock(&f->mu);
    f->cursor++;
    pthread_cond_broadcast(&f->free_cv);
    pthread_mutex_unlock(&f->mu);
}

void snapfetch_free(struct snapfetch *f)
{
    if (!f)
        return;
    pthread_mutex_lock(&f->mu);
    f->stop = true;
    pthread_cond_broadcast(&f->free_cv);
    pthread_mutex_unlock(&f->mu);
    for (size_t i = 0; i < f->nfetchers; i++)
        if (f->fetchers[i].started)
            pthread_join(f->fetchers[i].thread, NULL);
    for (size_t i = 0; f->slots && i < f->nslots; i++)
        free(f->slots[i].buf);
    free(f->slots);
    free(f->pieces);
    pthread_mutex_destroy(&f->mu);
    pthread_cond_destroy(&f->ready_cv);
    pthread_cond_destroy(&f->free_cv);
    free(f);
}
