#include "common/tlsx.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include "common/buf.h"
#include "common/crypto.h"

#define CA_DEFAULT_LIFETIME   (10L * 365 * 24 * 3600)
#define LEAF_DEFAULT_LIFETIME (365L * 24 * 3600)
#define SKEW_SECS             300

enum cert_kind { KIND_CA, KIND_SERVING, KIND_CLIENT };

static enum kerr ossl_fail(struct kerr_info *err, enum kerr code, const char *what)
{
    return crypto_ossl_fail(err, code, "tlsx", what);
}

/* Never prompt for a passphrase: encrypted keys are refused. */
static int no_password(char *buf, int size, int rwflag, void *u)
{
    (void)buf;
    (void)size;
    (void)rwflag;
    (void)u;
    return -1;
}

void tlsx_pem_init(struct tlsx_pem *p)
{
    p->cert = NULL;
    p->key = NULL;
}

void tlsx_pem_release(struct tlsx_pem *p)
{
    free(p->cert);
    if (p->key)
        OPENSSL_cleanse(p->key, strlen(p->key));
    free(p->key);
    p->cert = NULL;
    p->key = NULL;
}

/* A read-only memory BIO over len bytes; NULL when len does not fit an int. */
static BIO *mem_bio(const char *data, size_t len)
{
    if (len > INT_MAX)
        return NULL;
    return BIO_new_mem_buf(data, (int)len);
}

enum kerr tlsx_x509_from_pem(const char *pem, size_t len, X509 **out, struct kerr_info *err)
{
    BIO *bio = mem_bio(pem, len);

    *out = NULL;
    if (!bio)
        return ossl_fail(err, KERR_NOMEM, "certificate buffer");
    *out = PEM_read_bio_X509(bio, NULL, no_password, NULL);
    BIO_free(bio);
    if (!*out)
        return ossl_fail(err, KERR_TLS, "no PEM certificate");
    return KERR_OK;
}

static enum kerr key_from_pem(const char *pem, size_t len, EVP_PKEY **out, struct kerr_info *err)
{
    BIO *bio = mem_bio(pem, len);

    *out = NULL;
    if (!bio)
        return ossl_fail(err, KERR_NOMEM, "key buffer");
    *out = PEM_read_bio_PrivateKey(bio, NULL, no_password, NULL);
    BIO_free(bio);
    if (!*out)
        return ossl_fail(err, KERR_TLS, "no PEM private key");
    return KERR_OK;
}

/* Copy the content of a memory BIO into a malloc'd NUL-terminated string. */
static enum kerr bio_to_string(BIO *bio, char **out, struct kerr_info *err)
{
    char *data = NULL;
    long n = BIO_get_mem_data(bio, &data);

    *out = NULL;
    if (n < 0 || !data)
        return kerr_set(err, KERR_INTERNAL, "tlsx: empty PEM output");
    *out = malloc((size_t)n + 1);
    if (!*out)
        return kerr_set(err, KERR_NOMEM, "tlsx: PEM output");
    memcpy(*out, data, (size_t)n);
    (*out)[n] = '\0';
    return KERR_OK;
}

static enum kerr pem_encode(X509 *x, EVP_PKEY *key, struct tlsx_pem *out, struct kerr_info *err)
{
    BIO *cb = BIO_new(BIO_s_mem());
    BIO *kb = BIO_new(BIO_s_mem());
    enum kerr rc;

    if (!cb || !kb || !PEM_write_bio_X509(cb, x) ||
        !PEM_write_bio_PrivateKey(kb, key, NULL, NULL, 0, NULL, NULL)) {
        rc = ossl_fail(err, KERR_NOMEM, "writing PEM");
        goto out;
    }
    rc = bio_to_string(cb, &out->cert, err);
    if (rc == KERR_OK)
        rc = bio_to_string(kb, &out->key, err);
out:
    BIO_free(cb);
    BIO_free_all(kb);
    return rc;
}

static EVP_PKEY *gen_key(enum tlsx_key_type type)
{
    if (type == TLSX_KEY_RSA_2048)
        return EVP_RSA_gen(2048);
    return EVP_EC_gen("P-256");
}

/* A random positive 127-bit serial number. */
static int set_serial(X509 *x)
{
    BIGNUM *bn = BN_new();
    ASN1_INTEGER *ai = NULL;
    int ok = 0;

    if (bn && BN_rand(bn, 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) &&
        (ai = BN_to_ASN1_INTEGER(bn, NULL)) != NULL)
        ok = X509_set_serialNumber(x, ai);
    ASN1_INTEGER_free(ai);
    BN_free(bn);
    return ok;
}

