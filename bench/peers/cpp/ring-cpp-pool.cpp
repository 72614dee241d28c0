// ring-cpp-pool: the ring benchmark with C++20 stackless coroutines on a
// pool of P native threads.
//
// Usage: ring-cpp-pool N R M 0 P (see args.h).  D must be 0.
//
// Scheduling is Go-like: every worker has its own FIFO run queue; a
// coroutine woken by a send goes to the queue of the worker that sent, so
// a cycle tends to stay on one worker, and an idle worker steals half of
// another worker's queue, so any coroutine may be resumed by any worker.
// Channels count tokens like a semaphore, as in ring-cpp, but with atomics.

#include <atomic>
#include <condition_variable>
#include <coroutine>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "args.h"
#include "ring-coro.h"
#include "ring.h"

namespace {

constexpr const char *prog = "ring-cpp-pool";

// Per-worker run queue.  A plain mutex: it is almost always uncontended,
// the owner being the only user except when someone steals.
struct alignas(64) worker {
	std::size_t id;
	std::mutex mu;
	std::deque<std::coroutine_handle<>> queue;

	// Returns the queue length after the push.
	std::size_t push(std::coroutine_handle<> h)
	{
		std::lock_guard lk(mu);
		queue.push_back(h);
		return queue.size();
	}

	std::coroutine_handle<> pop()
	{
		std::lock_guard lk(mu);
		if (queue.empty())
			return {};
		auto h = queue.front();
		queue.pop_front();
		return h;
	}

	bool empty()
	{
		std::lock_guard lk(mu);
		return queue.empty();
	}
};

class pool {
public:
	explicit pool(std::size_t nr_workers)
	{
		for (std::size_t i = 0; i < nr_workers; i++) {
			workers_.push_back(std::make_unique<worker>());
			workers_.back()->id = i;
		}
	}

	// Before run(): place a new coroutine on worker @w (< P).
	void spawn(std::coroutine_handle<> h, std::uint64_t w)
	{
		workers_[w]->push(h);
	}

	// Make a coroutine runnable on the calling worker.
	void wake(std::coroutine_handle<> h)
	{
		// The woken coroutine alone will be run by this worker as soon
		// as the current one blocks: only surplus work is worth a
		// wakeup.
		if (self_->push(h) > 1 && sleepers_.load() > 0) {
			std::lock_guard lk(idle_mu_);
			idle_cv_.notify_one();
		}
	}

	// Run until every worker is idle with all queues empty: then all
	// coroutines have returned, or the rest can never be woken.
	void run()
	{
		std::vector<std::thread> threads;

		// Thrown before any worker starts: ring_main() reports it.
		threads.reserve(workers_.size());
		for (auto &w : workers_) {
			try {
				threads.emplace_back([this, &w] { work(*w); });
			} catch (const std::exception &e) {
				// No thread (system_error) or no memory for its
				// state (bad_alloc), and workers already run
				// coroutines: no clean way back.
				std::fprintf(stderr, "%s: cannot start worker thread %zu of %zu: %s\n",
					     prog, w->id + 1, workers_.size(),
					     e.what());
				std::_Exit(1);
			}
		}
		for (auto &t : threads)
			t.join();
	}

private:
	void work(worker &w)
	{
		self_ = &w;
		try {
			for (;;) {
				auto h = w.pop();
				if (!h)
					h = steal(w);
				if (h)
					h.resume();
				else if (!idle())
					return;
			}
		} catch (const std::exception &e) {
			std::fprintf(stderr, "%s: worker %zu: %s\n", prog,
				     w.id, e.what());
			std::_Exit(1);
		}
	}

	// Move the older half of some victim's queue to @w; return one of it.
	std::coroutine_handle<> steal(worker &w)
	{
		std::size_t n = workers_.size();
		std::deque<std::coroutine_handle<>> loot;

		if (n == 1)
			return {};
		for (int attempt = 0; attempt < 64; attempt++) {
			for (std::size_t k = 1; k < n; k++) {
				worker &v = *workers_[(w.id + k) % n];
				{
					std::lock_guard lk(v.mu);
					std::size_t take =
						(v.queue.size() + 1) / 2;
					for (; take > 0; take--) {
						loot.push_back(v.queue.front());
						v.queue.pop_front();
					}
				}
				if (!loot.empty()) {
					auto h = loot.front();
					loot.pop_front();
					if (!loot.empty()) {
						std::lock_guard lk(w.mu);
						w.queue.insert(w.queue.end(),
							       loot.begin(),
							       loot.end());
					}
					return h;
				}
			}
			std::this_thread::yield();
		}
		return {};
	}

