// Package peer holds what the Go benchmark peers share: strict argument
// parsing, the exit-status conventions, a memory pre-check and the result line.
package peer

import (
	"bufio"
	"errors"
	"fmt"
	"math/bits"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Exit statuses shared by all peers.
const (
	ExitFail  = 1 // verification failed or resources exhausted
	ExitUsage = 2 // bad command line
)

// Limits that are part of the command-line contract.
const (
	MaxProcs = 1024    // P: more native threads than this is surely a typo
	MaxPad   = 1 << 28 // D: stays well below Go's 1 GB goroutine stack limit
	// MaxThreads bounds N*R, as every ring does (32-bit indices in the C peers).
	MaxThreads = 1<<32 - 1
)

// Uint parses a strict unsigned decimal: ASCII digits only (no sign, blank,
// underscore or base prefix) and the value must fit in 64 bits.
func Uint(s string) (uint64, error) {
	v, err := strconv.ParseUint(s, 10, 64)
	if errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("%q does not fit in 64 bits", s)
	}
	if err != nil {
		return 0, fmt.Errorf("%q is not an unsigned decimal integer", s)
	}
	return v, nil
}

// Ring is the ring benchmark's command line: N R M D P.
type Ring struct{ N, R, M, D, P uint64 }

// RingUsage is the usage line without the program name.
const RingUsage = "N R M D P\n" +
	"  N >= 2 threads per cycle, R >= 1 cycles, M >= 1 rounds,\n" +
	"  D extra bytes live in each thread's frame, P native threads (1..1024)"

// ParseRing checks the five positional arguments (without argv[0]).
func ParseRing(args []string) (Ring, error) {
	var r Ring
	if len(args) != 5 {
		return r, fmt.Errorf("expected 5 arguments, got %d", len(args))
	}
	dst := []*uint64{&r.N, &r.R, &r.M, &r.D, &r.P}
	for i, name := range []string{"N", "R", "M", "D", "P"} {
		v, err := Uint(args[i])
		if err != nil {
			return r, fmt.Errorf("%s: %v", name, err)
		}
		*dst[i] = v
	}
	switch {
	case r.N < 2:
		return r, errors.New("N must be at least 2")
	case r.R < 1:
		return r, errors.New("R must be at least 1")
	case r.M < 1:
		return r, errors.New("M must be at least 1")
	case r.P < 1 || r.P > MaxProcs:
		return r, fmt.Errorf("P must be between 1 and %d", MaxProcs)
	case r.D > MaxPad:
		return r, fmt.Errorf("D must be at most %d", MaxPad)
	}
	if _, err := r.Messages(); err != nil {
		return r, err
	}
	if r.N*r.R > MaxThreads {
		return r, fmt.Errorf("N*R = %d threads is more than %d", r.N*r.R, uint64(MaxThreads))
	}
	return r, nil
}

// Unhanded is the token a faulty run gives a member: no round has it.
const Unhanded = ^uint64(0)

// Fault is a fault USCHED_RING_FAULT injects, which the ring's checks
// must catch.
type Fault int

const (
	NoFault  Fault = iota
	Spurious       // "spurious": member 0 gets a token nobody handed it
	Pad            // "pad": the first member of each cycle changes a byte of its D
)

// RingFault reads USCHED_RING_FAULT, as every ring does, for a ring of d
// stack bytes a member ("pad" needs some): NoFault if unset or empty.
func RingFault(d uint64) (Fault, error) {
	switch v := os.Getenv("USCHED_RING_FAULT"); {
	case v == "":
		return NoFault, nil
	case v == "spurious":
		return Spurious, nil
	case v == "pad" && d > 0:
		return Pad, nil
	case v == "pad":
		return NoFault, fmt.Errorf("USCHED_RING_FAULT=pad needs D > 0")
	default:
		return NoFault, fmt.Errorf("USCHED_RING_FAULT is '%s'; the faults are 'spurious' and 'pad'", shown(v))
	}
}

