/* kname: plain names kept, long ones cut with a hash; every name the controller derives from the
 * longest valid Etcd names (56: etcd-druid's "<name>-client" Service; 63; 253 with dots) passes
 * kube-sim's kube-apiserver rules: task names, CronJob names, label values, final-snapshot task
 * names, and the names of events about such objects. */
#include "controller/core/kname.h"

#include <criterion/criterion.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "common/evseries.h"
#include "controller/core/imtjob.h"
#include "tests/kube-sim/validate.h"

static char why[1024];

#define SUBDOMAIN(s) cr_assert(ksim_valid_subdomain((s), why, sizeof(why)), "%s: %s", (s), why)
#define LABEL(s)     cr_assert(ksim_valid_label_value((s), why, sizeof(why)), "%s: %s", (s), why)

/* A name of n characters: "e-" and then a repeating pattern with '-' and (dotted) '.'. */
static void long_name(char *out, size_t n, int dotted)
{
    size_t i;

    for (i = 0; i < n; i++)
        out[i] = (i % 7 == 6) ? (dotted && i % 2 ? '.' : '-') : (char)('a' + i % 26);
    out[n] = '\0';
    if (n > 0 && !isalnum((unsigned char)out[n - 1]))
        out[n - 1] = 'z';
}

Test(kname, plain_when_it_fits)
{
    char out[KNAME_SUBDOMAIN_MAX + 1];

    cr_assert_eq(kname_join("main", "-extend-immutability", 63, out, sizeof(out)), KERR_OK);
    cr_assert_str_eq(out, "main-extend-immutability");
    cr_assert_eq(kname_label_value("etcd-main", out), KERR_OK);
    cr_assert_str_eq(out, "etcd-main");
    cr_assert_eq(kname_label_value("", out), KERR_OK);
    cr_assert_str_eq(out, "");
}

Test(kname, cut_with_a_hash_and_never_before_a_separator)
{
    char a[KNAME_SUBDOMAIN_MAX + 1], b[KNAME_SUBDOMAIN_MAX + 1];
    const char *x = "abcdefghijklmnopqrstuvwxyz-abcdefghijklmnopqrstuvwxyz-abcdefghijkl";

    cr_assert_eq(kname_join(x, "-sfx", 40, a, sizeof(a)), KERR_OK);
    cr_assert_leq(strlen(a), 40);
    cr_assert_eq(strncmp(a, x, 26), 0, "%s", a);
    cr_assert(strstr(a, "-sfx") == a + strlen(a) - 4, "%s", a);
    cr_assert_eq(kname_join("abcdefghijklmnopqrstuvwxyz-abcdefghijklmnopqrstuvwxyz-abcdefghijkm",
                            "-sfx", 40, b, sizeof(b)),
                 KERR_OK);
    cr_assert_str_neq(a, b, "the hash tells the names apart");
    /* a cut ending in '.' drops it ("a.-" is no subdomain); one ending in '-' keeps it */
    cr_assert_eq(kname_join("abc.defghijklmnop", "", 4 + 1 + KNAME_HASH_LEN, a, sizeof(a)),
                 KERR_OK);
    cr_assert_eq(strncmp(a, "abc-", 4), 0, "%s", a);
    cr_assert_eq(strlen(a), 3 + 1 + KNAME_HASH_LEN, "%s", a);
    SUBDOMAIN(a);
    cr_assert_eq(kname_join(x, "", 27 + 1 + KNAME_HASH_LEN, a, sizeof(a)), KERR_OK);
    cr_assert_eq(strncmp(a, x, 27), 0, "%s", a);
    cr_assert_eq(a[27], '-', "%s", a);
    SUBDOMAIN(a);
    LABEL(a);
    cr_assert_eq(kname_join(x, "-a-long-suffix", 12, a, sizeof(a)), KERR_INVAL);
    cr_assert_eq(kname_join("", "-s", 40, a, sizeof(a)), KERR_INVAL);
    cr_assert_eq(kname_join(x, "", 63, a, 10), KERR_TOOBIG);
}