	// Sleep until there may be work.  Returns false when the pool is done.
	bool idle()
	{
		std::unique_lock lk(idle_mu_);

		sleepers_++;
		for (;;) {
			if (done_)
				break;
			bool work = false;
			for (auto &w : workers_)
				work = work || !w->empty();
			if (work)
				break;
			// Every other worker sleeps too, so nobody can push
			// any more.
			if (sleepers_.load() == workers_.size()) {
				done_ = true;
				idle_cv_.notify_all();
				break;
			}
			idle_cv_.wait(lk);
		}
		sleepers_--;
		return !done_;
	}

	std::vector<std::unique_ptr<worker>> workers_;
	std::mutex idle_mu_;
	std::condition_variable idle_cv_;
	std::atomic<std::size_t> sleepers_{0};
	bool done_ = false;		// under idle_mu_
	static thread_local worker *self_;
};

thread_local worker *pool::self_ = nullptr;

// A counting channel with at most one receiver.  state > 0: tokens
// waiting; state == -1: the receiver is suspended in waiter_.
class channel {
public:
	void send(pool &p)
	{
		// acquire: see waiter_ as stored before the receiver's
		// decrement.
		if (state_.fetch_add(1, std::memory_order_acq_rel) < 0)
			p.wake(waiter_);	// the token goes to the waiter
	}

	// Once the run is over: tokens sent and never taken.
	std::uint64_t left() const
	{
		auto s = state_.load(std::memory_order_relaxed);

		return s > 0 ? static_cast<std::uint64_t>(s) : 0;
	}

	auto recv()
	{
		struct awaiter {
			channel &ch;

			bool await_ready() noexcept
			{
				auto s = ch.state_.load(
					std::memory_order_relaxed);
				while (s > 0) {
					if (ch.state_.compare_exchange_weak(
						    s, s - 1,
						    std::memory_order_acquire,
						    std::memory_order_relaxed))
						return true;
				}
				return false;
			}

			bool await_suspend(std::coroutine_handle<> h) noexcept
			{
				channel &c = ch;

				c.waiter_ = h;
				// Once state is -1 a sender may resume us on
				// another worker at once: touch nothing in the
				// frame after this.  A token that arrived
				// meanwhile is taken right here.
				return c.state_.fetch_sub(1,
					std::memory_order_acq_rel) <= 0;
			}

			void await_resume() noexcept {}
		};
		return awaiter{*this};
	}

private:
	std::atomic<std::int64_t> state_{0};
	std::coroutine_handle<> waiter_;
};

// One per ring member; aligned so neighbours do not share a cache line.
struct alignas(64) member : peers::coro_member<channel> {};

int run(const ring_args &cfg)
{
	std::vector<member> members(cfg.ra_threads);
	pool p(cfg.ra_p);

	bool ok = peers::ring_run(prog, cfg, members, p,
		[&p, &cfg](std::uint64_t i, std::uint64_t pos, member &me,
			   member &right) {
			// Whole cycles start on one worker, so their sends stay
			// local; each worker a run of neighbouring cycles, as
			// usched's ring's groups. Dealt out one by one, the
			// workers' members and frames lay side by side: 8-23 %
			// slower at N = 8, P = 2, R = 100 to 10^4.
			p.spawn(peers::ring_member(p, cfg, pos, me,
						   right).handle,
				i / cfg.ra_n * cfg.ra_p / cfg.ra_r);
		},
		[&p](member &m) { m.inbox.send(p); });
	return ok ? 0 : 1;
}

} // namespace

int main(int argc, char **argv)
{
	// Frame, member and queue slot: about 200 bytes measured.
	return peers::ring_main(argc, argv,
		{prog, RING_STACKLESS, 256, "coroutines"}, run);
}
