/*
 * tlsx - certificates and keys on OpenSSL 3 (EVP/X509 APIs).
 *
 * - Load a PEM certificate/key pair from files or memory and check that the
 *   key belongs to the certificate; read notBefore/notAfter.
 * - Generate a self-signed CA, a serving certificate (DNS and IP SANs,
 *   serverAuth) and a client certificate (CN = user, O = groups, clientAuth),
 *   each signed by a CA; output as PEM strings.
 * - A 0600 file writer for key material.
 * Base64, SHA-256, random hex and UUIDs are common/crypto.h.
 *
 * libmicrohttpd serves TLS through GnuTLS from PEM text in memory, so the
 * daemons pass the PEM strings of a struct tlsx_pem to it; OpenSSL objects
 * never cross this API except in tlsx_x509_from_pem (tests, checks).
 *
 * Thread safety: every function is reentrant (OpenSSL 3 initialises itself
 * thread-safely); a struct tlsx_pem belongs to its caller.
 */
#ifndef COMMON_TLSX_H
#define COMMON_TLSX_H

#include <stddef.h>
#include <time.h>

#include <openssl/x509.h>

#include "common/kerr.h"

/* Largest certificate or key file tlsx_load_files reads. */
#define TLSX_MAX_PEM_FILE (1024 * 1024)

/* Key algorithm of a generated certificate. */
enum tlsx_key_type {
    TLSX_KEY_EC_P256 = 0, /* ECDSA on prime256v1 (the default) */
    TLSX_KEY_RSA_2048,    /* RSA 2048 bits */
};

/*
 * A certificate and its private key as PEM text. Both strings are OWNED by
 * the struct (NUL-terminated, malloc'd) and freed by tlsx_pem_release.
 * cert may hold a chain (leaf first) when loaded from a file.
 */
struct tlsx_pem {
    char *cert; /* OWNS */
    char *key;  /* OWNS */
};

/* Empty pair (both NULL). Cannot fail. */
void tlsx_pem_init(struct tlsx_pem *p);

/* Free both strings (the key is wiped first); safe to call twice. */
void tlsx_pem_release(struct tlsx_pem *p);

/*
 * What to put in a generated certificate. All pointers are BORROWED for the
 * call. Lists are NULL-terminated arrays (NULL = empty list).
 */
struct tlsx_cert_opts {
    const char *cn;              /* subject CN; required */
    const char *const *sans;     /* SANs: an entry that parses as IPv4/IPv6 becomes an
                                    IP SAN, anything else a DNS SAN (serving certs) */
    const char *const *orgs;     /* subject O entries (client certs: the groups) */
    enum tlsx_key_type key_type; /* default TLSX_KEY_EC_P256 */
    long lifetime_secs;          /* 0 = default: CA 10 years, leaf 1 year */
    time_t not_before;           /* 0 = now minus 5 minutes (clock skew) */
};

/*
 * Generate a self-signed CA (basicConstraints CA:TRUE critical, keyUsage
 * keyCertSign+cRLSign+digitalSignature, subjectKeyIdentifier). opts->sans
 * and opts->orgs are used when given. On KERR_OK *out OWNS the new pair
 * (release with tlsx_pem_release); on error *out is empty.
 */
enum kerr tlsx_gen_ca(const struct tlsx_cert_opts *opts, struct tlsx_pem *out,
                      struct kerr_info *err);

/*
 * Generate a serving certificate signed by ca (BORROWED; the CA's cert and
 * key PEM): basicConstraints CA:FALSE, keyUsage digitalSignature+
 * keyEncipherment, extendedKeyUsage serverAuth, SANs from opts->sans
 * (at least one required). *out as for tlsx_gen_ca.
 */
enum kerr tlsx_gen_serving(const struct tlsx_pem *ca, const struct tlsx_cert_opts *opts,
                           struct tlsx_pem *out, struct kerr_info *err);

/*
 * Generate a client certificate signed by ca: CN = opts->cn (the user
 * name), one O per entry of opts->orgs (the groups), keyUsage
 * digitalSignature+keyEncipherment, extendedKeyUsage clientAuth.
 */
enum kerr tlsx_gen_client(const struct tlsx_pem *ca, const struct tlsx_cert_opts *opts,
                          struct tlsx_pem *out, struct kerr_info *err);

/*
 * Read a certificate (or chain) file and a key file (each at most
 * TLSX_MAX_PEM_FILE bytes), check that both parse and that the key matches
 * the first certificate. On KERR_OK *out OWNS copies of both texts.
 * Errors: KERR_IO (unreadable), KERR_TOOBIG, KERR_TLS (not PEM, or
 * "private key does not match certificate").
 */
enum kerr tlsx_load_files(const char *cert_path, const char *key_path, struct tlsx_pem *out,
                          struct kerr_info *err);

/*
 * As tlsx_load_files, from memory (BORROWED, explicit lengths, need not be
 * NUL-terminated). On KERR_OK *out OWNS NUL-terminated copies.
 */
enum kerr tlsx_load_mem(const char *cert_pem, size_t cert_len, const char *key_pem, size_t key_len,
                        struct tlsx_pem *out, struct kerr_info *err);

/* Check that the key of p matches its first certificate: KERR_OK or KERR_TLS. */
enum kerr tlsx_check_pair(const struct tlsx_pem *p, struct kerr_info *err);

/* notBefore / notAfter of the first certificate in pem (BORROWED). Either out may be NULL. */
enum kerr tlsx_cert_validity(const char *pem, size_t len, time_t *not_before, time_t *not_after,
                             struct kerr_info *err);

/*
 * Verify the first certificate of cert_pem against the CA certificate(s) in
 * ca_pem with X509_verify_cert at time now (0 = current time). When host is
 * not NULL it must match a SAN (an IP literal is compared with the IP SANs).
 * KERR_OK when valid, KERR_TLS with OpenSSL's reason otherwise.
 */
enum kerr tlsx_verify(const char *ca_pem, const char *cert_pem, const char *host, time_t now,
                      struct kerr_info *err);

/* Parse the first certificate of pem. On KERR_OK *out OWNS it: X509_free(). */
enum kerr tlsx_x509_from_pem(const char *pem, size_t len, X509 **out, struct kerr_info *err);

/*
 * Write len bytes to path with mode 0600: written to a temporary file in
 * the same directory, fsync'd, then renamed over path (so a reader never
 * sees half a key). For kube-sim's data directory and for tests only: the
 * daemons keep credentials in memory.
 */
enum kerr tlsx_write_private(const char *path, const void *data, size_t len, struct kerr_info *err);

#endif
