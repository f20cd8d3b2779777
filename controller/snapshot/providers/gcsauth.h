/*
 * gcsauth - Google Cloud Storage credentials as etcd-backup-restore takes them
 * (the Google SDK's GOOGLE_APPLICATION_CREDENTIALS: a service-account JSON key
 * file), and OAuth2 access tokens for them: a JWT bearer assertion (RFC 7523,
 * header {"alg":"RS256","typ":"JWT"}, claims iss = client_email, scope,
 * aud = token_uri, iat, exp = iat + 3600) signed with the key's RSA private
 * key through OpenSSL, exchanged at token_uri (grant_type
 * urn:ietf:params:oauth:grant-type:jwt-bearer) for an access token.
 *
 * Fields read: type (must be "service_account"), client_email, private_key
 * (PEM), token_uri (default https://oauth2.googleapis.com/token). Unknown
 * fields are ignored; every missing or malformed one is refused naming it.
 * Type "external_account" (workload identity federation) is read and its
 * tokens obtained by stsgcp.
 *
 * Ownership: struct gcsauth OWNS its strings and key (gcsauth_release).
 * Thread safety: reentrant.
 */
#ifndef CONTROLLER_SNAPSHOT_PROVIDERS_GCSAUTH_H
#define CONTROLLER_SNAPSHOT_PROVIDERS_GCSAUTH_H

#include <openssl/evp.h>
#include <stddef.h>
#include <stdint.h>

#include "common/kerr.h"
#include "controller/snapshot/providers/shttp.h"
#include "controller/snapshot/providers/stsgcp.h"

#define GCSAUTH_SCOPE     "https://www.googleapis.com/auth/devstorage.full_control"
#define GCSAUTH_TOKEN_URI "https://oauth2.googleapis.com/token"

struct gcsauth {
    char *client_email;
    char *token_uri;
    EVP_PKEY *key;
    struct stsgcp *ext; /* external_account instead of the above, or NULL */
    char *token;        /* current access token, or NULL */
    int64_t token_exp;  /* Unix seconds it expires */
};

/* Parse a service-account key from JSON text (BORROWED, len bytes). */
enum kerr gcsauth_parse(const char *text, size_t len, struct gcsauth *out, struct kerr_info *err);

/* The same from the file at path. */
enum kerr gcsauth_read(const char *path, struct gcsauth *out, struct kerr_info *err);

void gcsauth_release(struct gcsauth *a);

/* The signed assertion "header.claims.signature" (base64url) for time now; *out OWNS it. */
enum kerr gcsauth_jwt(const struct gcsauth *a, int64_t now, char **out, struct kerr_info *err);

/* An access token valid for at least another minute, fetched through h when the one held
 * is older; the returned string is BORROWED from a. */
enum kerr gcsauth_token(struct gcsauth *a, struct shttp *h, const char **tok,
                        struct kerr_info *err);

#endif
