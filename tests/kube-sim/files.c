#include "tests/kube-sim/files.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/crypto.h"
#include "common/buf.h"
#include "common/tlsx.h"

enum kerr ksim_files_write(const char *dir, const char *url, const char *ca_pem, const char *token,
                           struct kerr_info *err)
{
    char path[4096], *ca64 = NULL;
    struct buf kc;
    enum kerr rc;

    snprintf(path, sizeof(path), "%s/ca.crt", dir);
    rc = tlsx_write_private(path, ca_pem, strlen(ca_pem), err);
    if (rc == KERR_OK)
        rc = crypto_b64_encode(ca_pem, strlen(ca_pem), &ca64, NULL, err);
    if (rc != KERR_OK)
        return rc;
    buf_init(&kc, 64 * 1024);
    rc = buf_appendf(&kc,
                     "apiVersion: v1\nkind: Config\nclusters:\n- name: kube-sim\n  cluster:\n"
                     "    server: %s\n    certificate-authority-data: %s\ncontexts:\n"
                     "- name: kube-sim\n  context:\n    cluster: kube-sim\n"
                     "    user: kubernetes-admin\n    namespace: default\n"
                     "current-context: kube-sim\nusers:\n- name: kubernetes-admin\n  user:\n"
                     "    token: %s\n",
                     url, ca64, token);
    free(ca64);
    snprintf(path, sizeof(path), "%s/admin.kubeconfig", dir);
    if (rc == KERR_OK)
        rc = tlsx_write_private(path, kc.data, kc.len, err);
    else
        rc = kerr_set(err, rc, "kubeconfig too large");
    buf_release(&kc);
    return rc;
}
