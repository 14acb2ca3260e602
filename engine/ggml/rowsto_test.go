package ggml

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestInterleaveRowsTo: the one-pass layout of the load's copy
// (InterleaveRowsTo) gives what the copy and then InterleaveRows4 in place
// give, for each interleaved layout (the 16-row tile layout of Q4_0, Q8_0
// and the K-quants, the 4-row groups paired for Q4_0 or not); its rows
// read back as the row-major ones (Rows4Row); and a matrix written run by
// run, each run starting on a group, is the same matrix (the load writes
// one read at a time). Tail rows past the last group stay row-major.
func TestInterleaveRowsTo(t *testing.T) {
	type layout struct {
		t            Type
		tile, paired bool
	}
	var layouts []layout
	for _, tp := range []Type{Q4_0, Q8_0, Q4_K, Q5_K, Q6_K} {
		layouts = append(layouts, layout{tp, true, false}, layout{tp, false, false})
	}
	layouts = append(layouts, layout{Q4_0, false, true})
	r := rand.New(rand.NewPCG(18, 21))
	for _, l := range layouts {
		defer func(tp Type, saved, saved16 bool) { rows4Pairs[tp], tileRows16[tp] = saved, saved16 }(l.t, rows4Pairs[l.t], tileRows16[l.t])
		rows4Pairs[l.t], tileRows16[l.t] = l.paired, l.tile
		g := InterleaveGroup(l.t)
		for _, sh := range [][2]int{{256, 3}, {256, 16}, {512, 17}, {768, 35}, {256, 48}, {2048, 37}} {
			n, rows := sh[0], sh[1]
			rs := l.t.RowSize(n)
			name := fmt.Sprintf("%v tile %v paired %v %dx%d", l.t, l.tile, l.paired, rows, n)
			w := randomRow(r, l.t, n*rows)
			want := append([]byte(nil), w...)
			InterleaveRows4(l.t, n, want, rows, nil)
			if rows >= g && n > l.t.BlockSize() && bytes.Equal(want, w) {
				t.Fatalf("%s: the layout changed nothing", name)
			}
			got := nanBytes(len(w))
			InterleaveRowsTo(l.t, n, got, w, rows)
			if !bytes.Equal(got, want) {
				t.Fatalf("%s: one pass differs from the copy interleaved in place", name)
			}
			for row := 0; row < rows; row++ {
				if b := Rows4Row(l.t, n, got, rows, row, make([]byte, rs)); !bytes.Equal(b, w[row*rs:(row+1)*rs]) {
					t.Fatalf("%s: row %d reads back differently", name, row)
				}
			}
			runs := nanBytes(len(w))
			for r0 := 0; r0 < rows; {
				r1 := min(rows, r0+g*(1+r.IntN(2)))
				if rows-r1 < g { // the last run takes the tail
					r1 = rows
				}
				InterleaveRowsTo(l.t, n, runs[r0*rs:r1*rs], w[r0*rs:r1*rs], r1-r0)
				r0 = r1
			}
			if !bytes.Equal(runs, want) {
				t.Fatalf("%s: written run by run, the matrix differs", name)
			}
		}
	}
}

// nanBytes is n bytes of 0xFF (an F16/F32 NaN pattern), so that a byte
// left unwritten shows.
func nanBytes(n int) []byte { return bytes.Repeat([]byte{0xFF}, n) }
