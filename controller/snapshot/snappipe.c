/* snappipe - read part N+1 while part N is sent (see snappipe.h). */
#include "controller/snapshot/snappipe.h"

#include <pthread.h>
#include <stdbool.h>
#include <string.h>

struct pipe {
    const struct snappipe_job *j;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool full[2];  /* the buffer holds a part read and hashed, not sent yet */
    size_t len[2]; /* its length */
    bool failed;   /* either side failed: both stop */
    enum kerr rc;  /* the reader's error */
    struct kerr_info err;
};

static size_t part_len(const struct snappipe_job *j, int64_t off)
{
    int64_t left = j->obj->size - off;
    return left < (int64_t)j->part ? (size_t)left : j->part;
}

/* Wait until slot is in state want or the other side failed; true when it is. */
static bool wait_slot(struct pipe *p, int slot, bool want)
{
    pthread_mutex_lock(&p->mu);
    while (p->full[slot] != want && !p->failed) {
        pthread_cond_wait(&p->cv, &p->mu);
    }
    bool ok = !p->failed;
    pthread_mutex_unlock(&p->mu);
    return ok;
}

/* Mark slot full (ok) or empty, or the pipe failed. */
static void post(struct pipe *p, int slot, bool full, size_t len, bool failed)
{
    pthread_mutex_lock(&p->mu);
    if (failed) {
        p->failed = true;
    } else {
        p->full[slot] = full;
        p->len[slot] = len;
    }
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

static enum kerr read_part(const struct snappipe_job *j, int64_t off, unsigned char *buf, size_t n,
                           struct kerr_info *err)
{
    enum kerr rc = j->stop(err);
    rc = rc ? rc : j->src->ops->read(j->src, j->obj, off, buf, n, err);
    if (rc != KERR_OK) {
        return kerr_wrap(err, "reading %s at %lld", j->obj->key, (long long)off);
    }
    if (EVP_DigestUpdate(j->md, buf, n) != 1) {
        return kerr_set(err, KERR_INTERNAL, "MD5 update failed");
    }
    /* the verdict before the last part is handed over: a corrupt snapshot is never sent */
    return snapverify_piece(j->v, j->obj->key, j->obj->size, off, buf, n, err);
}

static void *reader(void *arg)
{
    struct pipe *p = arg;
    const struct snappipe_job *j = p->j;
    int slot = 0;
    for (int64_t off = 0; off < j->obj->size; slot ^= 1) {
        size_t n = part_len(j, off);
        if (!wait_slot(p, slot, false)) {
            break;
        }
        p->rc = read_part(j, off, j->buf[slot], n, &p->err);
        post(p, slot, true, n, p->rc != KERR_OK);
        if (p->rc != KERR_OK) {
            break;
        }
        off += (int64_t)n;
    }
    return NULL;
}

enum kerr snappipe_stream(const struct snappipe_job *j, struct kerr_info *err)
{
    struct pipe p = { .j = j };
    pthread_t th;
    enum kerr rc = KERR_OK;
    int slot = 0;
    pthread_mutex_init(&p.mu, NULL);
    pthread_cond_init(&p.cv, NULL);
    if (pthread_create(&th, NULL, reader, &p) != 0) {
        rc = kerr_set(err, KERR_INTERNAL, "cannot start the reader thread");
        goto out;
    }
    for (int64_t off = 0; off < j->obj->size; slot ^= 1) {
        if (!wait_slot(&p, slot, true)) {
            break; /* the reader failed: its error below */
        }
        size_t n = p.len[slot]; /* the reader does not touch a full slot */
        rc = j->stop(err);
        rc = rc ? rc : j->dst->ops->up_part(j->dst, j->up, j->buf[slot], n, err);
        if (rc != KERR_OK) {
            rc = rc == KERR_CANCELLED ? rc : kerr_wrap(err, "writing %s", j->obj->key);
        }
        post(&p, slot, false, 0, rc != KERR_OK);
        if (rc != KERR_OK) {
            break;
        }
        off += (int64_t)n;
    }
    pthread_join(th, NULL);
    if (rc == KERR_OK && p.rc != KERR_OK) {
        rc = p.rc;
        if (err) {
            *err = p.err;
        }
    }
out:
    pthread_cond_destroy(&p.cv);
    pthread_mutex_destroy(&p.mu);
    return rc;
}
