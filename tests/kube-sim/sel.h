/*
 * sel - Kubernetes label selectors and field selectors for kube-sim.
 *
 * Label selectors come in two shapes and both end up as one struct
 * ksim_sel: the string form of ?labelSelector= (k8s.io/apimachinery
 * labels.Parse: "a=b", "a==b", "a!=b", "a in (x,y)", "a notin (x)", "a",
 * "!a", "a>1", "a<1", joined by commas) and the JSON form of a
 * metav1.LabelSelector (matchLabels + matchExpressions with In, NotIn,
 * Exists, DoesNotExist), as used by webhook namespaceSelector/objectSelector
 * and StatefulSet spec.selector. Field selectors are in fsel.h.
 *
 * Ownership: ksim_sel_parse / ksim_sel_from_json return heap objects the
 * caller OWNS (free with ksim_sel_free); all other pointers are BORROWED for
 * the call.
 * Thread safety: a parsed selector is immutable and may be shared.
 */
#ifndef KSIM_SEL_H
#define KSIM_SEL_H

#include <cJSON.h>

#include "common/buf.h"
#include "common/kerr.h"

enum ksim_sel_op {
    KSIM_SEL_EQ,        /* key=value, key==value, matchLabels */
    KSIM_SEL_NEQ,       /* key!=value (matches when the key is absent too) */
    KSIM_SEL_IN,        /* key in (v1,v2) */
    KSIM_SEL_NOTIN,     /* key notin (v1,v2) (matches when absent) */
    KSIM_SEL_EXISTS,    /* key */
    KSIM_SEL_NOTEXISTS, /* !key */
    KSIM_SEL_GT,        /* key>N (integers) */
    KSIM_SEL_LT,        /* key<N */
};

struct ksim_sel_req {
    char *key; /* OWNS */
    enum ksim_sel_op op;
    char **values; /* OWNS (each) */
    size_t nvalues;
};

/* A parsed label selector: the AND of its requirements. */
struct ksim_sel {
    struct ksim_sel_req *reqs; /* OWNS */
    size_t n;
    int nothing; /* 1: matches no object (a nil LabelSelector) */
};

/*
 * Parse the string form. An empty or NULL text selects everything. On error
 * returns KERR_PARSE with kube-apiserver's wording in err ("unable to parse
 * requirement: ..."). On KERR_OK *out OWNS the selector.
 */
enum kerr ksim_sel_parse(const char *text, struct ksim_sel **out, struct kerr_info *err);

/*
 * Convert a metav1.LabelSelector (BORROWED). NULL or JSON null gives a
 * selector that matches nothing when nil_matches_nothing is set, else
 * everything; {} matches everything. Unknown operators are KERR_PARSE.
 */
enum kerr ksim_sel_from_json(const cJSON *selector, int nil_matches_nothing, struct ksim_sel **out,
                             struct kerr_info *err);

/* Does the label map (a JSON object of strings, or NULL for "no labels") match? */
int ksim_sel_matches(const struct ksim_sel *sel, const cJSON *labels);

/* True when the selector selects everything. */
int ksim_sel_is_everything(const struct ksim_sel *sel);

/* Append the canonical string form ("a=b,c in (x,y)") to out. */
enum kerr ksim_sel_to_string(const struct ksim_sel *sel, struct buf *out);

/* NULL is a no-op. */
void ksim_sel_free(struct ksim_sel *sel);

#endif
