/*
 * auth - who is calling kube-sim: static bearer tokens.
 *
 * Tokens come from a kube-apiserver --token-auth-file CSV
 * (token,user,uid,"group1,group2") plus the administrator's token that
 * kube-sim writes into admin.kubeconfig (user "kubernetes-admin", group
 * system:masters). Every authenticated user is also in
 * system:authenticated; a service-account user name
 * system:serviceaccount:NS:NAME also gets system:serviceaccounts and
 * system:serviceaccounts:NS, as the real token authenticator adds them.
 *
 * Ownership: ksim_auth_new returns a table the caller OWNS; users returned
 * by ksim_auth_lookup are BORROWED from it and live as long as the table.
 * Thread safety: the table is immutable after ksim_auth_new; lookups may run
 * concurrently.
 */
#ifndef KSIM_AUTH_H
#define KSIM_AUTH_H

#include <stddef.h>

#include "common/kerr.h"

/* A request's identity, as admission webhooks see it in userInfo. */
struct ksim_user {
    char *name;    /* OWNS */
    char *uid;     /* OWNS, may be "" */
    char **groups; /* OWNS (each) */
    size_t ngroups;
};

struct ksim_auth;

/*
 * Build the table from the CSV text (may be NULL: no file) and the admin
 * token (BORROWED, copied). KERR_PARSE names the bad line. On KERR_OK *out
 * OWNS the table (ksim_auth_free).
 */
enum kerr ksim_auth_new(const char *csv, const char *admin_token, struct ksim_auth **out,
                        struct kerr_info *err);

/* NULL is a no-op. */
void ksim_auth_free(struct ksim_auth *a);

/*
 * The user for an Authorization header value ("Bearer <token>"), or NULL
 * when the header is missing, malformed or the token unknown.
 */
const struct ksim_user *ksim_auth_lookup(const struct ksim_auth *a, const char *authorization);

/* True when the user is in group. */
int ksim_auth_in_group(const struct ksim_user *u, const char *group);

#endif
