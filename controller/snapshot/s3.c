#include "controller/snapshot/s3.h"
enum kerr s3_open(const char *c, struct ostore **out, struct kerr_info *err)
{
    (void)c;
    *out = 0;
    return kerr_set(err, KERR_UNSUPPORTED, "todo");
}
