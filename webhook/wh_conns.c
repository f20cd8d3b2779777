/* wh_conns - the server's connections and which to drop under pressure; see wh_conns.h. */
#include "webhook/wh_conns.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

enum state { FREE = 0, IDLE, BUSY, DROPPED };

/* The connection of one socket number; prev/next link the idle ones (-1: none). */
struct slot {
    unsigned char state;
    unsigned char served; /* a request began on it */
    int prev, next;
};

struct wh_conns {
    struct wh_conns_opts o;
    pthread_mutex_t mu;
    struct slot *slots; /* OWNS: indexed by socket number */
    size_t cap;
    int head, tail; /* idle list: least recently active first */
    size_t open, busy, high;
    unsigned long dropped;
};

static void shut(void *ctx, int fd)
{
    (void)ctx;
    shutdown(fd, SHUT_RDWR);
}

enum kerr wh_conns_new(const struct wh_conns_opts *opts, struct wh_conns **out,
                       struct kerr_info *err)
{
    struct wh_conns *t;
    unsigned int reserve;

    *out = NULL;
    if (!opts->limit)
        return kerr_set(err, KERR_INVAL, "a connection table needs a limit");
    if (!(t = calloc(1, sizeof(*t))))
        return kerr_set(err, KERR_NOMEM, "allocating the connection table");
    if (pthread_mutex_init(&t->mu, NULL) != 0) {
        free(t);
        return kerr_set(err, KERR_NOMEM, "allocating the connection table");
    }
    t->o = *opts;
    if (!t->o.drop)
        t->o.drop = shut;
    reserve = opts->reserve ? opts->reserve : opts->limit / 16;
    if (reserve < 1)
        reserve = 1;
    t->high = reserve < opts->limit ? opts->limit - reserve : 1;
    t->head = t->tail = -1;
    *out = t;
    return KERR_OK;
}

void wh_conns_free(struct wh_conns *t)
{
    if (!t)
        return;
    pthread_mutex_destroy(&t->mu);
    free(t->slots);
    free(t);
}

/* Room for socket fd in the table: 0, or -1 out of memory. */
static int grow(struct wh_conns *t, int fd)
{
    size_t cap = t->cap ? t->cap : 64;
    struct slot *s;

    if ((size_t)fd < t->cap)
        return 0;
    while (cap <= (size_t)fd)
        cap *= 2;
    if (!(s = realloc(t->slots, cap * sizeof(*s))))
        return -1;
    memset(s + t->cap, 0, (cap - t->cap) * sizeof(*s));
    t->slots = s;
    t->cap = cap;
    return 0;
}

static struct slot *slot_of(struct wh_conns *t, int fd)
{
    return fd >= 0 && (size_t)fd < t->cap ? &t->slots[fd] : NULL;
}

static void unlink_idle(struct wh_conns *t, int fd)
{
    struct slot *s = &t->slots[fd];

    if (s->prev >= 0)
        t->slots[s->prev].next = s->next;
    else
        t->head = s->next;
    if (s->next >= 0)
        t->slots[s->next].prev = s->prev;
    else
        t->tail = s->prev;
    s->prev = s->next = -1;
}

static void append_idle(struct wh_conns *t, int fd)
{
    struct slot *s = &t->slots[fd];

    s->state = IDLE;
    s->prev = t->tail;
    s->next = -1;
    if (t->tail >= 0)
        t->slots[t->tail].next = fd;
    else
        t->head = fd;
    t->tail = fd;
}

/* Drop the least recently active idle connections, not keep, until open is at the mark. */
static int make_room(struct wh_conns *t, int keep)
{
    int victim, n = 0;

    while (t->open > t->high) {
        victim = t->head == keep ? t->slots[keep].next : t->head;
        if (victim < 0)
            break;
        unlink_idle(t, victim);
        t->slots[victim].state = DROPPED;
        t->open--;
        t->dropped++;
        t->o.drop(t->o.drop_ctx, victim);
        n++;
    }
    return n;
}

int wh_conns_open(struct wh_conns *t, int fd)
{
    struct slot *s;
    int n = -1;

    if (fd < 0)
        return -1;
    pthread_mutex_lock(&t->mu);
    if (grow(t, fd) == 0) {
        s = &t->slots[fd];
        if (s->state == IDLE)
            unlink_idle(t, fd); /* a close notice missed: the number is a new connection's */
        if (s->state == IDLE || s->state == BUSY)
            t->open--;
        if (s->state == BUSY)
            t->busy--;
        s->served = 0;
        append_idle(t, fd);
        t->open++;
        n = make_room(t, fd);
    }
    pthread_mutex_unlock(&t->mu);
    return n;
}

int wh_conns_busy(struct wh_conns *t, int fd)
{
    struct slot *s;
    int first = 0;

    pthread_mutex_lock(&t->mu);
    s = slot_of(t, fd);
    if (s && s->state == IDLE) {
        unlink_idle(t, fd);
        s->state = BUSY;
        t->busy++;
        first = !s->served;
        s->served = 1;
    }
    pthread_mutex_unlock(&t->mu);
    return first;
}

void wh_conns_idle(struct wh_conns *t, int fd)
{
    struct slot *s;

    pthread_mutex_lock(&t->mu);
    s = slot_of(t, fd);
    if (s && s->state == BUSY) {
        t->busy--;
        append_idle(t, fd);
    }
    pthread_mutex_unlock(&t->mu);
}

void wh_conns_close(struct wh_conns *t, int fd)
{
    struct slot *s;

    pthread_mutex_lock(&t->mu);
    s = slot_of(t, fd);
    if (s && s->state != FREE) {
        if (s->state == IDLE)
            unlink_idle(t, fd);
        if (s->state == BUSY)
            t->busy--;
        if (s->state == IDLE || s->state == BUSY)
            t->open--;
        memset(s, 0, sizeof(*s));
    }
    pthread_mutex_unlock(&t->mu);
}

void wh_conns_stats(struct wh_conns *t, struct wh_conns_stats *out)
{
    pthread_mutex_lock(&t->mu);
    out->open = t->open;
    out->busy = t->busy;
    out->dropped = t->dropped;
    pthread_mutex_unlock(&t->mu);
}
