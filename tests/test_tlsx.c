#include "common/tlsx.h"

#include <criterion/criterion.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const serving_sans[] = { "localhost", "warden-webhook.ns.svc", "127.0.0.1",
                                            "::1", NULL };

static void make_ca(struct tlsx_pem *ca, enum tlsx_key_type type)
{
    struct tlsx_cert_opts o = { .cn = "warden-test-ca", .key_type = type };
    struct kerr_info err;

    cr_assert_eq(tlsx_gen_ca(&o, ca, &err), KERR_OK, "%s", err.msg);
    cr_assert_not_null(strstr(ca->cert, "-----BEGIN CERTIFICATE-----"));
    cr_assert_not_null(strstr(ca->key, "PRIVATE KEY-----"));
}

static void make_serving(const struct tlsx_pem *ca, struct tlsx_pem *leaf, long lifetime)
{
    struct tlsx_cert_opts o = { .cn = "warden-webhook",
                                .sans = serving_sans,
                                .lifetime_secs = lifetime };
    struct kerr_info err;

    cr_assert_eq(tlsx_gen_serving(ca, &o, leaf, &err), KERR_OK, "%s", err.msg);
}

/* Collect the SANs of cert as "DNS:x" / "IP:y" into out (comma separated). */
static void san_list(const char *pem, char *out, size_t size)
{
    X509 *x = NULL;
    GENERAL_NAMES *gens;
    int i;
    size_t used = 0;

    cr_assert_eq(tlsx_x509_from_pem(pem, strlen(pem), &x, NULL), KERR_OK);
    gens = X509_get_ext_d2i(x, NID_subject_alt_name, NULL, NULL);
    cr_assert_not_null(gens);
    out[0] = '\0';
    for (i = 0; i < sk_GENERAL_NAME_num(gens); i++) {
        const GENERAL_NAME *gn = sk_GENERAL_NAME_value(gens, i);
        char v[64] = "";

        if (gn->type == GEN_DNS) {
            snprintf(v, sizeof(v), "DNS:%s", (const char *)ASN1_STRING_get0_data(gn->d.dNSName));
        } else if (gn->type == GEN_IPADD) {
            cr_assert(ASN1_STRING_length(gn->d.iPAddress) == 4 ||
                      ASN1_STRING_length(gn->d.iPAddress) == 16);
            snprintf(v, sizeof(v), "IP%d", ASN1_STRING_length(gn->d.iPAddress));
        }
        used += (size_t)snprintf(out + used, size - used, "%s%s", i ? "," : "", v);
        cr_assert_lt(used, size);
    }
    GENERAL_NAMES_free(gens);
    X509_free(x);
}

Test(tlsx, ca_and_serving_cert_verify_with_openssl)
{
    struct tlsx_pem ca, leaf;
    struct kerr_info err;
    char sans[256];

    make_ca(&ca, TLSX_KEY_EC_P256);
    make_serving(&ca, &leaf, 0);
    cr_assert_eq(tlsx_check_pair(&ca, &err), KERR_OK, "%s", err.msg);
    cr_assert_eq(tlsx_check_pair(&leaf, &err), KERR_OK, "%s", err.msg);
    cr_assert_eq(tlsx_verify(ca.cert, leaf.cert, NULL, 0, &err), KERR_OK, "%s", err.msg);
    cr_assert_eq(tlsx_verify(ca.cert, leaf.cert, "warden-webhook.ns.svc", 0, &err), KERR_OK, "%s",
                 err.msg);
    cr_assert_eq(tlsx_verify(ca.cert, leaf.cert, "127.0.0.1", 0, &err), KERR_OK, "%s", err.msg);
    cr_assert_eq(tlsx_verify(ca.cert, leaf.cert, "::1", 0, &err), KERR_OK, "%s", err.msg);
    cr_assert_eq(tlsx_verify(ca.cert, leaf.cert, "other.example", 0, &err), KERR_TLS);
    cr_assert_eq(tlsx_verify(ca.cert, leaf.cert, "10.0.0.1", 0, &err), KERR_TLS);
    san_list(leaf.cert, sans, sizeof(sans));
    cr_assert_str_eq(sans, "DNS:localhost,DNS:warden-webhook.ns.svc,IP4,IP16");
    tlsx_pem_release(&leaf);
    tlsx_pem_release(&ca);
    tlsx_pem_release(&ca);
}

