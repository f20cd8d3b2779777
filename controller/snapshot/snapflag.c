/* snapflag - a refused flag, said on stderr (see snapflag.h). */
#include "controller/snapshot/snapflag.h"

#include <stdio.h>
#include <string.h>

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
