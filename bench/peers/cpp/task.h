// The coroutine type of the C++20 stackless peers (ring-cpp, ring-cpp-pool,
// create-cpp, skynet-cpp).
#ifndef PEERS_TASK_H
#define PEERS_TASK_H

#include <coroutine>

namespace peers {

// A fire-and-forget coroutine: created suspended (like a thread that is
// spawned, then scheduled), started by whoever resumes handle, and freed by
// falling off the end.  Nobody awaits it, so it returns nothing.
struct [[nodiscard]] task {
	struct promise_type {
		task get_return_object() noexcept
		{
			using coro = std::coroutine_handle<promise_type>;

			return {coro::from_promise(*this)};
		}
		std::suspend_always initial_suspend() noexcept { return {}; }
		std::suspend_never final_suspend() noexcept { return {}; }
		void return_void() noexcept {}
		// Out of memory while spawning or queueing: the exception goes
		// to whoever resumed the coroutine (a run loop), to be
		// reported there.
		void unhandled_exception() { throw; }
	};
	std::coroutine_handle<> handle;
};

} // namespace peers

#endif // PEERS_TASK_H