Test(tlsx, serving_cert_key_usage_and_purpose)
{
    struct tlsx_pem ca, leaf;
    X509 *x = NULL, *cax = NULL;

    make_ca(&ca, TLSX_KEY_RSA_2048);
    make_serving(&ca, &leaf, 3600);
    cr_assert_eq(tlsx_x509_from_pem(leaf.cert, strlen(leaf.cert), &x, NULL), KERR_OK);
    cr_assert_eq(tlsx_x509_from_pem(ca.cert, strlen(ca.cert), &cax, NULL), KERR_OK);
    cr_assert_eq(X509_get_key_usage(x), KU_DIGITAL_SIGNATURE | KU_KEY_ENCIPHERMENT);
    cr_assert_eq(X509_get_extended_key_usage(x), XKU_SSL_SERVER);
    cr_assert_eq(X509_check_ca(x), 0);
    cr_assert_neq(X509_check_ca(cax), 0);
    cr_assert_eq(X509_check_purpose(x, X509_PURPOSE_SSL_SERVER, 0), 1);
    cr_assert_eq(X509_check_purpose(x, X509_PURPOSE_SSL_CLIENT, 0), 0);
    cr_assert_eq(X509_check_issued(cax, x), X509_V_OK);
    X509_free(x);
    X509_free(cax);
    tlsx_pem_release(&leaf);
    tlsx_pem_release(&ca);
}

Test(tlsx, client_cert_carries_user_and_groups)
{
    static const char *const groups[] = { "system:masters", "devs", NULL };
    struct tlsx_cert_opts o = { .cn = "alice", .orgs = groups };
    struct tlsx_pem ca, cl;
    struct kerr_info err;
    X509 *x = NULL;
    char cn[64], line[256];

    make_ca(&ca, TLSX_KEY_EC_P256);
    cr_assert_eq(tlsx_gen_client(&ca, &o, &cl, &err), KERR_OK, "%s", err.msg);
    cr_assert_eq(tlsx_verify(ca.cert, cl.cert, NULL, 0, &err), KERR_OK, "%s", err.msg);
    cr_assert_eq(tlsx_x509_from_pem(cl.cert, strlen(cl.cert), &x, NULL), KERR_OK);
    cr_assert_gt(
        X509_NAME_get_text_by_NID(X509_get_subject_name(x), NID_commonName, cn, sizeof(cn)), 0);
    cr_assert_str_eq(cn, "alice");
    X509_NAME_oneline(X509_get_subject_name(x), line, sizeof(line));
    cr_assert_str_eq(line, "/O=system:masters/O=devs/CN=alice");
    cr_assert_eq(X509_get_extended_key_usage(x), XKU_SSL_CLIENT);
    X509_free(x);
    tlsx_pem_release(&cl);
    tlsx_pem_release(&ca);
}

Test(tlsx, chain_from_another_ca_does_not_verify)
{
    struct tlsx_pem ca1, ca2, leaf;
    struct kerr_info err;

    make_ca(&ca1, TLSX_KEY_EC_P256);
    make_ca(&ca2, TLSX_KEY_EC_P256);
    make_serving(&ca1, &leaf, 0);
    cr_assert_eq(tlsx_verify(ca2.cert, leaf.cert, NULL, 0, &err), KERR_TLS);
    cr_assert_not_null(strstr(err.msg, "verification failed"), "%s", err.msg);
    tlsx_pem_release(&leaf);
    tlsx_pem_release(&ca1);
    tlsx_pem_release(&ca2);
}

Test(tlsx, key_mismatch_is_a_clear_error)
{
    struct tlsx_pem ca, leaf, mixed, loaded;
    struct kerr_info err;

    make_ca(&ca, TLSX_KEY_EC_P256);
    make_serving(&ca, &leaf, 0);
    mixed.cert = leaf.cert;
    mixed.key = ca.key;
    cr_assert_eq(tlsx_check_pair(&mixed, &err), KERR_TLS);
    cr_assert_str_eq(err.msg, "tlsx: private key does not match certificate");
    cr_assert_eq(tlsx_load_mem(leaf.cert, strlen(leaf.cert), ca.key, strlen(ca.key), &loaded, &err),
                 KERR_TLS);
    cr_assert_null(loaded.cert);
    cr_assert_eq(
        tlsx_load_mem(leaf.cert, strlen(leaf.cert), leaf.key, strlen(leaf.key), &loaded, &err),
        KERR_OK, "%s", err.msg);
    cr_assert_str_eq(loaded.cert, leaf.cert);
    tlsx_pem_release(&loaded);
    cr_assert_eq(tlsx_load_mem("garbage", 7, leaf.key, strlen(leaf.key), &loaded, &err), KERR_TLS);
    tlsx_pem_release(&loaded);
    tlsx_pem_release(&leaf);
    tlsx_pem_release(&ca);
}

