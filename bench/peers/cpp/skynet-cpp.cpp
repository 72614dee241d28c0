// skynet-cpp: the skynet benchmark with C++20 stackless coroutines on one
// native thread.
//
// Usage: skynet-cpp [LEAVES].  LEAVES (default 1000000) must be a power of
// 10.  Every node of a 10-ary tree is a coroutine: a leaf reports its
// number, an inner node spawns its 10 children, waits for all of them and
// reports their sum.  The root must get LEAVES*(LEAVES-1)/2.  Prints the
// elapsed seconds.  USCHED_BENCH_FAULT=sum, to test that check, numbers the
// leaves from 1.
//
// Children are spawned onto a FIFO run queue, not awaited one by one, so
// (as with goroutines) all LEAVES*10/9 coroutines are alive at the peak.
// Every resume comes from the run loop, so the native stack never grows.

#include <coroutine>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <exception>

#include "args.h"
#include "task.h"

namespace {

constexpr const char *prog = "skynet-cpp";
constexpr const char *usage =
	"[LEAVES]\n"
	"  LEAVES  leaf coroutines, a power of 10 up to 10^9 (default 1000000)\n";

class run_queue {
public:
	void push(std::coroutine_handle<> h) { queue_.push_back(h); }

	void run()
	{
		while (!queue_.empty()) {
			auto h = queue_.front();
			queue_.pop_front();
			h.resume();
		}
	}

private:
	std::deque<std::coroutine_handle<>> queue_;
};

// Where children report: co_await returns once all of them have.
struct join {
	join(run_queue &q, std::uint64_t children) : rq(q), pending(children) {}

	run_queue &rq;
	std::uint64_t pending;
	std::uint64_t sum = 0;
	std::coroutine_handle<> waiter;

	void report(std::uint64_t value)
	{
		sum += value;
		if (--pending == 0 && waiter)
			rq.push(waiter);
	}

	bool await_ready() const noexcept { return pending == 0; }
	void await_suspend(std::coroutine_handle<> h) noexcept { waiter = h; }
	void await_resume() const noexcept {}
};

peers::task node(run_queue &rq, std::uint64_t num, std::uint64_t size,
		 join &parent)
{
	if (size == 1) {
		parent.report(num);
		co_return;
	}

	std::uint64_t sub = size / 10;
	join children{rq, 10};	// lives in this frame until we return

	for (std::uint64_t i = 0; i < 10; i++)
		rq.push(node(rq, num + i * sub, sub, children).handle);
	co_await children;
	parent.report(children.sum);
}

} // namespace

int main(int argc, char **argv)
{
	const char *name = argc > 0 ? argv[0] : prog;
	std::uint64_t leaves = 1000000;

	help_if_asked(argc, argv, usage);
	if (argc > 2)
		usage_fail(name, usage, "expected at most 1 argument, got %d",
			   argc - 1);
	if (argc == 2 && parse_leaves(argv[1], &leaves) != 0)
		usage_fail(name, usage, "LEAVES must be a power of 10 up to 10^9, not '%s'",
			   arg_shown(argv[1]));
	// the first leaf
	std::uint64_t first = bench_fault(name, usage, "sum");

	// All nodes' frames and queue slots: about 150 bytes each measured.
	check_memory(prog, leaves / 9.0 * 10 * 200);

	try {
		std::uint64_t want = leaves * (leaves - 1) / 2;
		run_queue rq;
		join root{rq, 1};

		double start = bench_seconds();
		rq.push(node(rq, first, leaves, root).handle);
		rq.run();
		double elapsed = bench_seconds() - start;
		std::uint64_t got = root.sum;

		if (root.pending != 0 || got != want) {
			std::fprintf(stderr, "%s: sum is %llu, expected %llu\n",
				     prog, (unsigned long long)got,
				     (unsigned long long)want);
			return 1;
		}
		std::printf("%.6f\n", elapsed);
	} catch (const std::exception &e) {
		std::fprintf(stderr, "%s: out of memory for %llu leaves (%s)\n",
			     prog, (unsigned long long)leaves, e.what());
		return 1;
	}
	return bench_output_status(prog);
}
