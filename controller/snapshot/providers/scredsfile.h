/*
 * scredsfile - credential files read by a table of fields: a struct filled from a directory of
 * files (one per field) or from a JSON file, as etcd-backup-restore reads its credentials.
 */
#ifndef CONTROLLER_SNAPSHOT_PROVIDERS_SCREDSFILE_H
#define CONTROLLER_SNAPSHOT_PROVIDERS_SCREDSFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/kerr.h"

#define SCREDSFILE_MAX (64 * 1024)

/* SCREDSFILE_PATH: in the directory form only, the path of the file when it exists (not its text).
 */
enum scredsfile_type { SCREDSFILE_STR, SCREDSFILE_BOOL, SCREDSFILE_PATH };

/* Which forms read a field. */
#define SCREDSFILE_IN_DIR  1u
#define SCREDSFILE_IN_JSON 2u
#define SCREDSFILE_IN_BOTH (SCREDSFILE_IN_DIR | SCREDSFILE_IN_JSON)

struct scredsfile_field {
    const char *name;
    enum scredsfile_type type;
    size_t off; /* offset of the char * or bool in the struct */
    bool required;
    unsigned forms; /* 0: both */
};

/* Go's strconv.ParseBool: 0 and *out set, or -1 for anything else. */
int scredsfile_parse_bool(const char *s, bool *out);

/*
 * The fields of the table (ended by a NULL name) found in the JSON text into obj, a struct the
 * offsets are of; strings are allocated (the struct's release frees them). KERR_PARSE for a
 * field of the wrong JSON type.
 */
enum kerr scredsfile_parse_json(const char *text, size_t len, const struct scredsfile_field *fields,
                                void *obj, struct kerr_info *err);

/* KERR_INVAL naming the first required string field that is missing or empty. */
enum kerr scredsfile_check_required(const struct scredsfile_field *fields, const void *obj,
                                    struct kerr_info *err);

/* The path of the first entry of dir, by name, ending in ".json" (Go's filepath.Ext), as
 * etcd-backup-restore looks for a JSON credentials file in the credentials directory.
 * *out OWNS it; NULL when there is none. KERR_NOTFOUND when dir does not exist. */
enum kerr scredsfile_dir_json(const char *dir, char **out, struct kerr_info *err);

/*
 * The credentials at path into obj: dir false, the JSON file; dir true, the directory (its
 * first *.json file when it has one, else a file per field). Files are capped; absent fields
 * stay unset.
 */
enum kerr scredsfile_read(bool dir, const char *path, const struct scredsfile_field *fields,
                          void *obj, struct kerr_info *err);

#endif
