/*
 * ostore - the object-store interface warden-snapshot works through, and
 * the provider-independent parts: listings, and the two copy strategies
 * (server-side copy where the provider has one, streaming through one
 * bounded buffer otherwise).
 *
 * The providers (controller/snapshot/providers/) implement struct
 * ostore_ops and include this header; this module includes none of them.
 * A store is opened by etcd-druid's provider name through the provider
 * table, ptable_open (controller/snapshot/providers/ptable.h).
 *
 * Every write is create-only: a provider never replaces an existing object
 * (conditional request where it has one, and ostore_copy checks first), and
 * an upload that fails is aborted so no partial object is left.
 *
 * Ownership: a struct ostore is OWNED by its opener and freed with
 * ostore_free. Listings OWN their objects (ostore_list_release).
 * Thread safety: one store per thread.
 */
#ifndef CONTROLLER_SNAPSHOT_OSTORE_H
#define CONTROLLER_SNAPSHOT_OSTORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/kerr.h"

/*
 * The mark every object warden-snapshot writes carries, and nothing else writes: object
 * metadata etcd-warden-copy=true (S3 x-amz-meta-etcd-warden-copy; ABS
 * x-ms-meta-etcdwardencopy, ABS metadata names being identifiers; Local the extended
 * attribute user.etcd-warden-copy). Garbage collection deletes only objects so marked.
 */
#define OSTORE_COPY_MARK_S3    "x-amz-meta-etcd-warden-copy"
#define OSTORE_COPY_MARK_ABS   "x-ms-meta-etcdwardencopy"
#define OSTORE_COPY_MARK_LOCAL "user.etcd-warden-copy"

/*
 * The SHA-256 (hex) of the etcd snapshot a copy was verified to hold (snapverify.h), recorded
 * on the copy as it is created while struct ostore.copy_sha256 is set: S3
 * x-amz-meta-etcd-warden-sha256, ABS x-ms-meta-etcdwardensha256, Local the extended
 * attribute user.etcd-warden-sha256. head reports it in ostore_obj.sha256.
 */
#define OSTORE_SHA256_S3    "x-amz-meta-etcd-warden-sha256"
#define OSTORE_SHA256_ABS   "x-ms-meta-etcdwardensha256"
#define OSTORE_SHA256_LOCAL "user.etcd-warden-sha256"

/* Default part size of streamed copies (the only large buffer). */
#define OSTORE_PART_SIZE (8u * 1024u * 1024u)
/* Server copies above this size go part by part (S3 UploadPartCopy). */
#define OSTORE_COPY_PART_THRESHOLD (5LL * 1024 * 1024 * 1024)

struct ostore_obj {
    char *key;               /* OWNS */
    char *version_id;        /* OWNS; S3 version when the store reports one, else NULL */
    int64_t size;            /* bytes; -1 unknown */
    int64_t mtime;           /* Unix seconds; 0 unknown */
    char md5[33];            /* content MD5 (hex) where the provider guarantees it, else "" */
    char etag[80];           /* the provider's ETag without quotes, else "" */
    bool excluded;           /* tagged x-etcd-snapshot-exclude=true */
    bool own_copy;           /* head only: carries OSTORE_COPY_MARK (written by warden-snapshot) */
    char sha256[65];         /* head only: the recorded OSTORE_SHA256 (64 hex), else "" */
    int64_t immutable_until; /* Unix seconds; 0 unknown / none */
};

struct ostore_list {
    struct ostore_obj *v;
    size_t n;
    size_t cap;
};

struct ostore;
struct ostore_upload;