/* Every derived name for an Etcd called name. */
static void check_all(const char *name)
{
    char task[KNAME_SUBDOMAIN_MAX + 1], cj[IMTJOB_CRONJOB_MAX + 1], lab[KNAME_LABEL_MAX + 1];
    char pre[KNAME_SUBDOMAIN_MAX + 1];

    SUBDOMAIN(name);
    cr_assert_eq(imtjob_task_name(name, task, sizeof(task)), KERR_OK, "%s", name);
    SUBDOMAIN(task);
    imtjob_cronjob_name(task, cj);
    SUBDOMAIN(cj);
    cr_assert_leq(strlen(cj), KSIM_CRONJOB_NAME_MAX, "%s", cj);
    cr_assert_eq(kname_label_value(name, lab), KERR_OK);
    LABEL(lab);
    cr_assert_eq(kname_label_value(task, lab), KERR_OK);
    LABEL(lab);
    /* hibernation's EtcdOpsTask "<etcd>-final-snapshot-<n>" (n up to 7 digits) */
    cr_assert_eq(kname_join(name, "-final-snapshot-", KNAME_SUBDOMAIN_MAX - 7, pre, sizeof(pre)),
                 KERR_OK);
    snprintf(pre + strlen(pre), sizeof(pre) - strlen(pre), "%d", 1000000);
    SUBDOMAIN(pre);
}

Test(kname, every_derived_name_at_the_longest_valid_names)
{
    char name[KNAME_SUBDOMAIN_MAX + 1];
    size_t n;

    for (n = 1; n <= KNAME_SUBDOMAIN_MAX; n++) {
        long_name(name, n, 0);
        check_all(name);
        long_name(name, n, 1);
        check_all(name);
    }
}

Test(kname, event_names_about_the_longest_names)
{
    char name[KNAME_SUBDOMAIN_MAX + 1];
    const char *f[EVS_F_COUNT] = { "druid.gardener.cloud/v1alpha1",
                                   "Etcd",
                                   "ns",
                                   name,
                                   "uid",
                                   "Normal",
                                   "Hibernated",
                                   "Hibernation",
                                   "note" };
    struct evs_cache c;
    struct evs_item *it = NULL;
    int evicted = 0;

    /* the regarding name is cut to EVS_NAME_PART_MAX: here just after a '-' */
    memset(name, 'a', EVS_NAME_PART_MAX - 1);
    name[EVS_NAME_PART_MAX - 1] = '-';
    memset(name + EVS_NAME_PART_MAX, 'b', KNAME_SUBDOMAIN_MAX - EVS_NAME_PART_MAX);
    name[KNAME_SUBDOMAIN_MAX] = '\0';
    SUBDOMAIN(name);
    evs_init(&c, 600LL * 1000000000LL, 16, -1, 0);
    cr_assert_eq(evs_item_new(f, 1024, &it), KERR_OK);
    cr_assert_eq(evs_ingest(&c, it, 1, &evicted), EVS_NEW);
    SUBDOMAIN(c.first->name);
    evs_release(&c);
}

/* The tags of the controller's Jobs (controller/backups/ebk.h, erst.h, bkejob.h). */
static const char *const TAGS[] = { "copy", "delete-copy", "restore", "delete" };
#define NTAGS (sizeof(TAGS) / sizeof(TAGS[0]))

