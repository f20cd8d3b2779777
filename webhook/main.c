/* warden-webhook - entry point. The admission server arrives with its own issue. */
#include <stdio.h>
#include <string.h>

static const char usage[] =
    "Usage: warden-webhook [flags]\n"
    "\n"
    "Admission webhook protecting etcd-druid Etcd clusters and their components.\n"
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
    fputs("warden-webhook: the admission server is not built yet; see --help\n", stderr);
    return 2;
}