struct ostore_ops {
    const char *name;
    /* Every object whose key starts with prefix (BORROWED); appends to *out. */
    enum kerr (*list)(struct ostore *s, const char *prefix, struct ostore_list *out,
                      struct kerr_info *err);
    /* One object's size and checksums; KERR_NOTFOUND when absent. out->key OWNED after. */
    enum kerr (*head)(struct ostore *s, const char *key, struct ostore_obj *out,
                      struct kerr_info *err);
    /* Exactly len bytes of src from off into dst. */
    enum kerr (*read)(struct ostore *s, const struct ostore_obj *src, int64_t off, void *dst,
                      size_t len, struct kerr_info *err);
    /* A create-only upload of size bytes to key, sent in parts of at most part_size. */
    enum kerr (*up_begin)(struct ostore *s, const char *key, int64_t size,
                          struct ostore_upload **out, struct kerr_info *err);
    enum kerr (*up_part)(struct ostore *s, struct ostore_upload *u, const void *data, size_t len,
                         struct kerr_info *err);
    /* Make the object visible (frees u, also on failure, aborting it). KERR_EXISTS when
     * the key appeared meanwhile. */
    enum kerr (*up_commit)(struct ostore *s, struct ostore_upload *u, struct kerr_info *err);
    /* Drop everything sent (frees u). */
    void (*up_abort)(struct ostore *s, struct ostore_upload *u);
    /* Server-side create-only copy; NULL or KERR_UNSUPPORTED when the store has none. */
    enum kerr (*copy)(struct ostore *s, const struct ostore_obj *src, const char *dst,
                      struct kerr_info *err);
    /* Delete obj (its version where known). KERR_FORBIDDEN when refused because the object
     * is immutable; any other refusal (permissions) is another error. */
    enum kerr (*del)(struct ostore *s, const struct ostore_obj *obj, struct kerr_info *err);
    /* Mark an immutable obj excluded (x-etcd-snapshot-exclude=true) the way the provider's
     * etcd-backup-restore skips it on restore; NULL where there is no such mark (Local). */
    enum kerr (*exclude)(struct ostore *s, const struct ostore_obj *obj, struct kerr_info *err);
    /* Extend obj's retention in place to now + period seconds (0: the store's default
     * retention), never shortening it; *until the retain-until date afterwards. NULL, or
     * KERR_UNSUPPORTED, where the store (or bucket) has no object-level lock. */
    enum kerr (*extend)(struct ostore *s, const struct ostore_obj *obj, int64_t period,
                        int64_t *until, struct kerr_info *err);
    void (*destroy)(struct ostore *s);
};

/* Embedded first in every provider's state. */
struct ostore {
    const struct ostore_ops *ops;
    size_t part_size;            /* streamed part size */
    int64_t copy_part_threshold; /* server copy goes multipart above this */
    char copy_sha256[65];        /* non-empty: recorded (OSTORE_SHA256) on objects created */
    bool extend_lock;            /* extend: lock the retention (ABS: policy mode Locked) */
};

/* A store to open, by provider name: ptable_open (providers/ptable.h). */
struct ostore_config {
    const char *provider;  /* etcd-druid's name: "aws", "S3", "azure", "ABS", "Local", ... */
    const char *container; /* bucket / container / directory (Local: relative to $HOME) */
    const char *endpoint_override; /* --store-endpoint-override; wins over the credentials'
                                    * endpoint (S3) and domain (ABS); NULL or "" for none */
    size_t part_size;              /* 0: OSTORE_PART_SIZE */
    int64_t copy_part_threshold;   /* 0: OSTORE_COPY_PART_THRESHOLD */
};

void ostore_free(struct ostore *s);

/* Append a copy of o (keys duplicated). */
enum kerr ostore_list_add(struct ostore_list *l, const struct ostore_obj *o, struct kerr_info *err);
void ostore_list_release(struct ostore_list *l);
void ostore_obj_release(struct ostore_obj *o);

/* The MD5 (hex) of o's bytes, read back through a 1 MiB buffer. */
enum kerr ostore_read_md5(struct ostore *s, const struct ostore_obj *o, char out[33],
                          struct kerr_info *err);

/* How a copy went, for the log. */
struct ostore_copy_result {
    bool server;  /* done server-side */
    char md5[33]; /* MD5 of the bytes streamed (stream mode), else "" */
};

/*
 * Copy src to the new key dst (BORROWED) in the same store: server-side when
 * server is true and the provider can (falling back to streaming when it
 * cannot), else streamed through one part_size buffer. Refuses (KERR_EXISTS)
 * when dst exists. The copy is verified against the source's content before
 * KERR_OK: same size and same MD5, where the provider guarantees an MD5
 * (ostore_obj.md5) taken from it, else computed by reading the bytes back
 * through a 1 MiB buffer. A copy that fails (verification, a failed or
 * timed-out server copy) is deleted by version, or marked excluded where
 * it is immutable, so no restore can pick it.
 */
enum kerr ostore_copy(struct ostore *s, const struct ostore_obj *src, const char *dst, bool server,
                      struct ostore_copy_result *res, struct kerr_info *err);

#endif
