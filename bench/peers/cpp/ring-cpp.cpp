// ring-cpp: the ring benchmark with C++20 stackless coroutines on one
// native thread.
//
// Usage: ring-cpp N R M 0 1 (see args.h).  D must be 0: a stackless
// coroutine keeps no stack frame while suspended.  P must be 1.
//
// Each ring member is a coroutine waiting on its own channel.  A channel
// counts tokens like a semaphore: a send with no waiter is kept for the
// next receive, a send to a waiting coroutine puts it on the FIFO run queue.

#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "args.h"
#include "ring-coro.h"
#include "ring.h"

namespace {

constexpr const char *prog = "ring-cpp";

class run_queue {
public:
	explicit run_queue(std::size_t capacity) : fifo_(capacity) {}

	void push(std::coroutine_handle<> h) { fifo_.push(h); }

	void run()
	{
		while (!fifo_.empty())
			fifo_.pop().resume();
	}

private:
	peers::ring_fifo<std::coroutine_handle<>> fifo_;
};

class channel {
public:
	void send(run_queue &rq)
	{
		if (waiter_)	// the token goes to the waiter
			rq.push(std::exchange(waiter_, {}));
		else
			tokens_++;
	}

	std::uint64_t left() const { return tokens_; }

	auto recv()
	{
		struct awaiter {
			channel &ch;

			bool await_ready() noexcept
			{
				if (ch.tokens_ == 0)
					return false;
				ch.tokens_--;
				return true;
			}
			void await_suspend(std::coroutine_handle<> h) noexcept
			{
				ch.waiter_ = h;
			}
			void await_resume() noexcept {}
		};
		return awaiter{*this};
	}

private:
	std::uint64_t tokens_ = 0;
	std::coroutine_handle<> waiter_;
};

using member = peers::coro_member<channel>;

int run(const ring_args &cfg)
{
	std::vector<member> members(cfg.ra_threads);
	run_queue rq(cfg.ra_threads);

	bool ok = peers::ring_run(prog, cfg, members, rq,
		[&rq, &cfg](std::uint64_t, std::uint64_t pos, member &me,
			    member &right) {
			rq.push(peers::ring_member(rq, cfg, pos, me,
						   right).handle);
		},
		[&rq](member &m) { m.inbox.send(rq); });
	return ok ? 0 : 1;
}

} // namespace

int main(int argc, char **argv)
{
	// Frame, member and queue slot: about 160 bytes measured.
	return peers::ring_main(argc, argv,
		{prog, RING_STACKLESS | RING_SINGLE, 256, "coroutines"}, run);
}
