// create-cpp: cost of creating, running and destroying one C++20 stackless
// coroutine whose body returns at once.
//
// Usage: create-cpp COUNT.  Prints nanoseconds per coroutine.

#include <cstdint>

#include "create.h"
#include "task.h"

namespace {

constexpr const char *prog = "create-cpp";
constexpr const char *usage =
	"COUNT\n"
	"  COUNT  coroutines to create, run and destroy one after another (>= 1)\n";

// Not inlined: clang could otherwise elide the frame allocation (HALO) and
// measure nothing.
[[gnu::noinline]] peers::task trivial(std::uint64_t &runs)
{
	runs++;
	co_return;
}

} // namespace

int main(int argc, char **argv)
{
	auto loop = [](std::uint64_t count) {
		std::uint64_t runs = 0;

		for (std::uint64_t i = 0; i < count; i++)
			trivial(runs).handle.resume();
		return runs;
	};

	return peers::create_main(argc, argv, prog, usage, "coroutines", loop);
}
