/* jarena - per-thread bump arena for cJSON parse trees; see jarena.h. */
#include "common/jarena.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#if defined(__SANITIZE_ADDRESS__)
#define JARENA_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define JARENA_ASAN 1
#endif
#endif

#ifdef JARENA_ASAN
#include <sanitizer/asan_interface.h>
#define POISON(p, n)   ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#define REDZONE        16u /* poisoned gap after each allocation */
#else
#define POISON(p, n)   ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#define REDZONE        0u
#endif

#define ALIGN 16u /* as malloc's: cJSON stores doubles and pointers */

/* One thread's block. */
struct block {
    unsigned char *base; /* OWNS */
    size_t size;
    size_t used;
    unsigned long live;   /* trees rooted in the block and not yet released */
    unsigned long spills; /* of those, trees with parts in malloc memory */
    int active;           /* a jarena_parse is running on this thread */
    int spilled;          /* the running parse put something in malloc memory */
    size_t budget;        /* bytes the running parse may take (0: no limit) */
    size_t spent;         /* bytes it took so far */
    int over;             /* it asked for more than budget */
};

/*
 * Set once by jarena_install before any other thread exists, read-only
 * afterwards (configuration, not state): the thread key of the blocks and
 * whether cJSON's hooks point here.
 */
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t key;
static int key_made;
static int installed;
/*
 * The calling thread's block, as the key holds it (the key's destructor frees it when the
 * thread exits): read on every cJSON allocation, where pthread_getspecific cost more than
 * the bump itself.
 */
static __thread struct block *mine;

static int in_block(const struct block *b, const void *p)
{
    uintptr_t a = (uintptr_t)p, lo = (uintptr_t)b->base;

    return a >= lo && a < lo + b->size;
}

static void reset(struct block *b)
{
    b->used = 0;
    b->spills = 0;
    POISON(b->base, b->size);
}

static void drop(void *arg)
{
    struct block *b = arg;

    if (!b)
        return;
    if (mine == b)
        mine = NULL; /* drop runs on the block's own thread */
    UNPOISON(b->base, b->size);
    free(b->base);
    free(b);
}

static void make_key(void)
{
    key_made = pthread_key_create(&key, drop) == 0;
}

/* n bytes from the block, or NULL when they do not fit. */
static void *take(struct block *b, size_t n)
{
    size_t need = ((n + ALIGN - 1) & ~(size_t)(ALIGN - 1)) + REDZONE;
    void *p;

    if (need < n || b->size - b->used < need)
        return NULL;
    p = b->base + b->used;
    b->used += need;
    UNPOISON(p, n);
    return p;
}

static void *hook_malloc(size_t n)
{
    struct block *b = mine;
    void *p;

    if (!b || !b->active)
        return malloc(n);
    if (b->budget) {
        b->spent += n;
        if (b->spent > b->budget || b->spent < n) {
            b->over = 1;
            return NULL; /* cJSON fails the parse and frees what it built */
        }
    }
    p = take(b, n);
    if (p)
        return p;
    b->spilled = 1;
    return malloc(n);
}

static void hook_free(void *p)
{
    struct block *b = mine;

    if (b && in_block(b, p))
        return; /* given back all at once when the block is reset */
    free(p);
}

enum kerr jarena_install(struct kerr_info *err)
{
    cJSON_Hooks hooks = { hook_malloc, hook_free };

    pthread_once(&key_once, make_key);
    if (!key_made)
        return kerr_set(err, KERR_INTERNAL, "jarena: cannot create a thread key");
    if (!installed) {
        cJSON_InitHooks(&hooks);
        installed = 1;
    }
    return KERR_OK;
}

int jarena_installed(void)
{
    return installed;
}

/* The calling thread's block, made on first use; NULL when out of memory. */
static struct block *thread_block(void)
{
    struct block *b = mine;

    if (b)
        return b;
    b = calloc(1, sizeof(*b));
    if (!b)
        return NULL;
    b->base = malloc(JARENA_BLOCK);
    if (!b->base || pthread_setspecific(key, b) != 0) {
        free(b->base);
        free(b);
        return NULL;
    }
    b->size = JARENA_BLOCK;
    reset(b);
    mine = b;
    return b;
}

cJSON *jarena_parse_budget(const char *text, size_t len, const char **end, size_t budget, int *over)
{
    struct block *b = installed ? thread_block() : NULL;
    cJSON *root;

    if (over)
        *over = 0;
    if (!b)
        return cJSON_ParseWithLengthOpts(text, len, end, 0);
    if (b->live == 0)
        reset(b);
    b->active = 1;
    b->spilled = 0;
    b->budget = budget;
    b->spent = 0;
    b->over = 0;
    root = cJSON_ParseWithLengthOpts(text, len, end, 0);
    b->active = 0;
    b->budget = 0;
    if (over)
        *over = b->over;
    if (root && in_block(b, root)) {
        b->live++;
        b->spills += b->spilled ? 1u : 0u;
    } else if (b->live == 0) {
        reset(b); /* a failed parse, or a plain tree: nothing lives in the block */
    }
    return root;
}

cJSON *jarena_parse(const char *text, size_t len, const char **end)
{
    return jarena_parse_budget(text, len, end, 0, NULL);
}

void jarena_delete(cJSON *root)
{
    struct block *b = installed && root ? mine : NULL;

    if (!b || !in_block(b, root)) {
        cJSON_Delete(root); /* not from this thread's block: a plain tree */
        return;
    }
    /* A tree wholly in the block needs no walk: the block is reset as a whole. */
    if (b->spills)
        cJSON_Delete(root);
    if (--b->live == 0)
        reset(b);
}

enum kerr jarena_thread_reserve(size_t bytes, struct kerr_info *err)
{
    struct block *b = installed ? thread_block() : NULL;
    unsigned char *base;

    if (!installed)
        return KERR_OK;
    if (!b)
        return kerr_set(err, KERR_NOMEM, "jarena: no block for this thread");
    if (b->live)
        return kerr_set(err, KERR_INVAL, "jarena: a tree of this thread's block is alive");
    if (b->size >= bytes)
        return KERR_OK;
    if (!(base = malloc(bytes)))
        return kerr_set(err, KERR_NOMEM, "jarena: cannot reserve %zu bytes", bytes);
    UNPOISON(b->base, b->size);
    free(b->base);
    b->base = base;
    b->size = bytes;
    reset(b);
    return KERR_OK;
}

size_t jarena_thread_used(void)
{
    struct block *b = installed ? mine : NULL;

    return b ? b->used : 0;
}

void jarena_thread_release(void)
{
    struct block *b = installed ? mine : NULL;

    if (!b)
        return;
    pthread_setspecific(key, NULL);
    drop(b);
}
