// main() of the create benchmarks (create-cpp, create-boost), which time
// creating, running and destroying one unit (coroutine, fiber) whose body
// returns at once.  C++17, for create-boost.
#ifndef PEERS_CREATE_H
#define PEERS_CREATE_H

#include <cstdint>
#include <cstdio>
#include <exception>

#include "args.h"

namespace peers {

// Parses COUNT (exit 2 if bad), then times loop(count), which creates, runs
// and destroys COUNT units one after another and returns how many of their
// bodies ran.  Prints nanoseconds per unit; exits 1 if a body did not run or
// something threw (out of memory).  USCHED_BENCH_FAULT=lost, to test that
// check, has loop make one unit too few.
template <class Loop>
int create_main(int argc, char **argv, const char *prog, const char *usage,
		const char *units, Loop loop)
{
	const char *name = argc > 0 ? argv[0] : prog;
	std::uint64_t count, to_make;

	help_if_asked(argc, argv, usage);
	if (argc != 2)
		usage_fail(name, usage, "expected 1 argument, got %d",
			   argc - 1);
	count = arg_u64(name, usage, "COUNT", argv[1], 1, BENCH_MAX_COUNT);
	to_make = count - bench_fault(name, usage, "lost");

	try {
		double start = bench_seconds();
		std::uint64_t runs = loop(to_make);
		double elapsed = bench_seconds() - start;

		if (runs != count) {
			std::fprintf(stderr, "%s: %llu of %llu %s ran\n", prog,
				     (unsigned long long)runs,
				     (unsigned long long)count, units);
			return 1;
		}
		std::printf("%.2f\n", elapsed * 1e9 / count);
	} catch (const std::exception &e) {
		std::fprintf(stderr, "%s: %s\n", prog, e.what());
		return 1;
	}
	return bench_output_status(prog);
}

} // namespace peers

#endif // PEERS_CREATE_H
