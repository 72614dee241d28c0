// The fibers' stacks of the Boost.Context peers (ring-boost, create-boost).
// C++17.
#ifndef PEERS_BOOST_STACK_H
#define PEERS_BOOST_STACK_H

#include <cstddef>

namespace peers {

// A fiber's stack but for the D bytes ring-boost adds: its loop, Boost's
// record and slack (about 5 KiB touched, measured).
constexpr std::size_t boost_stack_base = 16 * 1024;

} // namespace peers

#endif // PEERS_BOOST_STACK_H
