#include "tests/support/fakeclock.h"

static int64_t fake_now(void *arg)
{
    struct fakeclock *f = arg;

    return atomic_load(&f->now);
}

static void fake_sleep(void *arg, int64_t ns)
{
    struct fakeclock *f = arg;

    atomic_fetch_add(&f->now, ns);
    atomic_fetch_add(&f->slept, ns);
}

struct rl_clock fakeclock_init(struct fakeclock *f, int64_t start_ns)
{
    struct rl_clock c = { fake_now, fake_sleep, f };

    atomic_store(&f->now, start_ns);
    atomic_store(&f->slept, 0);
    return c;
}

void fakeclock_advance(struct fakeclock *f, int64_t ns)
{
    atomic_fetch_add(&f->now, ns);
}
