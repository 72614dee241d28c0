// What the C++ ring peers (ring-cpp, ring-cpp-pool, ring-boost) share:
// main(), the timed run, the verification and the single-threaded peers' run
// queue.  C++17, for ring-boost.
#ifndef PEERS_RING_H
#define PEERS_RING_H

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <vector>

#include "args.h"
#include "ring-check.h"

namespace peers {

// FIFO of runnable members.  A member is queued at most once at a time, so
// one slot per member is enough and the queue never overflows; the size is a
// power of two so that indices wrap with a mask.
template <class T>
class ring_fifo {
public:
	explicit ring_fifo(std::size_t capacity)
	{
		std::size_t size = 1;
		while (size < capacity)
			size *= 2;
		slots_.resize(size);
		mask_ = size - 1;
	}

	bool empty() const { return head_ == tail_; }
	void push(T x) { slots_[tail_++ & mask_] = x; }
	T pop() { return slots_[head_++ & mask_]; }

private:
	std::vector<T> slots_;
	std::size_t mask_ = 0;
	std::size_t head_ = 0;
	std::size_t tail_ = 0;
};

// Checks every member with ring-check.h, as ring-pthread does.  Member has
// "received", "unhanded", "left()" (the tokens still in its channel) and
// "pad_bad" (constant false on stackless peers, which keep no pad).
template <class Member>
bool ring_verify(const char *prog, const ring_args &cfg,
		 const std::vector<Member> &members)
{
	ring_check rc = {prog, &cfg, 0, 0};

	for (std::uint64_t i = 0; i < cfg.ra_threads; i++) {
		const Member &m = members[i];
		ring_member_end e = {m.received, m.unhanded, m.left(),
				     m.pad_bad};

		// One that did not finish took what was handed, less what is
		// left.
		if (e.me_received == 0 && m.handed > e.me_left)
			e.me_received = m.handed - e.me_left;

		ring_check_member(&rc, i, &e);
	}
	return ring_check_done(&rc) == 0;
}

// The timed run: start(i, pos, me, right) creates member i, at position pos
// of its cycle and passing tokens to right, then sched.run() runs everything
// until no member can go on.  Creation is timed too, as for the other peers'
// threads.  If the counts verify, prints the elapsed seconds (the run's one
// line of output) and returns true.  With USCHED_RING_FAULT=spurious,
// give(m) first sends member 0 a token that nobody counts as handed.
template <class Member, class Sched, class Start, class Give>
bool ring_run(const char *prog, const ring_args &cfg,
	      std::vector<Member> &members, Sched &sched, Start start,
	      Give give)
{
	if (cfg.ra_fault == RING_FAULT_SPURIOUS)
		give(members[0]);
	double t0 = bench_seconds();
	for (std::uint64_t i = 0; i < cfg.ra_threads; i++) {
		std::uint64_t pos = i % cfg.ra_n;

		start(i, pos, members[i],
		      members[i - pos + (pos + 1) % cfg.ra_n]);
	}
	sched.run();
	double elapsed = bench_seconds() - t0;

	// A member still blocked here (a lost token) shows up as a short count.
	if (!ring_verify(prog, cfg, members))
		return false;
	std::printf("%.6f\n", elapsed);
	return true;
}

// What sets one ring peer's main() apart.
struct ring_peer {
	const char *prog;
	unsigned flags;		// for ring_args_parse(): which D and P it takes
	double member_bytes;	// memory a member needs besides its D-byte pad
	const char *units;	// what a member is, for messages
};

// A ring peer's main(): parse N R M D P (exit 2 if bad), refuse a run that
// cannot fit in memory (exit 1), then return run(cfg).  Members, queues and
// stacks all come from operator new or allocators that throw, so running out
// of memory surfaces here as an exception: report it and exit 1.
template <class Run>
int ring_main(int argc, char **argv, const ring_peer &peer, Run run)
{
	ring_args cfg;

	ring_args_parse(&cfg, argc, argv, peer.flags);
	check_memory(peer.prog,
		     cfg.ra_threads * (peer.member_bytes + cfg.ra_d));
	try {
		int rc = run(cfg);

		return rc != 0 ? rc : bench_output_status(peer.prog);
	} catch (const std::exception &e) {
		std::fprintf(stderr, "%s: out of memory for %llu %s (%s)\n",
			     peer.prog, (unsigned long long)cfg.ra_threads,
			     peer.units, e.what());
		return 1;
	}
}

} // namespace peers

#endif // PEERS_RING_H
