#include "common/procmetrics.h"

#include <dirent.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* The children the render hook refreshes. */
struct proc_children {
    struct metrics_child *cpu, *rss, *vsize, *fds, *max_fds, *start;
};

/* Read a small /proc file into buf (NUL-terminated); false on failure. */
static bool read_small(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "re");
    size_t n;

    if (!f)
        return false;
    n = fread(buf, 1, size - 1, f);
    fclose(f);
    buf[n] = '\0';
    return n > 0;
}

/*
 * Fields 14 (utime), 15 (stime), 22 (starttime), 23 (vsize) and 24 (rss)
 * of /proc/self/stat, counted from 1; the command name (field 2) may hold
 * spaces, so counting starts after its closing parenthesis.
 */
static bool read_self_stat(unsigned long long f[5])
{
    static const int want[5] = { 14, 15, 22, 23, 24 };
    char text[1024], *p, *save = NULL, *tok, *end;
    int field = 3, k = 0;

    if (!read_small("/proc/self/stat", text, sizeof(text)) || !(p = strrchr(text, ')')))
        return false;
    for (tok = strtok_r(p + 1, " \n", &save); tok && k < 5; tok = strtok_r(NULL, " \n", &save)) {
        if (field++ != want[k])
            continue;
        f[k++] = strtoull(tok, &end, 10);
        if (*end != '\0')
            return false;
    }
    return k == 5;
}

static double boot_time(void)
{
    char text[8192], *p;

    if (!read_small("/proc/stat", text, sizeof(text)) || !(p = strstr(text, "\nbtime ")))
        return 0;
    return strtod(p + 7, NULL);
}

static long open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    long n = 0;

    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL)
        n += e->d_name[0] != '.';
    closedir(d);
    return n - 1; /* the descriptor of d itself */
}

static void process_hook(void *ctx)
{
    struct proc_children *p = ctx;
    unsigned long long f[5];
    long tick = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE), fds = open_fds();
    struct rlimit rl;

    if (tick > 0 && page > 0 && read_self_stat(f)) {
        metrics_set(p->cpu, (double)(f[0] + f[1]) / (double)tick);
        metrics_set(p->vsize, (double)f[3]);
        metrics_set(p->rss, (double)f[4] * (double)page);
    }
    if (fds >= 0)
        metrics_set(p->fds, (double)fds);
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
        metrics_set(p->max_fds, rl.rlim_cur == RLIM_INFINITY ? INFINITY : (double)rl.rlim_cur);
}

static enum kerr register_one(struct metrics_registry *r, enum metrics_type t, const char *name,
                              const char *help, struct metrics_child **out, struct kerr_info *err)
{
    struct metrics_vec *v;
    enum kerr rc = metrics_register(r, t, name, help, NULL, NULL, 0, &v, err);

    return rc != KERR_OK ? rc : metrics_with(v, NULL, out, err);
}

enum kerr procmetrics_register(struct metrics_registry *r, struct kerr_info *err)
{
    struct proc_children *p = calloc(1, sizeof(*p));
    unsigned long long f[5];
    long tick = sysconf(_SC_CLK_TCK);
    enum kerr rc;

    if (!p)
        return kerr_set(err, KERR_NOMEM, "procmetrics: registering");
    if ((rc = register_one(r, METRICS_COUNTER, "process_cpu_seconds_total",
                           "Total user and system CPU time spent in seconds.", &p->cpu, err)) ||
        (rc = register_one(r, METRICS_GAUGE, "process_resident_memory_bytes",
                           "Resident memory size in bytes.", &p->rss, err)) ||
        (rc = register_one(r, METRICS_GAUGE, "process_virtual_memory_bytes",
                           "Virtual memory size in bytes.", &p->vsize, err)) ||
        (rc = register_one(r, METRICS_GAUGE, "process_open_fds", "Number of open file descriptors.",
                           &p->fds, err)) ||
        (rc = register_one(r, METRICS_GAUGE, "process_max_fds",
                           "Maximum number of open file descriptors.", &p->max_fds, err)) ||
        (rc = register_one(r, METRICS_GAUGE, "process_start_time_seconds",
                           "Start time of the process since unix epoch in seconds.", &p->start,
                           err))) {
        free(p);
        return rc;
    }
    if (tick > 0 && read_self_stat(f))
        metrics_set(p->start, boot_time() + (double)f[2] / (double)tick);
    return metrics_on_render_owned(r, process_hook, p, free, err);
}
