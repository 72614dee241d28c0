// The ring member as a C++20 coroutine, shared by the stackless ring peers
// (ring-cpp, ring-cpp-pool).  Kept out of ring.h, which stays C++17.
#ifndef PEERS_RING_CORO_H
#define PEERS_RING_CORO_H

#include <cstdint>

#include "args.h"
#include "task.h"

namespace peers {

// A stackless ring member: its channel and the tokens it received.
template <class Channel>
struct coro_member {
	Channel inbox;
	std::uint64_t received = 0;
	static constexpr bool pad_bad = false;	// no stack, so no pad to check
};

// Member pos of its cycle, for M rounds.  In the round whose number % N is
// pos it starts the token (send, then wait for it to come round); in every
// other round it passes the token on.  Member is a coro_member whose
// channel has send(Sched &) and an awaitable recv().
template <class Sched, class Member>
task ring_member(Sched &sched, const ring_args &cfg, std::uint64_t pos,
		 Member &me, Member &right)
{
	std::uint64_t turn = 0;	// == round % N, without a division

	for (std::uint64_t i = 0; i < cfg.ra_m; i++) {
		if (turn == pos) {
			right.inbox.send(sched);
			co_await me.inbox.recv();
		} else {
			co_await me.inbox.recv();
			right.inbox.send(sched);
		}
		me.received++;
		if (++turn == cfg.ra_n)
			turn = 0;
	}
}

} // namespace peers

#endif // PEERS_RING_CORO_H
