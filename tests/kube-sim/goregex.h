/*
 * goregex - the `pattern` of a CRD's OpenAPI schema, which kube-apiserver
 * matches with Go's regexp (RE2 syntax, unanchored search), run on POSIX
 * extended regular expressions (regcomp/regexec).
 *
 * ksim_goregex_translate rewrites the RE2 subset CRDs use into an ERE that
 * matches the same strings: (?:...) and (?P<name>...) groups, the classes
 * \d \D \s \S \w \W (in and out of brackets), escaped punctuation, \n \t \r
 * \f \v \a, \xHH, non-greedy quantifiers (as greedy ones: whether a string
 * matches does not change), {n,m} repeats (a '{' that starts none is a
 * literal, as in Go), '.' not matching a newline, bracket expressions with
 * ranges and [:class:] names. Everything else (flags, \b, \A, \z, \p{..},
 * back references, non-ASCII characters inside brackets) is refused: the
 * caller then cannot check the pattern. Matching is byte-wise (C locale):
 * '.' and negated brackets take one byte of a multi-byte character.
 *
 * Ownership: arguments BORROWED. Thread safety: reentrant.
 */
#ifndef KSIM_GOREGEX_H
#define KSIM_GOREGEX_H

#include <regex.h>
#include <stddef.h>

#define KSIM_GOREGEX_MAX 8192 /* longest pattern translated */

/*
 * Translate pattern into out (n bytes). 0, or -1 when the pattern is not
 * valid RE2 in the subset above or the result does not fit (out is then "").
 */
int ksim_goregex_translate(const char *pattern, char *out, size_t n);

/* Translate and regcomp pattern into re (free it with regfree). 0, or -1. */
int ksim_goregex_compile(const char *pattern, regex_t *re);

/* Whether s contains a match of pattern: 1, 0, or -1 when pattern cannot be used. */
int ksim_goregex_match(const char *pattern, const char *s);

#endif
