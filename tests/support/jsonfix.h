/*
 * jsonfix - JSON helpers for the Criterion tests: parse test text, compare a
 * document with the expected text, read fields with a default, list the
 * names of items, check a MicroTime, and a sample Etcd object.
 *
 * For tests only: where something fails they fail the running test with a
 * Criterion assertion instead of returning an error. Thread safety: every
 * function may be called from any thread; jsonfix_etcd is read-only.
 */
#ifndef TESTS_SUPPORT_JSONFIX_H
#define TESTS_SUPPORT_JSONFIX_H

#include <stddef.h>
#include <stdint.h>

#include <cJSON.h>

/*
 * An Etcd etcd-main in namespace shoot with a dotted and a bracketed label, an
 * annotation, spec.replicas 3, spec.backup.enabled and two containers.
 */
extern const char jsonfix_etcd[];

/* text (valid JSON the test wrote) parsed with kjson_parse; OWNED by the caller (cJSON_Delete). */
cJSON *jsonfix_parse(const char *text);

/* Assert that v printed with its keys sorted (kjson_print_sorted) is exactly want. */
void jsonfix_assert_sorted(const cJSON *v, const char *want);

/* The string at path (kjson_get_str syntax), or "" when absent or not a string. BORROWED. */
const char *jsonfix_str(const cJSON *j, const char *path);

/* The integer at path, or -1 when absent or not an integer. */
int64_t jsonfix_int(const cJSON *j, const char *path);

/* The integer at path, asserting that there is one. */
int64_t jsonfix_int_at(const cJSON *j, const char *path);

/* Assert that s is a metav1.MicroTime ("2006-01-02T15:04:05.000000Z") that ktime_parse reads. */
void jsonfix_assert_microtime(const char *s);

/*
 * The metadata.name of every object of the array items, in order, joined by
 * ',' into out (size bytes; asserts it fits). Returns out.
 */
const char *jsonfix_names(const cJSON *items, char *out, size_t size);

#endif
