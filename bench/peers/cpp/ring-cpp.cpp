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
#include <cstdint>
#include <cstdio>
#include <exception>
#include <utility>
#include <vector>
#include <chrono>

#include "args.h"

namespace {

constexpr const char *prog = "ring-cpp";

// A fire-and-forget coroutine: created suspended, started by the run queue,
// frees its own frame when it returns.
struct task {
	struct promise_type {
		task get_return_object() noexcept
		{
			return {std::coroutine_handle<promise_type>::from_promise(*this)};
		}
		std::suspend_always initial_suspend() noexcept { return {}; }
		std::suspend_never final_suspend() noexcept { return {}; }
		void return_void() noexcept {}
		void unhandled_exception() noexcept { std::terminate(); }
	};
	std::coroutine_handle<> handle;
};

// FIFO of runnable coroutines.  A coroutine is queued at most once at a
// time, so one slot per coroutine is enough and the ring never overflows.
class run_queue {
public:
	explicit run_queue(std::size_t capacity)
	{
		std::size_t size = 1;
		while (size < capacity)
			size *= 2;
		slots_.resize(size);
		mask_ = size - 1;
	}

	void push(std::coroutine_handle<> h) { slots_[tail_++ & mask_] = h; }

	void run()
	{
		while (head_ != tail_)
			slots_[head_++ & mask_].resume();
	}

private:
	std::vector<std::coroutine_handle<>> slots_;
	std::size_t mask_ = 0;
	std::size_t head_ = 0;
	std::size_t tail_ = 0;
};

class channel {
public:
	void send(run_queue &rq)
	{
		if (waiter_)
			rq.push(std::exchange(waiter_, {}));	// token goes to the waiter
		else
			tokens_++;
	}

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
			void await_suspend(std::coroutine_handle<> h) noexcept { ch.waiter_ = h; }
			void await_resume() noexcept {}
		};
		return awaiter{*this};
	}

private:
	std::uint64_t tokens_ = 0;
	std::coroutine_handle<> waiter_;
};

struct member {
	channel inbox;
	std::uint64_t received = 0;
};

task ring_member(run_queue &rq, const ring_args &cfg, std::uint64_t pos,
		 member &me, member &right)
{
	std::uint64_t turn = 0;	// == round % N, without a division

	for (std::uint64_t i = 0; i < cfg.m; i++) {
		if (turn == pos) {
			right.inbox.send(rq);
			co_await me.inbox.recv();
		} else {
			co_await me.inbox.recv();
			right.inbox.send(rq);
		}
		me.received++;
		if (++turn == cfg.n)
			turn = 0;
	}
}

bool verify(const ring_args &cfg, const std::vector<member> &members)
{
	std::uint64_t total = 0, bad = 0;

	for (std::uint64_t i = 0; i < cfg.threads; i++) {
		std::uint64_t got = members[i].received;

		total += got;
		if (got != cfg.m && bad++ < 10)
			std::fprintf(stderr, "%s: thread %llu (cycle %llu) received %llu tokens, expected %llu\n",
				     prog, (unsigned long long)i,
				     (unsigned long long)(i / cfg.n),
				     (unsigned long long)got,
				     (unsigned long long)cfg.m);
	}
	if (bad == 0 && total == cfg.msgs)
		return true;
	std::fprintf(stderr, "%s: verification failed: %llu bad threads, %llu of %llu messages\n",
		     prog, (unsigned long long)bad, (unsigned long long)total,
		     (unsigned long long)cfg.msgs);
	return false;
}

int run(const ring_args &cfg)
{
	std::vector<member> members(cfg.threads);
	run_queue rq(cfg.threads);

	auto start = std::chrono::steady_clock::now();
	for (std::uint64_t i = 0; i < cfg.threads; i++) {
		std::uint64_t pos = i % cfg.n;
		member &right = members[i - pos + (pos + 1) % cfg.n];

		rq.push(ring_member(rq, cfg, pos, members[i], right).handle);
	}
	rq.run();
	std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;

	// A coroutine still blocked here (a lost token) shows up as a short count.
	if (!verify(cfg, members))
		return 1;
	std::printf("%.6f\n", elapsed.count());
	return 0;
}

} // namespace

int main(int argc, char **argv)
{
	ring_args cfg;

	ring_args_parse(&cfg, argc, argv, RING_STACKLESS | RING_SINGLE);
	// Frame, member and queue slot: about 160 bytes measured.
	check_memory(prog, cfg.threads * 256.0);
	try {
		return run(cfg);
	} catch (const std::exception &e) {
		// Coroutine frames and the queues come from operator new.
		std::fprintf(stderr, "%s: out of memory for %llu coroutines (%s)\n",
			     prog, (unsigned long long)cfg.threads, e.what());
		return 1;
	}
}