static int set_subject(X509 *x, const struct tlsx_cert_opts *o)
{
    X509_NAME *name = X509_get_subject_name(x);
    const char *const *g;

    for (g = o->orgs; g && *g; g++) {
        if (!X509_NAME_add_entry_by_txt(name, "O", MBSTRING_UTF8, (const unsigned char *)*g, -1, -1,
                                        0))
            return 0;
    }
    return X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, (const unsigned char *)o->cn, -1,
                                      -1, 0);
}

static int set_validity(X509 *x, const struct tlsx_cert_opts *o, enum cert_kind kind)
{
    time_t start = o->not_before ? o->not_before : time(NULL) - SKEW_SECS;
    long life = o->lifetime_secs;

    if (life <= 0)
        life = kind == KIND_CA ? CA_DEFAULT_LIFETIME : LEAF_DEFAULT_LIFETIME;
    if (!ASN1_TIME_set(X509_getm_notBefore(x), start))
        return 0;
    return ASN1_TIME_set(X509_getm_notAfter(x), start + (time_t)life) != NULL;
}

/* One SAN: an IP literal becomes an iPAddress entry, anything else a dNSName. */
static GENERAL_NAME *make_san(const char *s)
{
    GENERAL_NAME *gn = NULL;
    ASN1_OCTET_STRING *ip = a2i_IPADDRESS(s);
    ASN1_IA5STRING *dns = NULL;

    ERR_clear_error(); /* a2i_IPADDRESS queues an error for names */
    if (ip) {
        gn = GENERAL_NAME_new();
        if (gn)
            GENERAL_NAME_set0_value(gn, GEN_IPADD, ip);
        else
            ASN1_OCTET_STRING_free(ip);
        return gn;
    }
    dns = ASN1_IA5STRING_new();
    gn = GENERAL_NAME_new();
    if (!dns || !gn || !ASN1_STRING_set(dns, s, -1)) {
        ASN1_IA5STRING_free(dns);
        GENERAL_NAME_free(gn);
        return NULL;
    }
    GENERAL_NAME_set0_value(gn, GEN_DNS, dns);
    return gn;
}

static int add_sans(X509 *x, const char *const *sans)
{
    GENERAL_NAMES *gens = sk_GENERAL_NAME_new_null();
    GENERAL_NAME *gn;
    int ok = 0;

    if (!gens)
        return 0;
    for (; *sans; sans++) {
        gn = make_san(*sans);
        if (!gn || !sk_GENERAL_NAME_push(gens, gn)) {
            GENERAL_NAME_free(gn);
            goto out;
        }
    }
    ok = X509_add1_ext_i2d(x, NID_subject_alt_name, gens, 0, X509V3_ADD_DEFAULT) == 1;
out:
    GENERAL_NAMES_free(gens);
    return ok;
}

static int add_ext(X509 *x, X509V3_CTX *ctx, int nid, const char *value)
{
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, ctx, nid, value);
    int ok;

    if (!ext)
        return 0;
    ok = X509_add_ext(x, ext, -1);
    X509_EXTENSION_free(ext);
    return ok;
}

/* basicConstraints, keyUsage, extendedKeyUsage and key identifiers for kind. */
static int add_extensions(X509 *x, X509 *issuer, enum cert_kind kind)
{
    X509V3_CTX ctx;

    X509V3_set_ctx(&ctx, issuer ? issuer : x, x, NULL, NULL, 0);
    if (!add_ext(x, &ctx, NID_subject_key_identifier, "hash"))
        return 0;
    if (kind == KIND_CA)
        return add_ext(x, &ctx, NID_basic_constraints, "critical,CA:TRUE") &&
               add_ext(x, &ctx, NID_key_usage, "critical,keyCertSign,cRLSign,digitalSignature");
    if (!add_ext(x, &ctx, NID_basic_constraints, "critical,CA:FALSE") ||
        !add_ext(x, &ctx, NID_key_usage, "critical,digitalSignature,keyEncipherment") ||
        !add_ext(x, &ctx, NID_authority_key_identifier, "keyid:always"))
        return 0;
    return add_ext(x, &ctx, NID_ext_key_usage, kind == KIND_SERVING ? "serverAuth" : "clientAuth");
}

