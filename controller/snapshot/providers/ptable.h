/*
 * ptable - the table of warden-snapshot's storage providers: etcd-druid's
 * provider names, each with the function that opens a store of that kind.
 * The one place that knows every provider; the commands open stores here
 * and otherwise work through the provider interface (ostore.h). No
 * provider includes this header.
 *
 * Providers: S3 ("aws", "S3", "stackit"; s3.h), ABS ("azure", "ABS";
 * abs.h), GCS ("gcp", "GCS"; gcs.h), ECS ("dell", "ECS") and OCS
 * ("openshift", "OCS") as path-style S3 (s3.h, screds.h), Local ("Local",
 * "local"; lfs.h). Swift and OSS are refused with KERR_UNSUPPORTED
 * ("... is not supported yet").
 *
 * Thread safety: the table is read-only; ptable_open is reentrant.
 */
#ifndef CONTROLLER_SNAPSHOT_PROVIDERS_PTABLE_H
#define CONTROLLER_SNAPSHOT_PROVIDERS_PTABLE_H

#include "common/kerr.h"
#include "controller/snapshot/ostore.h"

/* Open the store named by cfg (BORROWED), reading the provider's credentials from the
 * environment. On KERR_OK *out OWNS the store (ostore_free). */
enum kerr ptable_open(const struct ostore_config *cfg, struct ostore **out, struct kerr_info *err);

/*
 * KERR_OK when provider (BORROWED, may be NULL) names a provider the table
 * opens; else KERR_INVAL ("not supported yet" for Swift and OSS), err->msg
 * naming the value and listing every value that is (the command line
 * refuses it as a usage error before opening anything).
 */
enum kerr ptable_check(const char *provider, struct kerr_info *err);

#endif
