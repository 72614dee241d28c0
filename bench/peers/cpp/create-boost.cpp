// create-boost: cost of creating, running and destroying one Boost.Context
// fiber (16 KiB stack from fixedsize_stack) whose body returns at once.
//
// Usage: create-boost COUNT.  Prints nanoseconds per fiber.

#include <boost/context/fiber.hpp>
#include <boost/context/fixedsize_stack.hpp>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <utility>

#include "args.h"

namespace ctx = boost::context;

namespace {

constexpr const char *prog = "create-boost";
constexpr const char *usage = "COUNT\n  COUNT  fibers to create, run and destroy one after another (>= 1)\n";

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
		ctx::fixedsize_stack stack(16 * 1024);	// as in ring-boost

		auto start = std::chrono::steady_clock::now();
		for (std::uint64_t i = 0; i < count; i++) {
			ctx::fiber f(std::allocator_arg, stack,
				     [&runs](ctx::fiber &&caller) {
					     runs++;
					     return std::move(caller);
				     });
			// Runs the body; its stack is freed as it returns.
			f = std::move(f).resume();
		}
		std::chrono::duration<double, std::nano> elapsed =
			std::chrono::steady_clock::now() - start;

		if (runs != count) {
			std::fprintf(stderr, "%s: %llu of %llu fibers ran\n", prog,
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
