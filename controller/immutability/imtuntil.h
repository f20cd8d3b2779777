/*
 * imtuntil - a hibernated snapshot's immutable-until, as the immutability
 * CronJob's last run left it.
 *
 * extend-snapshot-immutability writes its one-line summary to its termination
 * log (controller/snapshot/snapext.h: {"source", "copy", "inPlace",
 * "immutableUntil"}). imtuntil_read looks at the Jobs of ns whose controller
 * is the CronJob (its uid), takes the last one that succeeded (latest
 * status.completionTime, else creationTimestamp), and reads its Pod (label
 * controller-uid=<Job uid>) whose first container terminated with exit code 0:
 * the last line of the termination message, parsed as that summary.
 *
 * Ownership: arguments BORROWED. Thread safety: reentrant.
 */
#ifndef CONTROLLER_IMTUNTIL_H
#define CONTROLLER_IMTUNTIL_H

#include <stddef.h>

#include <cJSON.h>

#include "common/k8s.h"
#include "common/kerr.h"
#include "common/ktime.h"

/*
 * The immutableUntil (RFC 3339, checked) of the summary line (len bytes, not
 * NUL-terminated) into out; KERR_INVAL when the line is no summary or has none.
 */
enum kerr imtuntil_parse(const char *line, size_t len, char out[KTIME_LEN + 1],
                         struct kerr_info *err);

/*
 * The immutable-until of the CronJob's last successful run into out; "" when no
 * finished Job or Pod says it (KERR_OK). Errors of the API server returned.
 */
enum kerr imtuntil_read(struct k8s_client *cl, const char *ns, const cJSON *cronjob,
                        char out[KTIME_LEN + 1], struct kerr_info *err);

#endif
