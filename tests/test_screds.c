#include "controller/snapshot/providers/screds.h"
#include "controller/snapshot/providers/scredsfile.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];

static void mkdir_tmp(void)
{
    snprintf(dir, sizeof dir, "/tmp/screds.XXXXXX");
    cr_assert_not_null(mkdtemp(dir));
}

static void put(const char *name, const char *content)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    cr_assert_not_null(f);
    fputs(content, f);
    fclose(f);
}

static void cleanup(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(screds, .init = mkdir_tmp, .fini = cleanup);

Test(screds, s3_dir_every_field)
{
    struct screds_s3 c;
    struct kerr_info err = { 0 };
    put("accessKeyID", "AKIA\n");
    put("secretAccessKey", "s3cr3t");
    put("region", "eu-west-1\n");
    put("endpoint", "https://minio.example:9000");
    put("s3ForcePathStyle", "true");
    put("insecureSkipVerify", "1");
    put("trustedCaCert", "-----BEGIN CERTIFICATE-----\nabc\n-----END CERTIFICATE-----\n");
    put("sseCustomerKey", "0123456789abcdef0123456789abcdef");
    put("sseCustomerAlgorithm", "AES256");
    put("bucketName", "bkt");
    put("unrelated", "ignored");
    cr_assert_eq(screds_s3_read(SCREDS_DIR, dir, &c, &err), KERR_OK, "%s", err.msg);
    cr_assert_str_eq(c.access_key, "AKIA");
    cr_assert_str_eq(c.secret_key, "s3cr3t");
    cr_assert_str_eq(c.region, "eu-west-1");
    cr_assert_str_eq(c.endpoint, "https://minio.example:9000");
    cr_assert(c.path_style);
    cr_assert(c.insecure);
    cr_assert_str_eq(c.ca_pem, "-----BEGIN CERTIFICATE-----\nabc\n-----END CERTIFICATE-----");
    cr_assert_str_eq(c.sse_key, "0123456789abcdef0123456789abcdef");
    cr_assert_str_eq(c.sse_alg, "AES256");
    cr_assert_str_eq(c.bucket, "bkt");
    screds_s3_release(&c);
    cr_assert_null(c.access_key);
}

Test(screds, s3_json_every_field)
{
    static const char j[] =
        "{\"accessKeyID\":\"A\",\"secretAccessKey\":\"S\",\"region\":\"r\","
        "\"endpoint\":\"http://127.0.0.1:1\",\"s3ForcePathStyle\":true,\"insecureSkipVerify\":"
        "false,\"trustedCaCert\":\"PEM\",\"sseCustomerKey\":\"0123456789abcdef0123456789abcdef\","
        "\"sseCustomerAlgorithm\":\"AES256\",\"bucketName\":\"b\",\"other\":[1]}";
    struct screds_s3 c;
    struct kerr_info err = { 0 };
    cr_assert_eq(screds_s3_parse_json(j, strlen(j), &c, &err), KERR_OK, "%s", err.msg);
    cr_assert_str_eq(c.access_key, "A");
    cr_assert_str_eq(c.secret_key, "S");
    cr_assert_str_eq(c.region, "r");
    cr_assert_str_eq(c.endpoint, "http://127.0.0.1:1");
    cr_assert(c.path_style);
    cr_assert_not(c.insecure);
    cr_assert_str_eq(c.ca_pem, "PEM");
    cr_assert_str_eq(c.bucket, "b");
    screds_s3_release(&c);
}

Test(screds, s3_malformed_json)
{
    static const struct {
        const char *json;
        const char *why;
    } bad[] = {
        { "", "credentials JSON" },
        { "[]", "not an object" },
        { "{\"accessKeyID\":\"A\"", "credentials JSON" },
        { "{\"secretAccessKey\":\"S\",\"region\":\"r\"}", "accessKeyID is missing" },
        { "{\"accessKeyID\":\"\",\"secretAccessKey\":\"S\",\"region\":\"r\"}",
          "accessKeyID is missing" },
        { "{\"accessKeyID\":\"A\",\"region\":\"r\"}", "secretAccessKey is missing" },
        { "{\"accessKeyID\":\"A\",\"secretAccessKey\":\"S\"}", "region is missing" },
        { "{\"accessKeyID\":1,\"secretAccessKey\":\"S\",\"region\":\"r\"}",
          "accessKeyID must be a JSON string" },
        { "{\"accessKeyID\":\"A\",\"secretAccessKey\":\"S\",\"region\":\"r\","
          "\"s3ForcePathStyle\":\"true\"}",
          "s3ForcePathStyle must be a JSON boolean" },
        { "{\"accessKeyID\":\"A\",\"secretAccessKey\":\"S\",\"region\":\"r\","
          "\"insecureSkipVerify\":1}",
          "insecureSkipVerify must be a JSON boolean" },
        { "{\"accessKeyID\":\"A\",\"secretAccessKey\":\"S\",\"region\":\"r\","
          "\"sseCustomerKey\":\"0123456789abcdef0123456789abcdef\"}",
          "must be given together" },
        { "{\"accessKeyID\":\"A\",\"secretAccessKey\":\"S\",\"region\":\"r\","
          "\"sseCustomerKey\":\"short\",\"sseCustomerAlgorithm\":\"AES256\"}",
          "32 bytes" },
        { "{\"accessKeyID\":\"A\",\"secretAccessKey\":\"S\",\"region\":\"r\","
          "\"sseCustomerKey\":\"0123456789abcdef0123456789abcdef\",\"sseCustomerAlgorithm\":"
          "\"aws:kms\"}",
          "is not AES256" },
        { "{\"accessKeyID\":\"A\",\"secretAccessKey\":\"S\",\"region\":\"r\","
          "\"endpoint\":\"ftp://x\"}",
          "not an http(s) URL" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct screds_s3 c;
        struct kerr_info err = { 0 };
        cr_assert_neq(screds_s3_parse_json(bad[i].json, strlen(bad[i].json), &c, &err), KERR_OK,
                      "accepted %s", bad[i].json);
        cr_assert(strstr(err.msg, bad[i].why) != NULL, "%s: \"%s\" lacks \"%s\"", bad[i].json,
                  err.msg, bad[i].why);
        cr_assert_null(c.access_key);
    }
}

Test(screds, s3_malformed_dir)
{
    struct screds_s3 c;
    struct kerr_info err = { 0 };
    put("accessKeyID", "A");
    put("secretAccessKey", "S");
    cr_assert_eq(screds_s3_read(SCREDS_DIR, dir, &c, &err), KERR_INVAL);
    cr_assert(strstr(err.msg, "region is missing"));
    put("region", "r");
    put("s3ForcePathStyle", "yes");
    cr_assert_eq(screds_s3_read(SCREDS_DIR, dir, &c, &err), KERR_PARSE);
    cr_assert(strstr(err.msg, "s3ForcePathStyle: \"yes\" is not a boolean"), "%s", err.msg);
    put("s3ForcePathStyle", "False\n");
    cr_assert_eq(screds_s3_read(SCREDS_DIR, dir, &c, &err), KERR_OK, "%s", err.msg);
    cr_assert_not(c.path_style);
    screds_s3_release(&c);
    cr_assert_eq(screds_s3_read(SCREDS_DIR, "/nonexistent-dir", &c, &err), KERR_INVAL);
    cr_assert(strstr(err.msg, "missing"));
    cr_assert_eq(screds_s3_read(SCREDS_JSON, "/nonexistent-file", &c, &err), KERR_NOTFOUND);
    cr_assert(strstr(err.msg, "/nonexistent-file"));
}

Test(screds, s3_env_order)
{
    struct screds_s3 c;
    struct kerr_info err = { 0 };
    char jp[128];
    put("accessKeyID", "fromdir");
    put("secretAccessKey", "S");
    put("region", "r");
    /* not named *.json: such a file in the directory would be read instead of the others */
    snprintf(jp, sizeof jp, "%s/creds-json", dir);
    FILE *f = fopen(jp, "w");
    fputs("{\"accessKeyID\":\"fromjson\",\"secretAccessKey\":\"S\",\"region\":\"r\"}", f);
    fclose(f);
    setenv("AWS_APPLICATION_CREDENTIALS", dir, 1);
    setenv("AWS_APPLICATION_CREDENTIALS_JSON", jp, 1);
    cr_assert_eq(screds_s3_from_env(&c, &err), KERR_OK, "%s", err.msg);
    cr_assert_str_eq(c.access_key, "fromjson");
    screds_s3_release(&c);
    unsetenv("AWS_APPLICATION_CREDENTIALS_JSON");
    cr_assert_eq(screds_s3_from_env(&c, &err), KERR_OK, "%s", err.msg);
    cr_assert_str_eq(c.access_key, "fromdir");
    screds_s3_release(&c);
    unsetenv("AWS_APPLICATION_CREDENTIALS");
    unsetenv("AWS_ACCESS_KEY_ID");
    cr_assert_eq(screds_s3_from_env(&c, &err), KERR_INVAL);
    cr_assert(strstr(err.msg, "AWS_APPLICATION_CREDENTIALS"));
}

Test(screds, abs_every_field_and_malformed)
{
    struct screds_abs c;
    struct kerr_info err = { 0 };
    put("storageAccount", "devstoreaccount1\n");
    put("storageKey", "a2V5a2V5");
    put("domain", "127.0.0.1:10000");
    put("emulatorEnabled", "true");
    cr_assert_eq(screds_abs_read(SCREDS_DIR, dir, &c, &err), KERR_OK, "%s", err.msg);
    cr_assert_str_eq(c.account, "devstoreaccount1");
    cr_assert_eq(c.key_len, 6);
    cr_assert_eq(memcmp(c.key, "keykey", 6), 0);
    cr_assert_str_eq(c.domain, "127.0.0.1:10000");
    cr_assert(c.emulator);
    screds_abs_release(&c);

    static const struct {
        const char *json;
        const char *why;
    } bad[] = {
        { "{\"storageKey\":\"a2V5\"}", "storageAccount is missing" },
        { "{\"storageAccount\":\"acc\"}", "storageKey is missing" },
        { "{\"storageAccount\":\"acc\",\"storageKey\":\"not base64!\"}", "not base64" },
        { "{\"storageAccount\":\"Acc\",\"storageKey\":\"a2V5\"}", "lowercase" },
        { "{\"storageAccount\":\"acc\",\"storageKey\":\"a2V5\",\"emulatorEnabled\":true}",
          "needs domain" },
        { "{\"storageAccount\":\"acc\",\"storageKey\":\"a2V5\",\"emulatorEnabled\":\"true\"}",
          "emulatorEnabled must be a JSON boolean" },
        { "{\"storageAccount\":\"acc\",\"storageKey\":\"a2V5\",\"domain\":7}",
          "domain must be a JSON string" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_assert_neq(screds_abs_parse_json(bad[i].json, strlen(bad[i].json), &c, &err), KERR_OK,
                      "accepted %s", bad[i].json);
        cr_assert(strstr(err.msg, bad[i].why) != NULL, "%s: \"%s\" lacks \"%s\"", bad[i].json,
                  err.msg, bad[i].why);
    }
    static const char ok[] = "{\"storageAccount\":\"acc\",\"storageKey\":\"a2V5\"}";
    cr_assert_eq(screds_abs_parse_json(ok, strlen(ok), &c, &err), KERR_OK, "%s", err.msg);
    cr_assert_null(c.domain);
    cr_assert_not(c.emulator);
    screds_abs_release(&c);
    unsetenv("AZURE_APPLICATION_CREDENTIALS");
    unsetenv("AZURE_APPLICATION_CREDENTIALS_JSON");
    cr_assert_eq(screds_abs_from_env(&c, &err), KERR_INVAL);
    cr_assert(strstr(err.msg, "AZURE_APPLICATION_CREDENTIALS"));
}

Test(screds, ocs_dir_and_ecs_env_are_path_style_with_the_scheme_from_disable_ssl)
{
    struct screds_s3 c;
    struct kerr_info err = { 0 };
    put("accessKeyID", "ak");
    put("secretAccessKey", "sk");
    put("region", "r1");
    put("endpoint", "ocs.example:9000");
    put("disableSSL", "true\n");
    setenv("OPENSHIFT_APPLICATION_CREDENTIALS", dir, 1);
    unsetenv("OPENSHIFT_APPLICATION_CREDENTIALS_JSON");
    cr_assert_eq(screds_ocs_from_env(&c, &err), KERR_OK, "%s", err.msg);
    cr_assert_str_eq(c.endpoint, "http://ocs.example:9000");
    cr_assert(c.path_style);
    screds_s3_release(&c);
    put("disableSSL", "false");
    cr_assert_eq(screds_ocs_from_env(&c, &err), KERR_OK, "%s", err.msg);
    cr_assert_str_eq(c.endpoint, "https://ocs.example:9000");
    screds_s3_release(&c);
    put("endpoint", "");
    cr_assert_eq(screds_ocs_from_env(&c, &err), KERR_INVAL);
    cr_assert(strstr(err.msg, "endpoint"), "%s", err.msg);
    unsetenv("OPENSHIFT_APPLICATION_CREDENTIALS");

    setenv("ECS_ENDPOINT", "https://ecs.example", 1);
    setenv("ECS_ACCESS_KEY_ID", "ak", 1);
    unsetenv("ECS_SECRET_ACCESS_KEY");
    cr_assert_eq(screds_ecs_from_env(&c, &err), KERR_INVAL);
    cr_assert(strstr(err.msg, "ECS_SECRET_ACCESS_KEY"), "%s", err.msg);
    setenv("ECS_SECRET_ACCESS_KEY", "sk", 1);
    setenv("ECS_DISABLE_SSL", "not-a-bool", 1);
    cr_assert_eq(screds_ecs_from_env(&c, &err), KERR_OK, "%s", err.msg);
    cr_assert_str_eq(c.endpoint, "https://ecs.example");
    cr_assert_str_eq(c.region, "US-Standard");
    cr_assert(c.path_style && !c.disable_ssl);
    screds_s3_release(&c);
}

Test(screds, s3_env_chain_session_token_and_web_identity)
{
    struct screds_s3 c;
    struct kerr_info err = { 0 };
    char missing[128], tok[128];
    unsetenv("AWS_APPLICATION_CREDENTIALS_JSON");
    snprintf(missing, sizeof missing, "%s/not-mounted", dir);
    setenv("AWS_APPLICATION_CREDENTIALS", missing, 1); /* as etcd-druid sets it without a Secret */
    setenv("AWS_ACCESS_KEY_ID", "ASIATEMP", 1);
    setenv("AWS_SECRET_ACCESS_KEY", "S", 1);
    setenv("AWS_SESSION_TOKEN", "FwoGZXIvYXdzE", 1);
    unsetenv("AWS_REGION");
    setenv("AWS_DEFAULT_REGION", "eu-central-1", 1);
    cr_assert_eq(screds_s3_from_env(&c, &err), KERR_OK, "%s", err.msg);
    cr_assert_str_eq(c.access_key, "ASIATEMP");
    cr_assert_str_eq(c.session_token, "FwoGZXIvYXdzE");
    cr_assert_str_eq(c.region, "eu-central-1");
    cr_assert_not(screds_s3_web_identity(&c));
    screds_s3_release(&c);

    unsetenv("AWS_ACCESS_KEY_ID");
    unsetenv("AWS_SECRET_ACCESS_KEY");
    unsetenv("AWS_SESSION_TOKEN");
    snprintf(tok, sizeof tok, "%s/token", dir);
    put("token", "eyJhbGciOi");
    setenv("AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/etcd-backup", 1);
    setenv("AWS_WEB_IDENTITY_TOKEN_FILE", tok, 1);
    setenv("AWS_ROLE_SESSION_NAME", "etcd-main", 1);
    cr_assert_eq(screds_s3_from_env(&c, &err), KERR_OK, "%s", err.msg);
    cr_assert(screds_s3_web_identity(&c));
    cr_assert_null(c.access_key);
    cr_assert_str_eq(c.role_arn, "arn:aws:iam::123456789012:role/etcd-backup");
    cr_assert_str_eq(c.token_path, tok);
    cr_assert_str_eq(c.session_name, "etcd-main");
    screds_s3_release(&c);

    unsetenv("AWS_DEFAULT_REGION");
    cr_assert_eq(screds_s3_from_env(&c, &err), KERR_INVAL);
    cr_assert(strstr(err.msg, "does not exist"), "%s", err.msg);
    unsetenv("AWS_ROLE_ARN");
    unsetenv("AWS_WEB_IDENTITY_TOKEN_FILE");
    unsetenv("AWS_ROLE_SESSION_NAME");
    unsetenv("AWS_APPLICATION_CREDENTIALS");
}

Test(screds, s3_json_file_in_the_directory_wins)
{
    struct screds_s3 c;
    struct kerr_info err = { 0 };
    char *p = NULL;
    put("accessKeyID", "fromfiles");
    put("secretAccessKey", "S");
    put("region", "r");
    cr_assert_eq(scredsfile_dir_json(dir, &p, &err), KERR_OK);
    cr_assert_null(p);
    /* the first by name of the *.json entries; "json" without the dot is no extension */
    put("zz.json", "{\"accessKeyID\":\"fromzz\",\"secretAccessKey\":\"S\",\"region\":\"r\"}");
    put("b.json", "{\"accessKeyID\":\"fromb\",\"secretAccessKey\":\"S\",\"region\":\"x\"}");
    put("a.json.bak", "{}");
    put("ajson", "{}");
    cr_assert_eq(screds_s3_read(SCREDS_DIR, dir, &c, &err), KERR_OK, "%s", err.msg);
    cr_assert_str_eq(c.access_key, "fromb");
    cr_assert_str_eq(c.region, "x");
    screds_s3_release(&c);
    /* a broken JSON file is an error naming it, never a fall-back to the per-key files */
    put("a.json", "{\"accessKeyID\":");
    cr_assert_neq(screds_s3_read(SCREDS_DIR, dir, &c, &err), KERR_OK);
    cr_assert(strstr(err.msg, "a.json"), "%s", err.msg);
    /* ABS reads it the same way */
    put("a.json", "{\"storageAccount\":\"acct\",\"storageKey\":\"a2V5\"}");
    struct screds_abs a;
    cr_assert_eq(screds_abs_read(SCREDS_DIR, dir, &a, &err), KERR_OK, "%s", err.msg);
    cr_assert_str_eq(a.account, "acct");
    screds_abs_release(&a);
    cr_assert_eq(scredsfile_dir_json("/nonexistent-dir", &p, &err), KERR_NOTFOUND);
}

Test(screds, s3_web_identity_and_checksum_fields)
{
    struct screds_s3 c;
    struct kerr_info err = { 0 };
    char tok[128];
    snprintf(tok, sizeof tok, "%s/token", dir);
    put("roleARN", "arn:aws:iam::123456789012:role/etcd\n");
    put("region", "eu-west-1");
    put("token", "eyJhbGciOi\n");
    put("requestChecksumCalculation", "WHEN_REQUIRED\n");
    put("responseChecksumValidation", "when_supported");
    cr_assert_eq(screds_s3_read(SCREDS_DIR, dir, &c, &err), KERR_OK, "%s", err.msg);
    cr_assert(screds_s3_web_identity(&c));
    cr_assert_str_eq(c.role_arn, "arn:aws:iam::123456789012:role/etcd");
    cr_assert_str_eq(c.token_path, tok); /* the file's path: read again at each renewal */
    cr_assert_eq(c.req_cs, SCREDS_CS_WHEN_REQUIRED);
    cr_assert_eq(c.resp_cs, SCREDS_CS_WHEN_SUPPORTED);
    screds_s3_release(&c);

    /* static keys win over web identity, as upstream */
    put("accessKeyID", "AK");
    put("secretAccessKey", "SK");
    cr_assert_eq(screds_s3_read(SCREDS_DIR, dir, &c, &err), KERR_OK, "%s", err.msg);
    cr_assert_not(screds_s3_web_identity(&c) && c.access_key == NULL);
    cr_assert_str_eq(c.access_key, "AK");
    screds_s3_release(&c);

    put("requestChecksumCalculation", "ALWAYS");
    cr_assert_eq(screds_s3_read(SCREDS_DIR, dir, &c, &err), KERR_INVAL);
    cr_assert(strstr(err.msg, "requestChecksumCalculation"), "%s", err.msg);
    cr_assert(strstr(err.msg, "WHEN_SUPPORTED or WHEN_REQUIRED"), "%s", err.msg);

    /* a JSON text read from no directory: its tokenPath could name any file */
    const char *j = "{\"roleARN\":\"arn:aws:iam::1:role/r\",\"tokenPath\":\"/var/run/token\","
                    "\"region\":\"r\",\"responseChecksumValidation\":\"When_Required\"}";
    cr_assert_eq(screds_s3_parse_json(j, strlen(j), &c, &err), KERR_INVAL);
    cr_assert(strstr(err.msg, "credentials directory"), "%s", err.msg);
    j = "{\"accessKeyID\":\"a\",\"secretAccessKey\":\"s\",\"region\":\"r\","
        "\"responseChecksumValidation\":\"When_Required\"}";
    cr_assert_eq(screds_s3_parse_json(j, strlen(j), &c, &err), KERR_OK, "%s", err.msg);
    cr_assert_eq(c.resp_cs, SCREDS_CS_WHEN_REQUIRED);
    cr_assert_eq(c.req_cs, SCREDS_CS_UNSET);
    screds_s3_release(&c);
    /* "token" is the directory form's file; in JSON the key is tokenPath */
    j = "{\"roleARN\":\"arn:aws:iam::1:role/r\",\"token\":\"/var/run/token\",\"region\":\"r\"}";
    cr_assert_eq(screds_s3_parse_json(j, strlen(j), &c, &err), KERR_INVAL);
    cr_assert(strstr(err.msg, "roleARN and token"), "%s", err.msg);
    j = "{\"region\":\"r\",\"responseChecksumValidation\":true}";
    cr_assert_eq(screds_s3_parse_json(j, strlen(j), &c, &err), KERR_PARSE);
}

/*
 * Web identity from a destination Secret: tokenPath only inside the mounted credentials
 * directory (the copy Job mounts the source's Secret too: its keys must not be posted as a
 * "token"), and the region a DNS label (it is pasted into the STS host).
 */
Test(screds, web_identity_stays_in_its_directory)
{
    struct screds_s3 c;
    struct kerr_info err = { 0 };
    char json[256], j[512], outside[64], link[256];

    snprintf(outside, sizeof outside, "/tmp/screds-out.XXXXXX");
    cr_assert_not_null(mkdtemp(outside));
    snprintf(json, sizeof json, "%s/c.json", dir);
    put("token", "eyJ\n");
    snprintf(j, sizeof j,
             "{\"roleARN\":\"arn:aws:iam::1:role/r\",\"tokenPath\":\"%s/token\","
             "\"region\":\"eu-west-1\"}",
             dir);
    put("c.json", j);
    cr_assert_eq(screds_s3_read(SCREDS_JSON, json, &c, &err), KERR_OK, "%s", err.msg);
    screds_s3_release(&c);
    cr_assert_eq(screds_s3_read(SCREDS_DIR, dir, &c, &err), KERR_OK, "%s", err.msg);
    screds_s3_release(&c);

    const char *bad[] = { "/etc/passwd", "/../screds-out", "/nothing" };
    for (size_t i = 0; i < 3; i++) {
        char tp[256];
        snprintf(tp, sizeof tp, "%s%s", i ? dir : "", bad[i]);
        snprintf(j, sizeof j,
                 "{\"roleARN\":\"arn:aws:iam::1:role/r\",\"tokenPath\":\"%s\","
                 "\"region\":\"eu-west-1\"}",
                 tp);
        put("c.json", j);
        cr_expect_eq(screds_s3_read(SCREDS_JSON, json, &c, &err), KERR_INVAL, "%s", tp);
        cr_expect(strstr(err.msg, "tokenPath"), "%s", err.msg);
    }
    /* a symbolic link inside pointing outside is outside */
    snprintf(link, sizeof link, "%s/evil", dir);
    cr_assert_eq(symlink("/etc/hostname", link), 0);
    snprintf(j, sizeof j,
             "{\"roleARN\":\"arn:aws:iam::1:role/r\",\"tokenPath\":\"%s\","
             "\"region\":\"eu-west-1\"}",
             link);
    put("c.json", j);
    cr_expect_eq(screds_s3_read(SCREDS_JSON, json, &c, &err), KERR_INVAL);

    const char *regions[] = { "evil.example.com/x?", "EU-WEST-1", "a.b", "-x", "" };
    for (size_t i = 0; i < 5; i++) {
        snprintf(j, sizeof j,
                 "{\"roleARN\":\"arn:aws:iam::1:role/r\",\"tokenPath\":\"%s/token\","
                 "\"region\":\"%s\"}",
                 dir, regions[i]);
        put("c.json", j);
        cr_expect_eq(screds_s3_read(SCREDS_JSON, json, &c, &err), KERR_INVAL, "region %s",
                     regions[i]);
    }
    cr_expect(screds_dns_label("eu-west-1"));
    cr_expect(screds_dns_label("us-gov-west-1"));
    rmdir(outside);
}
