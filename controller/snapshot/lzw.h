/*
 * lzw - a streaming decoder of the LZW streams etcd-backup-restore writes
 * for its ".Z" snapshots: Go's compress/lzw with order LSB and literal
 * width 8, no header. Codes are packed least significant bit first; they
 * start 9 bits wide and grow by one bit each time the next code to assign
 * reaches a power of two, up to 12 bits; code 256 clears the table (back to
 * 9 bits), code 257 ends the stream. Decoding follows Go's reader: a code
 * above the next one to assign is invalid; once the table is full (12 bits,
 * no clear), codes keep their width and nothing more is added.
 *
 * Bytes go in as they are read (lzw_update, any piece size) and come out
 * through a sink in pieces of at most 4096 bytes; the whole state is about
 * 16 KiB whatever the stream's length.
 *
 * Ownership: a struct lzw is OWNED by its creator (lzw_free). Thread
 * safety: one decoder per thread.
 */
#ifndef CONTROLLER_SNAPSHOT_LZW_H
#define CONTROLLER_SNAPSHOT_LZW_H

#include <stdbool.h>
#include <stddef.h>

#include "common/kerr.h"

struct lzw;

/* Receives decoded bytes (BORROWED for the call); a non-OK return stops lzw_update with it. */
typedef enum kerr (*lzw_sink)(void *ctx, const unsigned char *p, size_t n, struct kerr_info *err);

/* On KERR_OK *out OWNS a decoder at the start of a stream. */
enum kerr lzw_new(struct lzw **out, struct kerr_info *err);

/* The next len bytes of the stream, decoded into sink(ctx, ...). KERR_PARSE for an invalid
 * code or bytes after the end code. */
enum kerr lzw_update(struct lzw *z, const void *data, size_t len, lzw_sink sink, void *ctx,
                     struct kerr_info *err);

/* Whether the end code has been read. */
bool lzw_ended(const struct lzw *z);

void lzw_free(struct lzw *z);

#endif
