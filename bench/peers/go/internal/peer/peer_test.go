package peer

import (
	"strings"
	"testing"
)

func TestParseRing(t *testing.T) {
	good := map[string]Ring{
		"4 3 10 0 1":         {4, 3, 10, 0, 1},
		"2 1 1 65536 1024":   {2, 1, 1, 65536, 1024},
		"3 1431655765 1 0 1": {3, 1431655765, 1, 0, 1}, // N*R = 2^32 - 1
	}
	for in, want := range good {
		got, err := ParseRing(strings.Fields(in))
		if err != nil || got != want {
			t.Errorf("ParseRing(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	bad := []string{
		"", "2 1 1 0", "2 1 1 0 1 9", "2 1 x 0 1", "1 1 1 0 1", "2 0 1 0 1",
		"2 1 0 0 1", "2 1 1 0 0", "2 1 1 0 1025", "-2 1 1 0 1", "+2 1 1 0 1",
		"2_0 1 1 0 1", "0x2 1 1 0 1", "99999999999999999999 1 1 0 1",
		"4294967296 4294967296 4294967296 0 1", "2 1 1 999999999999 1",
		"2 2147483648 1 0 1",
	}
	for _, in := range bad {
		if _, err := ParseRing(strings.Fields(in)); err == nil {
			t.Errorf("ParseRing(%q) accepted", in)
		}
	}
	// Blanks inside an argument are not trimmed.
	if _, err := ParseRing([]string{" 2", "1", "1", "0", "1"}); err == nil {
		t.Error("leading blank accepted")
	}
}

func TestRingFault(t *testing.T) {
	for v, want := range map[string]Fault{"": NoFault, "spurious": Spurious, "pad": Pad} {
		t.Setenv("USCHED_RING_FAULT", v)
		if got, err := RingFault(64); err != nil || got != want {
			t.Errorf("USCHED_RING_FAULT=%q: %v, %v; want %v", v, got, err, want)
		}
	}
	for _, v := range []string{"0", "Spurious", "spurious ", "pad "} {
		t.Setenv("USCHED_RING_FAULT", v)
		if _, err := RingFault(64); err == nil {
			t.Errorf("USCHED_RING_FAULT=%q accepted", v)
		}
	}
	t.Setenv("USCHED_RING_FAULT", "pad")
	if _, err := RingFault(0); err == nil {
		t.Error("USCHED_RING_FAULT=pad accepted with D = 0")
	}
}

func TestBenchFault(t *testing.T) {
	for v, want := range map[string]bool{"": false, "sum": true} {
		t.Setenv("USCHED_BENCH_FAULT", v)
		if got, err := BenchFault("sum"); err != nil || got != want {
			t.Errorf("USCHED_BENCH_FAULT=%q: %v, %v; want %v", v, got, err, want)
		}
	}
	for _, v := range []string{"lost", "Sum", "sum ", "1"} {
		t.Setenv("USCHED_BENCH_FAULT", v)
		if _, err := BenchFault("sum"); err == nil {
			t.Errorf("USCHED_BENCH_FAULT=%q accepted", v)
		}
	}
}
