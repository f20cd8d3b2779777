/*
 * libFuzzer target: etcd's data-dir read from an etcd.conf.yaml a tenant wrote
 * (webhook/cfgguard.h), and the claim it lies on.
 *
 * Input: the YAML text as it is. Properties checked:
 *   - nothing crashes or leaks; cfgguard_data_dir answers KERR_OK or KERR_PARSE (with a
 *     message naming etcd.conf.yaml), and on KERR_OK a non-empty data-dir shorter than its
 *     buffer, without NUL bytes;
 *   - a data-dir cfgguard_claim_of places on etcd-druid's claim is absolute, has no "." or ".."
 *     component and lies at or below /var/etcd/data;
 *   - cfgguard_dirs_read agrees with cfgguard_data_dir (the same answer, the same data-dir);
 *   - directories cfgguard_druid_place puts where etcd-druid does with its StatefulSet gone
 *     (rule 3) lie on its claim (rule 1): data-dir and the WAL (cfgguard_wal_of), and data-dir
 *     is new.etcd directly in /var/etcd/data; they are in the same place as themselves;
 *   - cfgguard_etcd_of on the text (as a name) gives the text without "-config" or 0;
 *   - the other keys (webhook/cfgkeys.h): cfgkeys_read answers KERR_OK or KERR_PARSE naming
 *     etcd.conf.yaml, on KERR_OK with NUL-terminated values shorter than their buffers; a
 *     configuration replacing itself is refused only for force-new-cluster or unsafe-no-fsync;
 *     cfgkeys_refused on the text agrees with cfgkeys_read and cfgkeys_problem, and a
 *     configuration it admits over nothing has etcd-druid's identity.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "webhook/cfgguard.h"
#include "webhook/cfgkeys.h"
#include "webhook/datamnt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* p has a "." or ".." component. */
static int dotted(const char *p)
{
    while (*p) {
        size_t n;

        while (*p == '/')
            p++;
        n = strcspn(p, "/");
        if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
            return 1;
        p += n;
    }
    return 0;
}

/* The directories of the text: the properties above. */
static void check_dirs(const uint8_t *data, size_t size)
{
    static struct cfgguard_dirs d; /* the fuzzer runs one input at a time */
    static char big[CFGGUARD_DIR_MAX];
    char wal[CFGGUARD_WAL_MAX];
    enum kerr rd, rb;

    rd = cfgguard_dirs_read((const char *)data, size, &d, NULL);
    rb = cfgguard_data_dir((const char *)data, size, big, sizeof(big), NULL);
    if (rd != rb || (rd == KERR_OK && strcmp(d.data, big) != 0))
        abort();
    if (rd != KERR_OK || !cfgguard_druid_place(NULL, &d))
        return;
    cfgguard_wal_of(&d, wal, sizeof(wal));
    if (!cfgguard_claim_of(NULL, d.data) || !cfgguard_claim_of(NULL, wal) ||
        !cfgguard_same_place(&d, &d) || !strstr(d.data, CFGGUARD_DATA_SUBDIR) ||
        !datamnt_below(d.data, DATAMNT_DRUID_PATH "/" CFGGUARD_DATA_SUBDIR) ||
        !datamnt_below(DATAMNT_DRUID_PATH "/" CFGGUARD_DATA_SUBDIR, d.data))
        abort();
}

/* The other keys of text (NUL-terminated, len bytes up to its first NUL): the properties above. */
static void check_keys(const char *text)
{
    static struct cfgkeys k; /* the fuzzer runs one input at a time */
    static char why[4096];
    struct kerr_info e;
    enum kerr rc;
    int bad;

    kerr_clear(&e);
    rc = cfgkeys_read(text, strlen(text), &k, &e);
    if (rc != KERR_OK && (rc != KERR_PARSE || !strstr(e.msg, CFGKEYS_FILE)))
        abort();
    bad = cfgkeys_refused(text, NULL, NULL, why, sizeof(why));
    if (rc != KERR_OK) {
        if (!bad)
            abort();
        return;
    }
    if (memchr(k.name, '\0', sizeof(k.name)) == NULL ||
        memchr(k.token, '\0', sizeof(k.token)) == NULL ||
        memchr(k.state, '\0', sizeof(k.state)) == NULL)
        abort();
    if (cfgkeys_problem(&k, &k, NULL, why, sizeof(why)) != (k.force_new || k.no_fsync))
        abort();
    if (bad != cfgkeys_problem(&k, NULL, NULL, why, sizeof(why)))
        abort();
    if (!bad &&
        (strcmp(k.name, CFGKEYS_DRUID_NAME) != 0 || strcmp(k.token, CFGKEYS_DRUID_TOKEN) != 0 ||
         strcmp(k.state, CFGKEYS_DRUID_STATE) != 0 || k.force_new || k.no_fsync))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char dir[64], etcd[LOOKUP_NAME_MAX + 1], *name;
    struct kerr_info e;
    enum kerr rc;

    kerr_clear(&e);
    rc = cfgguard_data_dir((const char *)data, size, dir, sizeof(dir), &e);
    if (rc != KERR_OK && (rc != KERR_PARSE || !strstr(e.msg, CFGGUARD_KEY)))
        abort();
    if (rc == KERR_OK) {
        if (!dir[0] || strlen(dir) >= sizeof(dir))
            abort();
        if (cfgguard_claim_of(NULL, dir) &&
            (dir[0] != '/' || dotted(dir) || !datamnt_below(dir, DATAMNT_DRUID_PATH)))
            abort();
    }
    check_dirs(data, size);
    if (!(name = malloc(size + 1)))
        return 0;
    memcpy(name, data, size);
    name[size] = '\0';
    check_keys(name);
    if (cfgguard_etcd_of(name, etcd, sizeof(etcd)) &&
        (strlen(etcd) + strlen(CFGGUARD_SUFFIX) != strlen(name) ||
         strncmp(etcd, name, strlen(etcd)) != 0 || !etcd[0]))
        abort();
    free(name);
    return 0;
}
