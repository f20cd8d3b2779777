/*
 * warden-snapshot: extend-snapshot-immutability, list, delete-snapshots, copy
 * (controller/snapshot/snapcli.h), check-prefixes (controller/snapshot/snapcheck.h) and
 * verify (controller/snapshot/snapchain.h).
 */
#include <string.h>

#include "controller/snapshot/snapchain.h"
#include "controller/snapshot/snapcheck.h"
#include "controller/snapshot/snapcli.h"

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "check-prefixes") == 0)
        return snapcheck_main(argc - 1, argv + 1);
    if (argc >= 2 && strcmp(argv[1], "verify") == 0)
        return snapchain_main(argc - 1, argv + 1);
    return snapcli_main(argc, argv);
}
