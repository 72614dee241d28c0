package main

import "testing"

func TestParse(t *testing.T) {
	for _, c := range []struct {
		args   []string
		leaves uint64
		procs  int
	}{
		{nil, 1_000_000, 1}, // one native thread unless asked, as skynet's
		{[]string{"100"}, 100, 1},
		{[]string{"10", "2"}, 10, 2},
	} {
		leaves, procs, err := parse(c.args)
		if err != nil || leaves != c.leaves || procs != c.procs {
			t.Errorf("%q: got %d, %d, %v; want %d, %d", c.args, leaves,
				procs, err, c.leaves, c.procs)
		}
	}
	for _, args := range [][]string{{"20"}, {"10", "0"}, {"10", "1025"},
		{"10", "1", "1"}, {"x"}} {
		if _, _, err := parse(args); err == nil {
			t.Errorf("%q: accepted", args)
		}
	}
}