/* Fill in everything but the signature. issuer NULL = self-signed. */
static int fill_cert(X509 *x, EVP_PKEY *key, X509 *issuer, const struct tlsx_cert_opts *o,
                     enum cert_kind kind)
{
    if (!X509_set_version(x, 2) || !set_serial(x) || !set_validity(x, o, kind) ||
        !set_subject(x, o) || !X509_set_pubkey(x, key))
        return 0;
    if (!X509_set_issuer_name(x, X509_get_subject_name(issuer ? issuer : x)))
        return 0;
    if (o->sans && o->sans[0] && !add_sans(x, o->sans))
        return 0;
    return add_extensions(x, issuer, kind);
}

static enum kerr check_opts(const struct tlsx_cert_opts *o, enum cert_kind kind,
                            struct kerr_info *err)
{
    if (!o || !o->cn || !o->cn[0])
        return kerr_set(err, KERR_INVAL, "tlsx: a certificate needs a CN");
    if (o->key_type != TLSX_KEY_EC_P256 && o->key_type != TLSX_KEY_RSA_2048)
        return kerr_set(err, KERR_INVAL, "tlsx: unknown key type %d", (int)o->key_type);
    if (kind == KIND_SERVING && (!o->sans || !o->sans[0]))
        return kerr_set(err, KERR_INVAL, "tlsx: a serving certificate needs at least one SAN");
    return KERR_OK;
}

static enum kerr gen_cert(const struct tlsx_pem *ca, const struct tlsx_cert_opts *o,
                          enum cert_kind kind, struct tlsx_pem *out, struct kerr_info *err)
{
    X509 *ca_cert = NULL, *x = NULL;
    EVP_PKEY *ca_key = NULL, *key = NULL;
    enum kerr rc;

    tlsx_pem_init(out);
    rc = check_opts(o, kind, err);
    if (rc == KERR_OK && kind != KIND_CA) {
        if (!ca || !ca->cert || !ca->key) {
            rc = kerr_set(err, KERR_INVAL, "tlsx: a CA certificate and key are required");
            goto out;
        }
        rc = tlsx_x509_from_pem(ca->cert, strlen(ca->cert), &ca_cert, err);
        if (rc == KERR_OK)
            rc = key_from_pem(ca->key, strlen(ca->key), &ca_key, err);
    }
    if (rc != KERR_OK)
        goto out;
    key = gen_key(o->key_type);
    x = X509_new();
    if (!key || !x || !fill_cert(x, key, ca_cert, o, kind) ||
        !X509_sign(x, ca_key ? ca_key : key, EVP_sha256())) {
        rc = ossl_fail(err, KERR_TLS, "building certificate");
        goto out;
    }
    rc = pem_encode(x, key, out, err);
out:
    if (rc != KERR_OK)
        tlsx_pem_release(out);
    X509_free(x);
    X509_free(ca_cert);
    EVP_PKEY_free(key);
    EVP_PKEY_free(ca_key);
    return rc;
}

enum kerr tlsx_gen_ca(const struct tlsx_cert_opts *opts, struct tlsx_pem *out,
                      struct kerr_info *err)
{
    return gen_cert(NULL, opts, KIND_CA, out, err);
}

enum kerr tlsx_gen_serving(const struct tlsx_pem *ca, const struct tlsx_cert_opts *opts,
                           struct tlsx_pem *out, struct kerr_info *err)
{
    return gen_cert(ca, opts, KIND_SERVING, out, err);
}

enum kerr tlsx_gen_client(const struct tlsx_pem *ca, const struct tlsx_cert_opts *opts,
                          struct tlsx_pem *out, struct kerr_info *err)
{
    return gen_cert(ca, opts, KIND_CLIENT, out, err);
}

/* Parse both texts (explicit lengths) and check that the key matches the first certificate. */
static enum kerr check_mem(const char *cert, size_t cert_len, const char *key, size_t key_len,
                           struct kerr_info *err)
{
    X509 *x = NULL;
    EVP_PKEY *k = NULL;
    enum kerr rc;

    rc = tlsx_x509_from_pem(cert, cert_len, &x, err);
    if (rc == KERR_OK)
        rc = key_from_pem(key, key_len, &k, err);
    if (rc == KERR_OK && X509_check_private_key(x, k) != 1) {
        ERR_clear_error();
        rc = kerr_set(err, KERR_TLS, "tlsx: private key does not match certificate");
    }
    X509_free(x);
    EVP_PKEY_free(k);
    return rc;
}

