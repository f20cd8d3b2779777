/* snappipe through snapcopy_run, against two in-memory stores: the next part is read while
 * the current one is being sent, and the guarantees of the sequential copy hold (the verdict
 * before the last part is sent, a failure on either side stops both, nothing committed). */
#include <errno.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <criterion/criterion.h>

#include "controller/snapshot/snapcopy.h"

#define KEY   "p/v2/Full-00000000-00001000-1700000000"
#define PART  4096u
#define PARTS 5
/* 512 k + 32 bytes (an etcd snapshot), the last part short */
#define SIZE ((int64_t)PART * (PARTS - 1) + 512 * 3 + 32)

/* One in-memory store: the source (one object) or the destination (what was sent). */
struct mem {
    struct ostore base;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    unsigned char *data; /* source bytes, or the committed object */
    int64_t size;        /* -1: nothing committed (destination) */
    int reads;           /* source: reads started */
    int fail_read;       /* source: the read of this part fails (-1: none) */
    unsigned char *sent; /* destination: the parts sent so far */
    int64_t sent_len;
    int parts;          /* destination: up_part calls */
    int fail_part;      /* destination: this part is refused (-1: none) */
    bool hold_first;    /* destination: part 0 waits for the read of part 1 (bounded) */
    bool overlapped;    /* part 1 was read while part 0 was being sent */
    bool stop_in_first; /* destination: part 0 asks the run to stop (SIGTERM) */
    int aborts, commits;
};

static struct mem src_store, dst_store;

static void md5_hex(const void *d, size_t n, char out[33])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned ml = 0;
    cr_assert_eq(EVP_Digest(d, n, md, &ml, EVP_md5(), NULL), 1);
    for (unsigned i = 0; i < ml; i++) {
        snprintf(out + 2 * i, 3, "%02x", md[i]);
    }
}

static enum kerr m_list(struct ostore *s, const char *prefix, struct ostore_list *out,
                        struct kerr_info *err)
{
    struct mem *m = (struct mem *)s;
    char key[] = KEY;
    struct ostore_obj o = { .key = key, .size = m->size };
    (void)prefix;
    return m == &src_store ? ostore_list_add(out, &o, err) : KERR_OK;
}

static enum kerr m_head(struct ostore *s, const char *key, struct ostore_obj *out,
                        struct kerr_info *err)
{
    struct mem *m = (struct mem *)s;
    memset(out, 0, sizeof *out);
    if (m->size < 0 || (m == &src_store && strcmp(key, KEY) != 0)) {
        return kerr_set(err, KERR_NOTFOUND, "%s not found", key);
    }
    out->key = strdup(key);
    out->size = m->size;
    md5_hex(m->data, (size_t)m->size, out->md5);
    return KERR_OK;
}

static enum kerr m_read(struct ostore *s, const struct ostore_obj *o, int64_t off, void *dst,
                        size_t len, struct kerr_info *err)
{
    struct mem *m = (struct mem *)s;
    (void)o;
    pthread_mutex_lock(&m->mu);
    int k = m->reads++;
    pthread_cond_broadcast(&m->cv);
    pthread_mutex_unlock(&m->mu);
    if (k == m->fail_read) {
        return kerr_set(err, KERR_IO, "connection reset");
    }
    memcpy(dst, m->data + off, len);
    return KERR_OK;
}

static enum kerr m_up_begin(struct ostore *s, const char *key, int64_t size,
                            struct ostore_upload **out, struct kerr_info *err)
{
    struct mem *m = (struct mem *)s;
    (void)key;
    (void)err;
    m->sent = calloc(1, (size_t)size + 1);
    m->sent_len = 0;
    *out = (struct ostore_upload *)(void *)m;
    return KERR_OK;
}

/* Wait (at most 10 s) until the source has started the read of part 1. */
static bool wait_second_read(void)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 10;
    pthread_mutex_lock(&src_store.mu);
    int rc = 0;
    while (src_store.reads < 2 && rc != ETIMEDOUT) {
        rc = pthread_cond_timedwait(&src_store.cv, &src_store.mu, &until);
    }
    bool ok = src_store.reads >= 2;
    pthread_mutex_unlock(&src_store.mu);
    return ok;
}

static enum kerr m_up_part(struct ostore *s, struct ostore_upload *u, const void *data, size_t len,
                           struct kerr_info *err)
{
    struct mem *m = (struct mem *)s;
    (void)u;
    int k = m->parts++;
    if (k == 0 && m->hold_first) {
        m->overlapped = wait_second_read();
    }
    if (k == 0 && m->stop_in_first) {
        snapcopy_stop();
    }
    if (k == m->fail_part) {
        return kerr_set(err, KERR_HTTP, "HTTP 500");
    }
    memcpy(m->sent + m->sent_len, data, len);
    m->sent_len += (int64_t)len;
    return KERR_OK;
}

static enum kerr m_up_commit(struct ostore *s, struct ostore_upload *u, struct kerr_info *err)
{
    struct mem *m = (struct mem *)s;
    (void)u;
    (void)err;
    m->commits++;
    m->data = m->sent;
    m->size = m->sent_len;
    m->sent = NULL;
    return KERR_OK;
}

static void m_up_abort(struct ostore *s, struct ostore_upload *u)
{
    struct mem *m = (struct mem *)s;
    (void)u;
    m->aborts++;
    free(m->sent);
    m->sent = NULL;
}

