/* snapflag - a refused flag, said on stderr (see snapflag.h). */
#include "controller/snapshot/snapflag.h"

#include <stdio.h>
#include <string.h>

#include "common/kerr.h"
#include "controller/snapshot/providers/ptable.h"

void snapflag_error(const char *cmd, char **argv, int optidx, int ret, int opt)
{
    const char *arg = optidx > 0 ? argv[optidx - 1] : "";
    int len = (int)strcspn(arg, "=");

    if (ret == ':')
        fprintf(stderr, "warden-snapshot %s: %s needs a value\n", cmd, arg);
    else if (strncmp(arg, "--", 2) == 0 && opt)
        fprintf(stderr, "warden-snapshot %s: %.*s takes no value\n", cmd, len, arg);
    else if (strncmp(arg, "--", 2) == 0)
        fprintf(stderr, "warden-snapshot %s: unknown flag %.*s\n", cmd, len, arg);
    else
        fprintf(stderr, "warden-snapshot %s: unknown flag -%c\n", cmd, opt ? opt : '?');
}

int snapflag_provider(const char *cmd, const char *flag, const char *value)
{
    struct kerr_info err = { 0 };

    if (!value || ptable_check(value, &err) == KERR_OK)
        return 0;
    fprintf(stderr, "warden-snapshot %s: %s: %s\n", cmd, flag, err.msg);
    return -1;
}