enum kerr tlsx_check_pair(const struct tlsx_pem *p, struct kerr_info *err)
{
    if (!p || !p->cert || !p->key)
        return kerr_set(err, KERR_INVAL, "tlsx: certificate and key are required");
    return check_mem(p->cert, strlen(p->cert), p->key, strlen(p->key), err);
}

static char *dup_mem(const char *s, size_t n)
{
    char *p = malloc(n + 1);

    if (p) {
        memcpy(p, s, n);
        p[n] = '\0';
    }
    return p;
}

enum kerr tlsx_load_mem(const char *cert_pem, size_t cert_len, const char *key_pem, size_t key_len,
                        struct tlsx_pem *out, struct kerr_info *err)
{
    enum kerr rc;

    tlsx_pem_init(out);
    rc = check_mem(cert_pem, cert_len, key_pem, key_len, err);
    if (rc != KERR_OK)
        return rc;
    out->cert = dup_mem(cert_pem, cert_len);
    out->key = dup_mem(key_pem, key_len);
    if (!out->cert || !out->key) {
        tlsx_pem_release(out);
        return kerr_set(err, KERR_NOMEM, "tlsx: copying PEM");
    }
    return KERR_OK;
}

static enum kerr read_file(const char *path, struct buf *b, struct kerr_info *err)
{
    char chunk[4096], eb[128];
    ssize_t n;
    enum kerr rc = KERR_OK;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0) {
        if (strerror_r(errno, eb, sizeof(eb)))
            eb[0] = '\0';
        return kerr_set(err, KERR_IO, "tlsx: open %s: %s", path, eb);
    }
    while (rc == KERR_OK && (n = read(fd, chunk, sizeof(chunk))) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            rc = kerr_set(err, KERR_IO, "tlsx: read %s failed", path);
        else if (buf_append(b, chunk, (size_t)n) != KERR_OK)
            rc = kerr_set(err, KERR_TOOBIG, "tlsx: %s is larger than %d bytes", path,
                          TLSX_MAX_PEM_FILE);
    }
    close(fd);
    return rc;
}

enum kerr tlsx_load_files(const char *cert_path, const char *key_path, struct tlsx_pem *out,
                          struct kerr_info *err)
{
    struct buf cb, kb;
    enum kerr rc;

    tlsx_pem_init(out);
    buf_init(&cb, TLSX_MAX_PEM_FILE);
    buf_init(&kb, TLSX_MAX_PEM_FILE);
    rc = read_file(cert_path, &cb, err);
    if (rc == KERR_OK)
        rc = read_file(key_path, &kb, err);
    if (rc == KERR_OK)
        rc = tlsx_load_mem(buf_str(&cb), cb.len, buf_str(&kb), kb.len, out, err);
    if (rc != KERR_OK && err)
        kerr_wrap(err, "loading %s / %s", cert_path, key_path);
    if (kb.data)
        OPENSSL_cleanse(kb.data, kb.len);
    buf_release(&cb);
    buf_release(&kb);
    return rc;
}

static enum kerr asn1_to_time(const ASN1_TIME *t, time_t *out, struct kerr_info *err)
{
    struct tm tm;

    memset(&tm, 0, sizeof(tm));
    if (!ASN1_TIME_to_tm(t, &tm))
        return ossl_fail(err, KERR_TLS, "bad certificate time");
    *out = timegm(&tm);
    return KERR_OK;
}

enum kerr tlsx_cert_validity(const char *pem, size_t len, time_t *not_before, time_t *not_after,
                             struct kerr_info *err)
{
    X509 *x = NULL;
    enum kerr rc = tlsx_x509_from_pem(pem, len, &x, err);

    if (rc == KERR_OK && not_before)
        rc = asn1_to_time(X509_get0_notBefore(x), not_before, err);
    if (rc == KERR_OK && not_after)
        rc = asn1_to_time(X509_get0_notAfter(x), not_after, err);
    X509_free(x);
    return rc;
}

/* Every certificate in pem (BORROWED, NUL-terminated); none at all is an error. */
static enum kerr read_certs(const char *pem, STACK_OF(X509) * *out, struct kerr_info *err)
{
    BIO *bio = mem_bio(pem, strlen(pem));
    STACK_OF(X509) *sk = sk_X509_new_null();
    X509 *x;
    enum kerr rc = KERR_OK;

