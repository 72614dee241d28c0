/* One million threads, each blocking once; every byte given back. */
#include "tap.h"
#include "tsched.h"

static long resumed;

static void once(void *arg)
{
	volatile long id = (long)arg;

	if (tsched_yield() == 0 && id == (long)arg)
		resumed++;
}

int main(void)
{
	long threads = test_threads(1000000);
	struct tsched ts;
	long allocs;

	tsched_init(&ts);
	for (long i = 0; i < threads; i++)
		tsched_spawn(&ts, once, (void *)i);
	tsched_run(&ts);
	allocs = ts.ts_allocs;
	ok(resumed == threads, "%ld of %ld threads resumed intact", resumed,
	   threads);
	ok(ts.ts_done == threads, "all finished");
	ok(allocs == threads, "one buffer each: %ld allocations", allocs);
	ok(ts.ts_bytes == 0, "every allocated byte was freed (%ld left)",
	   ts.ts_bytes);
	return tap_done();
}
