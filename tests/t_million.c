/* One million threads, each blocking once; every byte given back. */
#include "tap.h"
#include "tsched.h"

enum { THREADS = 1000000 };

static long resumed;

static void once(void *arg)
{
	volatile long id = (long)arg;

	if (tsched_yield() == 0 && id == (long)arg)
		resumed++;
}

int main(void)
{
	struct tsched ts;
	long peak_bytes;

	tsched_init(&ts);
	for (long i = 0; i < THREADS; i++)
		tsched_spawn(&ts, once, (void *)i);
	tsched_run(&ts);
	peak_bytes = ts.ts_allocs;
	ok(resumed == THREADS, "%ld of %d threads resumed intact", resumed,
	   THREADS);
	ok(ts.ts_done == THREADS, "all finished");
	ok(peak_bytes == THREADS, "one buffer each: %ld allocations",
	   peak_bytes);
	ok(ts.ts_bytes == 0, "every allocated byte was freed (%ld left)",
	   ts.ts_bytes);
	return tap_done();
}
