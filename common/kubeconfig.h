/*
 * kubeconfig - the kubeconfig YAML reader behind cfg_parse_kubeconfig().
 *
 * The document is loaded through common/ydoc.h (libyaml's document API) and
 * walked along the few paths a kubeconfig has (clusters / contexts / users /
 * current-context); every collection node is visited at most once, so YAML
 * aliases cannot multiply the work. Errors name the file, the line (libyaml
 * marks) and the problem. Referenced files (CA, client certificate and key) are read into
 * memory, base64 "-data" fields are decoded with OpenSSL's EVP decoder;
 * nothing is written to disk.
 *
 * Use cfg_parse_kubeconfig() (common/cfg.h); this header exists so the
 * module can be tested and fuzzed on its own.
 *
 * Thread safety: reentrant; no shared state.
 */
#ifndef COMMON_KUBECONFIG_H
#define COMMON_KUBECONFIG_H

#include <stddef.h>

#include "common/cfg.h"
#include "common/kerr.h"

/*
 * Parse text (len bytes, not necessarily NUL-terminated). path is used in
 * messages and as the base for relative file references (NULL =
 * "<kubeconfig>" and the current directory). context NULL = current-context.
 * On KERR_OK *out OWNS the result; on failure *out is zeroed.
 */
enum kerr kcfg_parse(const char *text, size_t len, const char *path, const char *context,
                     struct cfg_rest *out, struct kerr_info *err);

/*
 * Decode standard base64 (whitespace allowed, padding required) with
 * OpenSSL's EVP decoder. On KERR_OK *out OWNS a malloc'd block of *out_len
 * bytes plus a NUL (free() it). KERR_PARSE on bad input.
 */
enum kerr kcfg_base64_decode(const char *in, size_t len, char **out, size_t *out_len,
                             struct kerr_info *err);

#endif
