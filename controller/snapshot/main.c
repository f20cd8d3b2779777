/* warden-snapshot: extend-snapshot-immutability, list, delete-snapshots and copy
 * (controller/snapshot/snapcli.h). */
#include "controller/snapshot/snapcli.h"

int main(int argc, char **argv)
{
    return snapcli_main(argc, argv);
}
