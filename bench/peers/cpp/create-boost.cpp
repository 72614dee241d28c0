// create-boost: cost of creating, running and destroying one Boost.Context
// fiber (ring-boost's stack, D = 0: boost-stack.h) whose body returns at
// once.
//
// Usage: create-boost COUNT.  Prints nanoseconds per fiber.

#include <boost/context/fiber.hpp>

#include <cstdint>
#include <memory>
#include <utility>

#include "boost-stack.h"
#include "create.h"

namespace ctx = boost::context;

namespace {

constexpr const char *prog = "create-boost";
constexpr const char *usage =
	"COUNT\n"
	"  COUNT  fibers to create, run and destroy one after another (>= 1)\n";

} // namespace

int main(int argc, char **argv)
{
	// Outside the timed loop; it only records the size.
	peers::checked_stack stack(prog, peers::boost_stack_base);

	auto loop = [&stack](std::uint64_t count) {
		std::uint64_t runs = 0;

		for (std::uint64_t i = 0; i < count; i++) {
			ctx::fiber f(std::allocator_arg, stack,
				     [&runs](ctx::fiber &&caller) {
					     runs++;
					     return std::move(caller);
				     });
			// Runs the body; its stack is freed as it returns.
			f = std::move(f).resume();
		}
		return runs;
	};

	return peers::create_main(argc, argv, prog, usage, "fibers", loop);
}
