// The fibers' stacks of the Boost.Context peers (ring-boost, create-boost).
// C++17.
//
// No guard page: Boost's protected_fixedsize_stack maps each stack, at
// 200 times the cost of a fiber's creation (create-boost: 9000 ns, not
// 45), and two mappings a stack pass vm.max_map_count (65530) at about
// 32000 fibers (ring-boost at N = 8, R = 10^4 fails).  Instead a mark in
// each stack's lowest bytes, checked as the stack is freed, fails the run
// if a fiber ever went that deep.
#ifndef PEERS_BOOST_STACK_H
#define PEERS_BOOST_STACK_H

#include <boost/context/fixedsize_stack.hpp>
#include <boost/context/stack_context.hpp>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace peers {

// A fiber's stack but for the D bytes ring-boost adds: its loop, Boost's
// record and slack (about 5 KiB touched, measured).
constexpr std::size_t boost_stack_base = 16 * 1024;

// Boost's fixedsize_stack (malloc()), with the mark at the bottom.
class checked_stack {
public:
	checked_stack(const char *prog, std::size_t size)
		: prog_(prog), inner_(size) {}

	boost::context::stack_context allocate()
	{
		boost::context::stack_context sc = inner_.allocate();

		std::memcpy(bottom(sc), &mark, sizeof(mark));
		return sc;
	}

	// Runs as a fiber ends: a mark overwritten means that the fiber's
	// frames reached past its stack, into the block below it.
	void deallocate(boost::context::stack_context &sc) noexcept
	{
		if (std::memcmp(bottom(sc), &mark, sizeof(mark)) != 0) {
			std::fprintf(stderr, "%s: a fiber overran its %zu-byte stack\n",
				     prog_, sc.size);
			std::_Exit(1);
		}
		inner_.deallocate(sc);
	}

private:
	static constexpr std::uint64_t mark = 0x5ca1ab1e0ddba11ull;

	static void *bottom(const boost::context::stack_context &sc)
	{
		return static_cast<char *>(sc.sp) - sc.size;
	}

	const char *prog_;
	boost::context::fixedsize_stack inner_;
};

} // namespace peers

#endif // PEERS_BOOST_STACK_H
