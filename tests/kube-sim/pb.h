/*
 * pb - decoding of Kubernetes protobuf request bodies into JSON objects.
 *
 * kubectl's typed clients send application/vnd.kubernetes.protobuf: the
 * magic "k8s\0" followed by a runtime.Unknown message (typeMeta apiVersion
 * and kind, raw bytes of the object, contentEncoding, contentType). The raw
 * object is decoded with the field table of pbschema into the JSON
 * kube-apiserver would have received: zero scalars are left out (as the Go
 * JSON encoding's omitempty does, keeping spec.replicas), maps become
 * objects, bytes base64 strings, Time RFC 3339 strings, IntOrString a
 * number or a string. Unknown fields are skipped.
 *
 * Ownership: input BORROWED; *out OWNED by the caller.
 * Thread safety: reentrant.
 */
#ifndef KSIM_PB_H
#define KSIM_PB_H

#include <stddef.h>

#include <cJSON.h>

#include "common/kerr.h"

/* True when the Content-Type names the Kubernetes protobuf encoding. */
int ksim_pb_content_type(const char *content_type);

/*
 * Decode a protobuf body. KERR_PARSE for malformed data, KERR_UNSUPPORTED
 * for a kind outside the table. On KERR_OK *out OWNS the object (with
 * apiVersion and kind set from the envelope).
 */
enum kerr ksim_pb_decode(const unsigned char *body, size_t len, cJSON **out, struct kerr_info *err);

#endif
