package ggml

import (
	"math/rand"
	"testing"
)

// TestReadSum holds the probe's readers (ReadSum, ReadStreams) to the plain word sum, for every
// length around the 128-byte blocks and at every alignment.
func TestReadSum(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	buf := make([]byte, 5000)
	rng.Read(buf)
	for off := 0; off < 8; off++ {
		for n := 0; off+n <= len(buf); n += 1 + n/16 {
			p := buf[off : off+n]
			var want uint32
			for i := 0; i < n; i += 4 {
				var w uint32
				for k := 0; k < 4 && i+k < n; k++ {
					w |= uint32(p[i+k]) << (8 * k)
				}
				want += w
			}
			if got := ReadSum(p); got != want {
				t.Fatalf("offset %d, %d bytes: ReadSum %#x, want %#x", off, n, got, want)
			}
			if got := ReadStreams(p); got != want {
				t.Fatalf("offset %d, %d bytes: ReadStreams %#x, want %#x", off, n, got, want)
			}
		}
	}
}