Test(tlsx, expiry_read_back_and_expired_cert_rejected)
{
    struct tlsx_pem ca, old;
    struct tlsx_cert_opts o = {
        .cn = "old", .sans = serving_sans, .lifetime_secs = 7200, .not_before = 1700000000
    };
    struct kerr_info err;
    time_t nb = 0, na = 0, before = time(NULL);
    struct tlsx_pem leaf;

    make_ca(&ca, TLSX_KEY_EC_P256);
    make_serving(&ca, &leaf, 86400);
    cr_assert_eq(tlsx_cert_validity(leaf.cert, strlen(leaf.cert), &nb, &na, &err), KERR_OK);
    cr_assert_eq(na - nb, 86400);
    cr_assert(nb <= before && nb >= before - 400, "notBefore %ld now %ld", (long)nb, (long)before);
    cr_assert_eq(tlsx_gen_serving(&ca, &o, &old, &err), KERR_OK, "%s", err.msg);
    cr_assert_eq(tlsx_cert_validity(old.cert, strlen(old.cert), &nb, &na, &err), KERR_OK);
    cr_assert_eq(nb, 1700000000);
    cr_assert_eq(na, 1700007200);
    cr_assert_eq(tlsx_verify(ca.cert, old.cert, NULL, 0, &err), KERR_TLS);
    cr_assert_not_null(strstr(err.msg, "expired"), "%s", err.msg);
    /* The CA is not valid yet at the verification time: a chain error too. */
    cr_assert_eq(tlsx_verify(ca.cert, old.cert, NULL, 1700003600, &err), KERR_TLS);
    tlsx_pem_release(&old);
    tlsx_pem_release(&leaf);
    tlsx_pem_release(&ca);
}

Test(tlsx, generation_rejects_bad_options)
{
    struct tlsx_cert_opts none = { .cn = NULL };
    struct tlsx_cert_opts nosan = { .cn = "x" };
    struct tlsx_pem ca, out, empty = { NULL, NULL };
    struct kerr_info err;

    cr_assert_eq(tlsx_gen_ca(&none, &out, &err), KERR_INVAL);
    cr_assert_null(out.cert);
    make_ca(&ca, TLSX_KEY_EC_P256);
    cr_assert_eq(tlsx_gen_serving(&ca, &nosan, &out, &err), KERR_INVAL);
    cr_assert_not_null(strstr(err.msg, "SAN"));
    cr_assert_eq(tlsx_gen_client(&empty, &nosan, &out, &err), KERR_INVAL);
    cr_assert_null(out.key);
    tlsx_pem_release(&ca);
}

static char *tmp_dir(void)
{
    char tmpl[] = "/tmp/test_tlsx.XXXXXX";
    char *d = mkdtemp(tmpl);

    cr_assert_not_null(d);
    return strdup(d);
}

Test(tlsx, files_written_0600_and_loaded_back)
{
    struct tlsx_pem ca, loaded;
    struct kerr_info err;
    struct stat st;
    char *dir = tmp_dir(), cpath[256], kpath[256];

    make_ca(&ca, TLSX_KEY_EC_P256);
    snprintf(cpath, sizeof(cpath), "%s/ca.crt", dir);
    snprintf(kpath, sizeof(kpath), "%s/ca.key", dir);
    cr_assert_eq(tlsx_write_private(cpath, ca.cert, strlen(ca.cert), &err), KERR_OK, "%s", err.msg);
    cr_assert_eq(tlsx_write_private(kpath, ca.key, strlen(ca.key), &err), KERR_OK, "%s", err.msg);
    cr_assert_eq(stat(kpath, &st), 0);
    cr_assert_eq(st.st_mode & 0777, 0600);
    cr_assert_eq(tlsx_load_files(cpath, kpath, &loaded, &err), KERR_OK, "%s", err.msg);
    cr_assert_str_eq(loaded.key, ca.key);
    tlsx_pem_release(&loaded);
    cr_assert_eq(tlsx_load_files(cpath, "/nonexistent/key", &loaded, &err), KERR_IO);
    cr_assert_not_null(strstr(err.msg, "/nonexistent/key"), "%s", err.msg);
    cr_assert_eq(tlsx_load_files(kpath, kpath, &loaded, &err), KERR_TLS);
    cr_assert_eq(tlsx_write_private("/nonexistent/dir/f", "x", 1, &err), KERR_IO);
    unlink(cpath);
    unlink(kpath);
    rmdir(dir);
    free(dir);
    tlsx_pem_release(&ca);
}
