/*
 * fuzz_snap_list - libFuzzer target for the XML decoders of S3 and ABS
 * answers. The first byte picks the decoder (S3 ListObjectsV2, S3
 * ListObjectVersions, S3 tagging, ABS List Blobs, find, error); the rest is
 * the answer body. Every decoded object's strings are read so a dangling
 * pointer would be noticed; everything is freed.
 */
#include "controller/snapshot/providers/snapxml.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct ostore_list l = { 0 };
    struct snapxml_page pg = { 0 };
    char code[64];
    char msg[256];
    char *out = NULL;
    bool ex = false;
    size_t sum = 0;
    if (size < 1) {
        return 0;
    }
    const char *xml = (const char *)data + 1;
    size_t n = size - 1;
    enum kerr rc = KERR_PARSE;
    switch (data[0] % 6) {
    case 0:
        rc = snapxml_s3_list(xml, n, &l, &pg, NULL);
        break;
    case 1:
        rc = snapxml_s3_versions(xml, n, &l, &pg, NULL);
        break;
    case 2:
        rc = snapxml_s3_tagging(xml, n, &ex, NULL);
        break;
    case 3:
        rc = snapxml_abs_list(xml, n, &l, &pg, NULL);
        break;
    case 4:
        rc = snapxml_find(xml, n, "UploadId", &out, NULL);
        break;
    default:
        snapxml_error(xml, n, code, sizeof code, msg, sizeof msg);
        sum += strlen(code) + strlen(msg);
        break;
    }
    for (size_t i = 0; i < l.n; i++) {
        sum += strlen(l.v[i].key) + strlen(l.v[i].md5) + strlen(l.v[i].etag);
        sum += l.v[i].version_id ? strlen(l.v[i].version_id) : 0;
    }
    if (rc == KERR_OK && pg.next) {
        sum += strlen(pg.next);
    }
    sum += out ? strlen(out) : 0;
    free(out);
    snapxml_page_release(&pg);
    ostore_list_release(&l);
    if (sum == SIZE_MAX && ex) {
        abort();
    }
    return 0;
}
