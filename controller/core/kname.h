/*
 * kname - names and label values the controller derives from an Etcd's name,
 * always ones kube-apiserver accepts.
 *
 * An Etcd's name is a DNS-1123 subdomain of up to 253 characters (etcd-druid's
 * CRD adds no length rule of its own), but what the controller builds from it
 * has tighter limits: a label value at most 63 characters, a CronJob name at
 * most 52, any object name at most 253. When the plain form fits it is used
 * unchanged (so short names keep the names users know); when it does not, the
 * base is cut and "-" plus the first KNAME_HASH_LEN hex digits of the sha256
 * of the whole base is inserted before the suffix. The cut never leaves a '.'
 * before the hash's '-', so the result keeps the syntax of its input: a
 * subdomain stays a subdomain, a label value stays a label value. Different
 * bases give different results unless their hashes collide. (A CronJob name
 * so cut is what the controller has always used: the first 43 characters,
 * '-', 8 hex digits.)
 *
 * Ownership: arguments BORROWED; output into caller buffers.
 * Thread safety: reentrant.
 */
#ifndef CONTROLLER_KNAME_H
#define CONTROLLER_KNAME_H

#include <stddef.h>

#include "common/kerr.h"

#define KNAME_LABEL_MAX     63  /* label value, DNS-1123 label */
#define KNAME_SUBDOMAIN_MAX 253 /* object names */
#define KNAME_CRONJOB_MAX   52  /* kube-apiserver: 63 minus the Job suffix of 11 */
#define KNAME_HASH_LEN      8

/*
 * base + suffix into out when that is at most max characters, else base cut
 * + "-" + hash(base) + suffix. KERR_INVAL when even an empty cut cannot fit
 * (max < 2 + KNAME_HASH_LEN + strlen(suffix)) or base is empty; KERR_TOOBIG
 * when n <= the result's length.
 */
enum kerr kname_join(const char *base, const char *suffix, size_t max, char *out, size_t n);

/* A label value for s (kname_join(s, "", KNAME_LABEL_MAX)); out holds KNAME_LABEL_MAX + 1. */
enum kerr kname_label_value(const char *s, char out[KNAME_LABEL_MAX + 1]);

/*
 * The name of the Job of kind tag that owner's controller runs: a DNS-1123
 * label of at most KNAME_LABEL_MAX characters, one per (tag, owner).
 *   - "<owner>--<tag>" when owner is a label without "--" and this fits;
 *   - else "<cut>--<tag>-<hash>": cut is owner with every run of characters
 *     other than [a-z0-9] turned into one '-', shortened to what fits and
 *     without a '-' at either end; hash the first KNAME_HASH_LEN hex digits
 *     of the sha256 of the whole owner.
 * The first "--" of a name ends the part the owner gives (neither owner in
 * the plain form nor cut contains one), so what follows it, the tag alone
 * or the tag and a hash, says which kind of Job and which form it is: two
 * tags give different names whatever the owners are called (an owner named
 * "x--copy" or "x-delete" included), and two owners of one tag differ in
 * the plain form by name and in the cut form by hash. tag is [a-z] words
 * joined by single '-', its last word not KNAME_HASH_LEN hex digits (so a
 * tag alone never reads as another tag and a hash). KERR_INVAL for an empty
 * owner or a tag breaking these rules or longer than
 * KNAME_LABEL_MAX - 4 - KNAME_HASH_LEN.
 */
enum kerr kname_job(const char *owner, const char *tag, char out[KNAME_LABEL_MAX + 1]);

#endif