    *out = NULL;
    if (!bio || !sk) {
        rc = ossl_fail(err, KERR_NOMEM, "reading certificates");
        goto out;
    }
    while ((x = PEM_read_bio_X509(bio, NULL, no_password, NULL)) != NULL) {
        if (!sk_X509_push(sk, x)) {
            X509_free(x);
            rc = ossl_fail(err, KERR_NOMEM, "reading certificates");
            goto out;
        }
    }
    ERR_clear_error(); /* the end of the input is reported as an error */
    if (sk_X509_num(sk) == 0)
        rc = kerr_set(err, KERR_TLS, "tlsx: no PEM certificate");
out:
    BIO_free(bio);
    if (rc == KERR_OK)
        *out = sk;
    else
        sk_X509_pop_free(sk, X509_free);
    return rc;
}

static enum kerr set_verify_params(X509_STORE_CTX *ctx, const char *host, time_t now,
                                   struct kerr_info *err)
{
    X509_VERIFY_PARAM *vp = X509_STORE_CTX_get0_param(ctx);
    ASN1_OCTET_STRING *ip = NULL;
    int ok;

    if (now)
        X509_VERIFY_PARAM_set_time(vp, now);
    if (!host)
        return KERR_OK;
    ip = a2i_IPADDRESS(host);
    ERR_clear_error();
    if (ip)
        ok = X509_VERIFY_PARAM_set1_ip_asc(vp, host);
    else
        ok = X509_VERIFY_PARAM_set1_host(vp, host, 0);
    ASN1_OCTET_STRING_free(ip);
    return ok ? KERR_OK : ossl_fail(err, KERR_INVAL, "bad host name");
}

enum kerr tlsx_verify(const char *ca_pem, const char *cert_pem, const char *host, time_t now,
                      struct kerr_info *err)
{
    STACK_OF(X509) *cas = NULL, *chain = NULL;
    X509_STORE *store = X509_STORE_new();
    X509_STORE_CTX *ctx = X509_STORE_CTX_new();
    enum kerr rc = KERR_OK;
    int i;

    if (!store || !ctx) {
        rc = ossl_fail(err, KERR_NOMEM, "verify context");
        goto out;
    }
    if ((rc = read_certs(ca_pem, &cas, err)) != KERR_OK ||
        (rc = read_certs(cert_pem, &chain, err)) != KERR_OK)
        goto out;
    for (i = 0; i < sk_X509_num(cas); i++)
        X509_STORE_add_cert(store, sk_X509_value(cas, i));
    if (!X509_STORE_CTX_init(ctx, store, sk_X509_value(chain, 0), chain)) {
        rc = ossl_fail(err, KERR_NOMEM, "verify context");
        goto out;
    }
    rc = set_verify_params(ctx, host, now, err);
    if (rc == KERR_OK && X509_verify_cert(ctx) != 1)
        rc = kerr_set(err, KERR_TLS, "tlsx: certificate verification failed: %s",
                      X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx)));
out:
    ERR_clear_error();
    X509_STORE_CTX_free(ctx);
    X509_STORE_free(store);
    sk_X509_pop_free(cas, X509_free);
    sk_X509_pop_free(chain, X509_free);
    return rc;
}

static int write_all(int fd, const unsigned char *p, size_t len)
{
    ssize_t n;

    while (len > 0) {
        n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

enum kerr tlsx_write_private(const char *path, const void *data, size_t len, struct kerr_info *err)
{
    char tmp[PATH_MAX], eb[128];
    int fd, n;

    n = snprintf(tmp, sizeof(tmp), "%s.tmp.XXXXXX", path);
    if (n < 0 || (size_t)n >= sizeof(tmp))
        return kerr_set(err, KERR_INVAL, "tlsx: path too long: %s", path);
    fd = mkstemp(tmp); /* created with mode 0600 */
    if (fd < 0)
        goto fail;
    if (fchmod(fd, 0600) != 0 || write_all(fd, data, len) != 0 || fsync(fd) != 0) {
        close(fd);
        goto fail_unlink;
    }
    if (close(fd) != 0 || rename(tmp, path) != 0)
        goto fail_unlink;
    return KERR_OK;
fail_unlink:
    n = errno;
    unlink(tmp);
    errno = n;
fail:
    if (strerror_r(errno, eb, sizeof(eb)))
        eb[0] = '\0';
    return kerr_set(err, KERR_IO, "tlsx: writing %s: %s", path, eb);
}
