// create-cpp: cost of creating, running and destroying one C++20 stackless
// coroutine whose body returns at once.
//
// Usage: create-cpp COUNT.  Prints nanoseconds per coroutine.

#include <chrono>
#include <coroutine>
#include <cstdint>
#include <cstdio>
#include <exception>

#include "args.h"

namespace {

constexpr const char *prog = "create-cpp";
constexpr const char *usage = "COUNT\n  COUNT  coroutines to create, run and destroy one after another (>= 1)\n";

// Created suspended (like a thread that is spawned, then scheduled) and
// freed by falling off the end.
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

// Not inlined: clang could otherwise elide the frame allocation (HALO) and
// measure nothing.
[[gnu::noinline]] task trivial(std::uint64_t &runs)
{
	runs++;
	co_return;
}

} // namespace

int main(int argc, char **argv)
{
	const char *name = argc > 0 ? argv[0] : prog;
	std::uint64_t count, runs = 0;

	if (argc != 2)
		usage_fail(name, usage, "expected 1 argument, got %d", argc - 1);
	if (parse_u64(argv[1], &count) != 0 || count == 0)
		usage_fail(name, usage, "COUNT: not a positive decimal: '%s'", argv[1]);

	try {
		auto start = std::chrono::steady_clock::now();
		for (std::uint64_t i = 0; i < count; i++)
			trivial(runs).handle.resume();
		std::chrono::duration<double, std::nano> elapsed =
			std::chrono::steady_clock::now() - start;

		if (runs != count) {
			std::fprintf(stderr, "%s: %llu of %llu coroutines ran\n", prog,
				     (unsigned long long)runs, (unsigned long long)count);
			return 1;
		}
		std::printf("%.3f\n", elapsed.count() / count);
	} catch (const std::exception &e) {
		std::fprintf(stderr, "%s: %s\n", prog, e.what());
		return 1;
	}
	return 0;
}
