// skynet-go: the "skynet" spawn benchmark. A 10-ary tree of goroutines with
// LEAVES leaves; leaf k sends k to its parent over an unbuffered channel,
// every inner node sends the sum of its 10 children, and the root must get
// LEAVES*(LEAVES-1)/2. USCHED_BENCH_FAULT=sum, to test that check, numbers
// the leaves from 1.
//
// Usage: skynet-go [LEAVES] [P]; LEAVES is a power of 10 (default 1000000),
// P is GOMAXPROCS (default 1, as skynet's P).
package main

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"time"

	"usched/bench/peers/go/internal/peer"
)

const (
	prog      = "skynet-go"
	maxLeaves = 1_000_000_000 // keeps the expected sum well inside 64 bits
)

var usage = fmt.Sprintf("[LEAVES] [P]\n  LEAVES a power of 10 up to 10^9 "+
	"(default 1000000), P native threads (1..%d, default 1)", peer.MaxProcs)

func main() {
	peer.HelpIfAsked(prog, usage, os.Args[1:])
	leaves, procs, err := parse(os.Args[1:])
	if err != nil {
		peer.Usage(prog, usage, err)
	}
	spoil, err := peer.BenchFault("sum")
	if err != nil {
		peer.Usage(prog, usage, err)
	}
	first := uint64(0)
	if spoil {
		first = 1
	}
	runtime.GOMAXPROCS(procs)
	// LEAVES*10/9 goroutines in all, but most leaves are gone before their
	// last sibling is spawned: the peak measured about 190 bytes per
	// goroutine (1.9 GB RSS for 10^7 leaves), so 256 is the estimate.
	peer.CheckMemory(prog, float64(leaves)*10/9*256)

	start := time.Now()
	root := make(chan uint64)
	go node(root, first, leaves)
	sum := <-root
	elapsed := time.Since(start)

	if want := leaves * (leaves - 1) / 2; sum != want {
		peer.Fail(prog, "sum is %d, want %d", sum, want)
	}
	peer.Report(prog, elapsed)
}

// node sends the sum of the leaf numbers first..first+size-1 to out,
// spawning 10 children per level until size is 1.
func node(out chan<- uint64, first, size uint64) {
	if size == 1 {
		out <- first
		return
	}
	size /= 10
	in := make(chan uint64) // unbuffered, as in the original benchmark
	for i := uint64(0); i < 10; i++ {
		go node(in, first+i*size, size)
	}
	var sum uint64
	for i := 0; i < 10; i++ {
		sum += <-in
	}
	out <- sum
}

// parse reads the optional LEAVES and P.
func parse(args []string) (leaves uint64, procs int, err error) {
	leaves, procs = 1_000_000, 1
	if len(args) > 2 {
		return 0, 0, errors.New("too many arguments")
	}
	if len(args) >= 1 {
		if leaves, err = peer.Uint(args[0]); err != nil {
			return 0, 0, errors.New("LEAVES: " + err.Error())
		}
		if !powerOf10(leaves) || leaves > maxLeaves {
			return 0, 0, errors.New("LEAVES must be a power of 10 between 1 and 10^9")
		}
	}
	if len(args) == 2 {
		p, err := peer.Uint(args[1])
		if err != nil {
			return 0, 0, errors.New("P: " + err.Error())
		}
		if p < 1 || p > peer.MaxProcs {
			return 0, 0, fmt.Errorf("P must be between 1 and %d", peer.MaxProcs)
		}
		procs = int(p)
	}
	return leaves, procs, nil
}

func powerOf10(v uint64) bool {
	for v >= 10 && v%10 == 0 {
		v /= 10
	}
	return v == 1
}
