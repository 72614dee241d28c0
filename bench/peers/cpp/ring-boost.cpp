// ring-boost: the ring benchmark with Boost.Context stackful fibers on one
// native thread.
//
// Usage: ring-boost N R M D 1 (see args.h).  P must be 1.  Every fiber keeps
// D bytes live in its own frame while it blocks.
//
// A blocking fiber switches straight to the next runnable fiber (FIFO run
// queue), not through a scheduler fiber: one context switch per block.
// Channels count tokens like a semaphore, as in the other peers, and a
// member checks the count of tokens handed to it right after every wait,
// before passing the token on, as usched's ring does.

#include <alloca.h>

#include <boost/context/fiber.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <utility>
#include <vector>

#include "args.h"
#include "boost-stack.h"
#include "ring-check.h"
#include "ring.h"

namespace ctx = boost::context;

namespace {

constexpr const char *prog = "ring-boost";

struct member {
	// suspended context, empty while running
	ctx::fiber fiber;
	std::uint64_t tokens = 0;	// received, not yet taken
	bool waiting = false;
	bool pad_bad = false;
	std::uint32_t handed = 0;	// counted by the left neighbour
	std::uint64_t received = 0;	// M, once done
	std::uint64_t unhanded = 0;	// waits that got a token not handed

	std::uint64_t left() const { return tokens; }
};

class scheduler {
public:
	explicit scheduler(std::size_t capacity) : queue_(capacity) {}

	void push(member *m) { queue_.push(m); }

	// Run the queued fibers; returns when none is runnable.
	void run()
	{
		current_ = &main_;
		switch_to(next());
	}

	// Called first thing on a fresh fiber's stack.
	void started(ctx::fiber &&from) { from_->fiber = std::move(from); }

	// Block the current fiber until send() hands it a token.
	void recv(member &me)
	{
		if (me.tokens > 0) {
			me.tokens--;
			return;
		}
		me.waiting = true;
		switch_to(next());
	}

	void send(member &to)
	{
		if (to.waiting) {
			to.waiting = false;	// the token goes to the waiter
			push(&to);
		} else {
			to.tokens++;
		}
	}

	// Where a finishing fiber goes; its own stack is freed on the way.
	ctx::fiber exit_to()
	{
		member *to = next();

		from_ = current_;
		current_ = to;
		return std::move(to->fiber);
	}

private:
	member *next() { return queue_.empty() ? &main_ : queue_.pop(); }

	void switch_to(member *to)
	{
		from_ = current_;
		current_ = to;
		ctx::fiber from = std::move(to->fiber).resume();
		// Back on our own stack: whoever switched here left from_ set.
		from_->fiber = std::move(from);
	}

	peers::ring_fifo<member *> queue_;	// FIFO run queue
	member main_;			// the thread's original context
	member *current_ = nullptr;
	member *from_ = nullptr;	// the fiber that switched away last
};

void ring_loop(scheduler &s, const ring_args &cfg, std::uint64_t pos,
	       member &me, member &right)
{
	std::uint64_t turn = 0;	// == round % N, without a division

	for (std::uint64_t i = 0; i < cfg.ra_m; i++) {
		if (turn == pos) {
			ring_count_handed(&right.handed);
			s.send(right);
		}
		s.recv(me);
		if (!ring_token_handed(&me.handed, i + 1))
			me.unhanded++;
		if (turn != pos) {
			ring_count_handed(&right.handed);
			s.send(right);
		}
		if (++turn == cfg.ra_n)
			turn = 0;
	}
	me.received = cfg.ra_m;
}

// Not inlined, so the D-byte block lives in this frame under ring_loop().
[[gnu::noinline]] void ring_member(scheduler &s, const ring_args &cfg,
				   std::uint64_t pos, member &me, member &right)
{
	auto *pad = static_cast<unsigned char *>(
		alloca(cfg.ra_d > 0 ? cfg.ra_d : 1));

	pad_fill(pad, cfg.ra_d);
	pad_fault(&cfg, pad, pos);
	ring_loop(s, cfg, pos, me, right);
	if (!pad_intact(pad, cfg.ra_d))
		me.pad_bad = true;
}

int run(const ring_args &cfg)
{
	std::vector<member> members(cfg.ra_threads);
	scheduler s(cfg.ra_threads);
	// ra_d <= RING_MAX_D: no overflow; round up to whole pages.
	peers::checked_stack stack(prog, (peers::boost_stack_base + cfg.ra_d +
					  4095) / 4096 * 4096);

	bool ok = peers::ring_run(prog, cfg, members, s,
		[&s, &cfg, &stack](std::uint64_t, std::uint64_t pos,
				   member &me, member &right) {
			me.fiber = ctx::fiber(std::allocator_arg, stack,
				[&s, &cfg, pos, &me, &right](ctx::fiber &&f) {
					s.started(std::move(f));
					ring_member(s, cfg, pos, me, right);
					return s.exit_to();
				});
			s.push(&me);
		},
		[&s](member &m) { s.send(m); });
	if (!ok) {
		// Fibers still blocked would be unwound by ~fiber(): skip that.
		std::fflush(stderr);
		std::_Exit(1);
	}
	return 0;
}

} // namespace

int main(int argc, char **argv)
{
	// Touched stack pages (about 5 KiB measured) plus the pad.  Stacks come
	// from malloc(), members from operator new.
	return peers::ring_main(argc, argv,
		{prog, RING_SINGLE, 8192, "fibers"}, run);
}