Test(kname, job_names_one_per_kind_and_owner)
{
    /* owners named after the others' names: a name with a tag in it, a "--", a dot, the cut
     * form of a long name written out, the longest names (plain and cut) */
    static char owners[20][KNAME_SUBDOMAIN_MAX + 1] = {
        "x",      "x-delete", "x-copy", "x--copy", "x--delete-copy", "x-delete-copy",
        "x.copy", "x-d",      "copy",   "delete",  "x--restore",     "x-restore",
    };
    static char names[20 * NTAGS][KNAME_LABEL_MAX + 1];
    char cut[KNAME_LABEL_MAX + 1];
    size_t n = 12, i, j, k = 0;

    long_name(owners[n++], KNAME_SUBDOMAIN_MAX, 1);
    long_name(owners[n++], KNAME_LABEL_MAX, 0);
    long_name(owners[n++], KNAME_LABEL_MAX - 2 - 4, 0); /* "<63 - 6>--copy": plain, 63 */
    /* the cut name of owners[12] with the tag "copy", minus "--copy": an owner whose plain
     * name would be that cut name if the tag did not end the owner's part */
    cr_assert_eq(kname_job(owners[12], "copy", cut), KERR_OK);
    snprintf(owners[n++], KNAME_SUBDOMAIN_MAX + 1, "%.*s-%s", (int)(strstr(cut, "--") - cut), cut,
             strrchr(cut, '-') + 1);
    snprintf(owners[n++], KNAME_SUBDOMAIN_MAX + 1, "%s", cut); /* the cut name itself */
    for (i = 0; i < n; i++)
        for (j = 0; j < NTAGS; j++, k++) {
            cr_assert_eq(kname_job(owners[i], TAGS[j], names[k]), KERR_OK, "%s %s", owners[i],
                         TAGS[j]);
            cr_assert(ksim_valid_dns1123_label(names[k], why, sizeof(why)), "%s: %s", names[k],
                      why);
        }
    for (i = 0; i < k; i++)
        for (j = i + 1; j < k; j++)
            cr_assert_str_neq(names[i], names[j], "%s (%s) and %s (%s)", owners[i / NTAGS],
                              TAGS[i % NTAGS], owners[j / NTAGS], TAGS[j % NTAGS]);
    /* short names keep the name users know */
    cr_assert_str_eq(names[0], "x--copy");
    cr_assert_str_eq(names[1 * NTAGS + 0], "x-delete--copy");
    cr_assert_str_eq(names[0 * NTAGS + 1], "x--delete-copy");
    cr_assert_eq(strlen(names[14 * NTAGS]), KNAME_LABEL_MAX, "%s", names[14 * NTAGS]);
    cr_assert_null(strchr(names[14 * NTAGS], '.'));
}

Test(kname, job_name_refuses_bad_tags_and_owners)
{
    char out[KNAME_LABEL_MAX + 1];
    char tag[KNAME_LABEL_MAX + 1];

    cr_assert_eq(kname_job("", "copy", out), KERR_INVAL);
    cr_assert_eq(kname_job(NULL, "copy", out), KERR_INVAL);
    cr_assert_eq(kname_job("x", "", out), KERR_INVAL);
    cr_assert_eq(kname_job("x", "-copy", out), KERR_INVAL);
    cr_assert_eq(kname_job("x", "copy-", out), KERR_INVAL);
    cr_assert_eq(kname_job("x", "a--b", out), KERR_INVAL);
    cr_assert_eq(kname_job("x", "Copy", out), KERR_INVAL);
    cr_assert_eq(kname_job("x", "copy2", out), KERR_INVAL);
    /* a last word of 8 hex digits would read as the hash of the cut form */
    cr_assert_eq(kname_job("x", "copy-deadbeef", out), KERR_INVAL);
    cr_assert_eq(kname_job("x", "copy-deadbeefa", out), KERR_OK);
    memset(tag, 'a', KNAME_LABEL_MAX - 4 - KNAME_HASH_LEN);
    tag[KNAME_LABEL_MAX - 4 - KNAME_HASH_LEN] = '\0';
    cr_assert_eq(kname_job("x", tag, out), KERR_OK);
    cr_assert_eq(kname_job(".-.", tag, out), KERR_OK, "an owner of no letters still gets a name");
    cr_assert(ksim_valid_dns1123_label(out, why, sizeof(why)), "%s: %s", out, why);
    tag[KNAME_LABEL_MAX - 4 - KNAME_HASH_LEN] = 'a';
    tag[KNAME_LABEL_MAX - 3 - KNAME_HASH_LEN] = '\0';
    cr_assert_eq(kname_job("x", tag, out), KERR_INVAL);
}