static enum kerr m_del(struct ostore *s, const struct ostore_obj *o, struct kerr_info *err)
{
    struct mem *m = (struct mem *)s;
    (void)o;
    (void)err;
    free(m->data);
    m->data = NULL;
    m->size = -1;
    return KERR_OK;
}

static const struct ostore_ops mem_ops = {
    .name = "mem",
    .list = m_list,
    .head = m_head,
    .read = m_read,
    .up_begin = m_up_begin,
    .up_part = m_up_part,
    .up_commit = m_up_commit,
    .up_abort = m_up_abort,
    .del = m_del,
};

static void setup(void)
{
    struct mem *ms[2] = { &src_store, &dst_store };
    for (int i = 0; i < 2; i++) {
        memset(ms[i], 0, sizeof *ms[i]);
        ms[i]->base.ops = &mem_ops;
        ms[i]->base.part_size = PART;
        ms[i]->fail_read = ms[i]->fail_part = -1;
        pthread_mutex_init(&ms[i]->mu, NULL);
        pthread_cond_init(&ms[i]->cv, NULL);
    }
    /* an etcd snapshot stand-in: random bytes, then their SHA-256 */
    src_store.size = SIZE;
    src_store.data = malloc((size_t)SIZE);
    for (int64_t i = 0; i < SIZE - 32; i++) {
        src_store.data[i] = (unsigned char)rand();
    }
    unsigned ml = 0;
    cr_assert_eq(EVP_Digest(src_store.data, (size_t)SIZE - 32, src_store.data + SIZE - 32, &ml,
                            EVP_sha256(), NULL),
                 1);
    dst_store.size = -1;
}

static void teardown(void)
{
    free(src_store.data);
    free(dst_store.data);
    free(dst_store.sent);
}

static enum kerr run(struct snapcopy_result *res, struct kerr_info *err)
{
    struct snapcopy_opts o = { .from_prefix = "p", .to_prefix = "q" };
    return snapcopy_run(&src_store.base, &dst_store.base, &o, res, err);
}

TestSuite(snappipe, .init = setup, .fini = teardown, .timeout = 60);

Test(snappipe, next_part_read_while_the_current_one_is_sent)
{
    struct snapcopy_result res;
    struct kerr_info err = { 0 };
    char want[33];
    dst_store.hold_first = true;
    cr_assert_eq(run(&res, &err), KERR_OK, "%s", err.msg);
    cr_assert(dst_store.overlapped, "part 1 was not read while part 0 was being sent");
    cr_assert_eq(dst_store.commits, 1);
    cr_assert_eq(dst_store.parts, PARTS);
    cr_assert_eq(dst_store.size, SIZE);
    cr_assert_eq(memcmp(dst_store.data, src_store.data, (size_t)SIZE), 0);
    md5_hex(src_store.data, (size_t)SIZE, want);
    cr_assert_eq(res.n, 1);
    cr_assert_str_eq(res.v[0].md5, want);
    cr_assert_str_eq(res.v[0].destination, "q/v2/Full-00000000-00001000-1700000000");
    snapcopy_result_release(&res);
}

Test(snappipe, corrupt_snapshot_never_sends_its_last_part)
{
    struct snapcopy_result res;
    struct kerr_info err = { 0 };
    src_store.data[SIZE - 1] ^= 1;
    cr_assert_eq(run(&res, &err), KERR_IO);
    cr_assert(strstr(err.msg, "is corrupt"), "%s", err.msg);
    cr_assert_lt(dst_store.parts, PARTS, "the last part was sent");
    cr_assert_eq(dst_store.commits, 0);
    cr_assert_eq(dst_store.aborts, 1);
    cr_assert_eq(dst_store.size, -1);
}

Test(snappipe, refused_part_stops_the_reader)
{
    struct snapcopy_result res;
    struct kerr_info err = { 0 };
    dst_store.fail_part = 1;
    cr_assert_eq(run(&res, &err), KERR_HTTP);
    cr_assert(strstr(err.msg, "writing " KEY), "%s", err.msg);
    cr_assert_eq(dst_store.parts, 2);
    cr_assert_leq(src_store.reads, 3, "the reader went on after the failure");
    cr_assert_eq(dst_store.commits, 0);
    cr_assert_eq(dst_store.aborts, 1);
    cr_assert_eq(dst_store.size, -1);
}

Test(snappipe, failed_read_stops_the_upload)
{
    struct snapcopy_result res;
    struct kerr_info err = { 0 };
    src_store.fail_read = 2;
    cr_assert_eq(run(&res, &err), KERR_IO);
    cr_assert(strstr(err.msg, "reading " KEY " at 8192"), "%s", err.msg);
    cr_assert_leq(dst_store.parts, 2);
    cr_assert_eq(dst_store.commits, 0);
    cr_assert_eq(dst_store.aborts, 1);
    cr_assert_eq(dst_store.size, -1);
}

Test(snappipe, stop_while_a_part_is_sent)
{
    struct snapcopy_result res;
    struct kerr_info err = { 0 };
    dst_store.stop_in_first = true;
    cr_assert_eq(run(&res, &err), KERR_CANCELLED, "%s", err.msg);
    cr_assert_leq(dst_store.parts, 2);
    cr_assert_leq(src_store.reads, 3);
    cr_assert_eq(dst_store.commits, 0);
    cr_assert_eq(dst_store.aborts, 1);
    cr_assert_eq(dst_store.size, -1);
}
