package main

import "testing"

func TestPadCheck(t *testing.T) {
	for _, size := range []int{64, 256, 1 << 16} {
		b := make([]byte, size)
		padFill(b, 12345)
		if !padIntact(b, 12345) {
			t.Fatalf("size %d: a fresh pattern reads as changed", size)
		}
		for _, k := range []int{0, size / 128 * 64, size - 1} { // checked
			b[k]++
			if padIntact(b, 12345) {
				t.Errorf("size %d: byte %d changed unnoticed", size, k)
			}
			b[k]--
		}
		if padIntact(b, 54321) {
			t.Errorf("size %d: another member's pattern passes", size)
		}
	}
}

func TestWithPadRunsBody(t *testing.T) {
	for _, d := range []int{0, 1, 100, 70000} {
		ran := false
		if !withPad(d, 7, false, func() { ran = true }) || !ran {
			t.Errorf("D=%d: ran %v, or the padding reads as changed", d, ran)
		}
	}
	for _, d := range []int{1, 100, 70000} {
		if withPad(d, 7, true, func() {}) {
			t.Errorf("D=%d: a spoilt padding reads as kept", d)
		}
	}
}
