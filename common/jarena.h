/*
 * jarena - a per-thread bump arena for short-lived cJSON parse trees.
 *
 * cJSON allocates every node, key and string on its own: parsing a 3 KB
 * AdmissionReview is about 180 malloc/free pairs, and on a busy server the
 * allocator (tcache misses, fastbin consolidation triggered by the TLS
 * library's 16 KB record buffers) costs more than the parse itself.
 *
 * jarena_install() routes cJSON's allocations through this module
 * (cJSON_InitHooks). Outside jarena_parse nothing changes: every cJSON
 * allocation is a plain malloc, so text from cJSON_Print* may still be
 * released with free(). jarena_parse() parses into a block owned by the
 * calling thread (JARENA_BLOCK bytes, made on first use); what does not fit
 * spills into malloc. The block is reused once the last tree parsed into it
 * has been released with jarena_delete(). Without jarena_install the two
 * functions are cJSON_ParseWithLengthOpts and cJSON_Delete.
 *
 * Rules for a tree from jarena_parse: read it, do not add items to it, keep
 * no pointer into it after jarena_delete, and release it with jarena_delete
 * on the thread that parsed it.
 *
 * With AddressSanitizer the unused part of a block is poisoned, so reads
 * past an allocation or after jarena_delete are reported as with malloc.
 *
 * Thread safety: jarena_install once at start-up, before any other thread
 * exists and before any cJSON call (cJSON's hooks are process-wide; the
 * install state is then read-only configuration). jarena_parse,
 * jarena_delete and jarena_thread_release on any thread, each for its own
 * block. A thread's block is freed when the thread exits.
 */
#ifndef COMMON_JARENA_H
#define COMMON_JARENA_H

#include <stddef.h>

#include <cJSON.h>

#include "common/kerr.h"

#define JARENA_BLOCK (64u * 1024u) /* bytes per thread */

/* Install the cJSON hooks. Idempotent. KERR_INTERNAL when no thread key can be made. */
enum kerr jarena_install(struct kerr_info *err);

/* True once jarena_install succeeded. */
int jarena_installed(void);

/*
 * cJSON_ParseWithLengthOpts(text, len, end, 0) into the calling thread's
 * block. NULL when text is not JSON (*end, when given, points near the
 * error) or memory ran out. The tree OWNS what it uses of the block:
 * release it with jarena_delete.
 */
cJSON *jarena_parse(const char *text, size_t len, const char **end);

/*
 * As jarena_parse, but the tree may take at most budget bytes of
 * allocations (0: no limit): a text whose tree would take more fails to
 * parse (NULL) with *over (when given) set to 1, what was built freed. The
 * budget bounds the memory a hostile text of many small values costs (a
 * cJSON node is some 64 bytes for 2 bytes of text). It is enforced only
 * after jarena_install; without it this is jarena_parse.
 */
cJSON *jarena_parse_budget(const char *text, size_t len, const char **end, size_t budget,
                           int *over);

/* Release a tree from jarena_parse (NULL is a no-op). */
void jarena_delete(cJSON *root);

/*
 * Bytes of the calling thread's block in use (0 when it has none). For
 * tests: 0 again once every tree parsed on the thread is released.
 */
size_t jarena_thread_used(void);

/*
 * Make the calling thread's block at least bytes large (a list page's tree
 * is megabytes, JARENA_BLOCK is sized for a review). Only while no tree of
 * the block is alive: KERR_INVAL otherwise. KERR_NOMEM when the memory is
 * not there (the block stays as it was). A no-op (KERR_OK) without
 * jarena_install. The block keeps its size until jarena_thread_release or
 * the thread's exit: release it when the large parses are done.
 */
enum kerr jarena_thread_reserve(size_t bytes, struct kerr_info *err);

/* Free the calling thread's block now (no tree of it may be alive). */
void jarena_thread_release(void);

#endif
