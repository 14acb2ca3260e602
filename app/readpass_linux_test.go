package main

import (
	"sync"
	"testing"
)

// TestReadPassCoversOnce: both of the probe's splits read each chunk of
// the th·part bytes exactly once and nothing past them, for thread counts
// that do and do not divide the chunks.
func TestReadPassCoversOnce(t *testing.T) {
	const chunk, chunks = 64, 100
	buf := make([]byte, chunk*chunks+17)
	for i := range chunks {
		buf[i*chunk] = byte(i)
	}
	for _, th := range []int{1, 2, 3, 7, 16} {
		for _, claimed := range []bool{false, true} {
			var mu sync.Mutex
			seen := map[int]int{}
			read := func(p []byte) float32 {
				mu.Lock()
				seen[int(p[0])]++
				mu.Unlock()
				if len(p) != chunk {
					t.Errorf("th %d claimed %v: a read of %d bytes", th, claimed, len(p))
				}
				return float32(p[0])
			}
			total, sum := readPass(buf, th, chunk, claimed, read)
			n := len(buf) / th / chunk * th // whole chunks per thread, times th
			if total != n*chunk {
				t.Errorf("th %d claimed %v: total %d, want %d", th, claimed, total, n*chunk)
			}
			want := float32(0)
			for i := range n {
				want += float32(i)
				if seen[i] != 1 {
					t.Errorf("th %d claimed %v: chunk %d read %d times", th, claimed, i, seen[i])
				}
			}
			if len(seen) != n || sum != want {
				t.Errorf("th %d claimed %v: %d chunks read, sum %v; want %d, %v", th, claimed, len(seen), sum, n, want)
			}
		}
	}
}
