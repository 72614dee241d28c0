// The ring member as a C++20 coroutine, shared by the stackless ring peers
// (ring-cpp, ring-cpp-pool).  Kept out of ring.h, which stays C++17.
#ifndef PEERS_RING_CORO_H
#define PEERS_RING_CORO_H

#include <cstdint>

#include "args.h"
#include "ring-check.h"
#include "task.h"

namespace peers {

// A stackless ring member: its channel, the tokens handed to it (counted
// by its left neighbour) and those it received (M, once it is done).
template <class Channel>
struct coro_member {
	Channel inbox;
	std::uint32_t handed = 0;
	std::uint64_t received = 0;
	std::uint64_t unhanded = 0;	// waits that got a token not handed
	static constexpr bool pad_bad = false;	// no stack, so no pad to check

	std::uint64_t left() const { return inbox.left(); }
};

// Member pos of its cycle, for M rounds.  In the round whose number % N is
// pos it starts the token (send, then wait for it to come round); in every
// other round it passes the token on, counting it as handed.  It checks its
// own count right after every wait, before passing the token on, as usched's
// ring does: at P > 1, once passed, the token could come round and be
// counted before a late check, hiding a spurious wake-up.  Each case has an
// await of its own: one await followed by a second test of the turn took
// 4 instructions more a message, and 4-11 % more time (usched's ring and
// ring-boost, whose switches return to where the thread blocked, are
// faster with one wait).  Member is a coro_member whose channel has
// send(Sched &) and an awaitable recv().
template <class Sched, class Member>
task ring_member(Sched &sched, const ring_args &cfg, std::uint64_t pos,
		 Member &me, Member &right)
{
	std::uint64_t turn = 0;	// == round % N, without a division

	for (std::uint64_t i = 0; i < cfg.ra_m; i++) {
		if (turn == pos) {
			ring_count_handed(&right.handed);
			right.inbox.send(sched);
			co_await me.inbox.recv();
			if (!ring_token_handed(&me.handed, i + 1))
				me.unhanded++;
		} else {
			co_await me.inbox.recv();
			if (!ring_token_handed(&me.handed, i + 1))
				me.unhanded++;
			ring_count_handed(&right.handed);
			right.inbox.send(sched);
		}
		if (++turn == cfg.ra_n)
			turn = 0;
	}
	me.received = cfg.ra_m;
}

} // namespace peers

#endif // PEERS_RING_CORO_H