// shown is the first 64 bytes of a bad value for a message, escaped as Go
// quotes a string (a newline as \n): the message stays on one line, and
// nothing in it drives the terminal; "..." after them if v is longer.
func shown(v string) string {
	q := strconv.Quote(v[:min(len(v), 64)])
	q = q[1 : len(q)-1]
	if len(v) > 64 {
		q += "..." // cut: not the whole value
	}
	return q
}

// BenchFault reads USCHED_BENCH_FAULT, which makes a benchmark inject its
// one fault, named fault, to test its self-check: false if unset or empty.
func BenchFault(fault string) (bool, error) {
	switch v := os.Getenv("USCHED_BENCH_FAULT"); v {
	case "":
		return false, nil
	case fault:
		return true, nil
	default:
		return false, fmt.Errorf("USCHED_BENCH_FAULT is '%s'; the one fault here is '%s'", shown(v), fault)
	}
}

// Messages is N*R*M, or an error if that overflows 64 bits.
func (r Ring) Messages() (uint64, error) {
	hi, nr := bits.Mul64(r.N, r.R)
	hi2, nrm := bits.Mul64(nr, r.M)
	if hi != 0 || hi2 != 0 {
		return 0, errors.New("N*R*M overflows 64 bits")
	}
	return nrm, nil
}

// HelpIfAsked prints the usage on stdout and exits 0 (1 if it could not be
// written) when any argument is -h or --help, whatever the others are.
func HelpIfAsked(prog, usage string, args []string) {
	if !slices.Contains(args, "-h") && !slices.Contains(args, "--help") {
		return
	}
	if _, err := fmt.Printf("usage: %s %s\n", prog, usage); err != nil {
		fmt.Fprintf(os.Stderr, "%s: cannot write the usage to stdout: %v\n", prog, err)
		os.Exit(ExitFail)
	}
	os.Exit(0)
}

// Usage reports a bad command line and exits with status 2.
func Usage(prog, usage string, err error) {
	fmt.Fprintf(os.Stderr, "%s: %v\nusage: %s %s\n", prog, err, prog, usage)
	os.Exit(ExitUsage)
}

// Fail reports a failed run and exits with status 1.
func Fail(prog, format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s: %s\n", prog, fmt.Sprintf(format, args...))
	os.Exit(ExitFail)
}

// CheckMemory refuses to start a run estimated to need more than the
// memory currently available, or than the address space ulimit -v leaves
// beside what the process holds already (the Go runtime reserves over a
// gigabyte at start): Go cannot recover from running out of memory (it
// dies with a runtime trace, or the kernel kills it), so a clear message
// up front is the only clean failure.
func CheckMemory(prog string, need float64) {
	var lim syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_AS, &lim) == nil && lim.Cur != ^uint64(0) { // not unlimited
		held, _ := procKiB("/proc/self/status", "VmSize:")
		if need+held > float64(lim.Cur) {
			Fail(prog, "needs about %.0f MiB of memory, beside the %.0f MiB of address space it holds, but ulimit -v allows %.0f MiB",
				need/(1<<20), held/(1<<20), float64(lim.Cur)/(1<<20))
		}
	}
	avail, ok := procKiB("/proc/meminfo", "MemAvailable:")
	if ok && need > avail {
		Fail(prog, "needs about %.0f MiB of memory but only %.0f MiB are available",
			need/(1<<20), avail/(1<<20))
	}
}

// procKiB reads the line "key N kB" of a /proc file (Linux only) as bytes.
func procKiB(path, key string) (float64, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if kb, ok := strings.CutPrefix(sc.Text(), key); ok {
			v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(kb, "kB")), 64)
			return v * 1024, err == nil
		}
	}
	return 0, false
}

// Report prints the one result line, elapsed seconds, or fails if it
// cannot be written (a full disk): a driver script would otherwise get no
// result and a success.
func Report(prog string, d time.Duration) {
	if _, err := fmt.Printf("%.6f\n", d.Seconds()); err != nil {
		Fail(prog, "cannot write the result to stdout: %v", err)
	}
}
