/* warden-controller - entry point. The reconciler arrives with its own issue. */
#include <stdio.h>
#include <string.h>

static const char usage[] =
    "Usage: warden-controller [flags]\n"
    "\n"
    "Reconciles etcd-warden's hibernation, restore, status-backup and snapshot\n"
    "tasks for druid.gardener.cloud/v1alpha1 Etcd objects.\n"
    "\n"
    "Flags:\n"
    "  -h, --help   print this help and exit\n";

int main(int argc, char **argv)
{
    int i;

    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(usage, stdout);
            return 0;
        }
    }
    fputs("warden-controller: the reconciler is not built yet; see --help\n", stderr);
    return 2;
}
