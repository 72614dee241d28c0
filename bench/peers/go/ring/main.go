// ring-go: the ring benchmark with one goroutine per ring member and a
// buffered channel as each member's inbox.
//
// Usage: ring-go N R M D P (see internal/peer.RingUsage).
package main

import (
	"os"
	"runtime"
	"sync"
	"time"
	"unsafe"

	"usched/bench/peers/go/internal/peer"
)

const prog = "ring-go"

func main() {
	peer.HelpIfAsked(prog, peer.RingUsage, os.Args[1:])
	cfg, err := peer.ParseRing(os.Args[1:])
	if err != nil {
		peer.Usage(prog, peer.RingUsage, err)
	}
	fault, err := peer.RingFault(cfg.D)
	if err != nil {
		peer.Usage(prog, peer.RingUsage, err)
	}
	runtime.GOMAXPROCS(int(cfg.P))

	threads := float64(cfg.N) * float64(cfg.R)
	peer.CheckMemory(prog, threads*bytesPerGoroutine(cfg.D, min(cfg.N, cfg.M)))
	n, m, total := int(cfg.N), int(cfg.M), int(cfg.N*cfg.R)

	counts := make([]uint64, total) // tokens received, one slot per member
	padBad := make([]bool, total)   // a member's padding changed
	inboxes := make([]chan uint64, total)
	// Write them now, before the clock, as usched's ring does its arrays:
	// make's large slices are fresh pages, zero until written, and the
	// members' first writes faulted them in while timed.
	clear(counts)
	clear(padBad)
	clear(inboxes)
	var wg sync.WaitGroup
	wg.Add(total)

	start := time.Now()
	for c := 0; c < int(cfg.R); c++ {
		// in[j] is member j's inbox; member j writes to in[(j+1)%n].
		in := inboxes[c*n : (c+1)*n]
		// An inbox holds n tokens, so that a send never waits for its
		// receiver: a hand-off counts, as the other rings' wake-ups and
		// semaphores do (unbuffered channels, where it waited, took
		// 2.3-3.7 times as long). n are enough: while member j waits for
		// round k's token, its left neighbour cannot pass on the token of
		// the next round r that j starts (r <= k+n), which reaches it
		// through j; so it has sent those of rounds k to r-1 at most. And
		// m are: no more are ever sent.
		for j := range in {
			in[j] = make(chan uint64, min(n, m))
		}
		if fault == peer.Spurious && c == 0 {
			in[0] <- peer.Unhanded
		}
		for j := 0; j < n; j++ {
			i := c*n + j
			go func() {
				defer wg.Done()
				spoil := fault == peer.Pad && j == 0
				padBad[i] = !withPad(int(cfg.D), i, spoil, func() {
					counts[i] = member(j, n, m, in[j], in[(j+1)%n])
				})
			}()
		}
	}
	wg.Wait()
	elapsed := time.Since(start)

	want, _ := cfg.Messages()
	var sum uint64
	for i, got := range counts {
		if padBad[i] {
			peer.Fail(prog, "cycle %d member %d: its stack padding changed", i/n, i%n)
		}
		if got != cfg.M {
			peer.Fail(prog, "cycle %d member %d received %d tokens, want %d", i/n, i%n, got, cfg.M)
		}
		sum += got
	}
	if sum != want {
		peer.Fail(prog, "received %d tokens in all, want %d", sum, want)
	}
	peer.Report(prog, elapsed)
}

// member runs ring member j for m rounds and returns how many correct
// tokens it received. The token is the round number, so a token that
// strays into the wrong round is not counted.
func member(j, n, m int, in <-chan uint64, out chan<- uint64) (got uint64) {
	sender := 0 // i % n, kept incrementally
	for i := 0; i < m; i++ {
		tok := uint64(i)
		if sender == j {
			out <- tok
			if <-in == tok {
				got++
			}
		} else {
			t := <-in
			if t == tok {
				got++
			}
			out <- t
		}
		if sender++; sender == n {
			sender = 0
		}
	}
	return got
}

// Stack padding. D is a runtime value but Go frames have fixed sizes, so D
// is split greedily into chunks of 64 KiB down to 64 bytes, each chunk a
// fixed-size array in a frame of its own (one generic instantiation per
// size; at most 3 frames per size below 64 KiB, 4 of 64 bytes, as D rounds
// up to 64, so the frame overhead stays small). The ring loop runs at the bottom of those frames, so about D bytes
// (rounded up to 64) stay live on the goroutine's stack across every channel
// operation. Unlike usched, Go never copies a stack on a switch, only when
// it grows: here D costs memory and one-off growth copies, not per-message
// work. As in the other rings, every 64th byte and the last are checked
// after body: withPad says whether they all kept their values. The
// pattern depends on member, the member's index, so that members which
// swapped stacks would not pass. With spoil (USCHED_RING_FAULT=pad), the
// outermost chunk's first byte changes after its fill, to test the check.
func withPad(d, member int, spoil bool, body func()) bool {
	switch {
	case d <= 0:
		body()
		return true
	case d >= 1<<16:
		return pad[[1 << 16]byte](d-1<<16, member, spoil, body)
	case d >= 1<<14:
		return pad[[1 << 14]byte](d-1<<14, member, spoil, body)
	case d >= 1<<12:
		return pad[[1 << 12]byte](d-1<<12, member, spoil, body)
	case d >= 1<<10:
		return pad[[1 << 10]byte](d-1<<10, member, spoil, body)
	case d >= 1<<8:
		return pad[[1 << 8]byte](d-1<<8, member, spoil, body)
	default:
		return pad[[1 << 6]byte](d-1<<6, member, spoil, body)
	}
}

//go:noinline
func pad[A any](rest, member int, spoil bool, body func()) bool {
	var a A // zeroed, so its pages are really touched
	b := unsafe.Slice((*byte)(unsafe.Pointer(&a)), unsafe.Sizeof(a))

	padFill(b, member+rest)
	if spoil {
		b[0] = ^b[0]
	}
	inner := withPad(rest, member, false, body)
	return padIntact(b, member+rest) && inner
}

// padFill writes a pattern that depends on seed (the member's index plus
// each chunk's own rest) into every 64th byte of b and its last.
func padFill(b []byte, seed int) {
	for k := 0; k < len(b); k += 64 {
		b[k] = byte(seed + k)
	}
	b[len(b)-1] = byte(seed)
}

func padIntact(b []byte, seed int) bool {
	for k := 0; k < len(b)-1; k += 64 {
		if b[k] != byte(seed+k) {
			return false
		}
	}
	return b[len(b)-1] == byte(seed)
}

// bytesPerGoroutine estimates one member's memory if all are alive at once
// (the worst case; at P=1 cycles often finish while later ones are still
// being created): its stack (a power of two, at least 2 KiB) plus the
// goroutine, channel and closure, measured at about 0.9 KiB together, and
// the channel's buffer of up to n tokens (8 bytes each).
func bytesPerGoroutine(d, n uint64) float64 {
	stack := uint64(2048)
	for stack < d+2048 {
		stack *= 2
	}
	return float64(stack + 1024 + 8*n)
}
