/*
 * files - what kube-sim writes into its data directory: ca.crt (the CA
 * that signed the serving certificate) and admin.kubeconfig (the server URL,
 * the CA inline and the administrator's bearer token; user
 * kubernetes-admin, group system:masters, namespace default). Both 0600.
 *
 * Ownership: arguments are BORROWED. Thread safety: reentrant.
 */
#ifndef KSIM_FILES_H
#define KSIM_FILES_H

#include "common/kerr.h"

/* Write DIR/ca.crt and DIR/admin.kubeconfig. */
enum kerr ksim_files_write(const char *dir, const char *url, const char *ca_pem, const char *token,
                           struct kerr_info *err);

#endif
