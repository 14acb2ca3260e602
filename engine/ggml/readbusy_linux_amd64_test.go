//go:build linux && amd64 && !noasm

package ggml

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// BenchmarkReadBusy is the read probe's four-stream reader (ReadStreams)
// with 0, 4 and 8 vector integer operations after each 32-byte load, over
// 1 GiB in huge pages on 1 and 2 goroutines, the three readers alternated
// within each iteration so that the VM's drift falls on all of them. It
// asks how fast a core streams from memory while its vector units are
// busy at a decode kernel's density: the AVX2 tile kernels spend ~7.6
// (r16q40d4: ~68 per 288-byte group block) and ~5.4 (r16q80d4: ~92 per
// 544) such operations per 32 bytes. It reports each reader's GB/s (best
// pass) and busy4/busy8 as a share of the plain reader's (median pair).
func BenchmarkReadBusy(b *testing.B) {
	if !hasAVX2 {
		b.Skip("skipping: the readers are AVX2 assembly, which this CPU lacks")
	}
	const size, chunk = 1 << 30, 1 << 18
	buf := hugeAlloc(b, size)
	for i := range buf {
		buf[i] = byte(i)
	}
	readers := []func(p []byte) uint32{
		func(p []byte) uint32 { return readStreamsAVX(&p[0], len(p)) },
		func(p []byte) uint32 { return readStreamsBusy4AVX(&p[0], len(p)) },
		func(p []byte) uint32 { return readStreamsBusy8AVX(&p[0], len(p)) },
	}
	for _, th := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", th), func(b *testing.B) {
			pass := func(read func([]byte) uint32) float64 {
				var wg sync.WaitGroup
				var sums [2]uint32
				part := size / th
				t0 := time.Now()
				for t := 0; t < th; t++ {
					wg.Add(1)
					go func(p []byte, sum *uint32) {
						defer wg.Done()
						for off := 0; off < len(p); off += chunk {
							*sum += read(p[off : off+chunk])
						}
					}(buf[t*part:(t+1)*part], &sums[t])
				}
				wg.Wait()
				benchSink = float32(sums[0] + sums[1])
				return float64(size) / float64(time.Since(t0).Nanoseconds())
			}
			var best [3]float64
			var share [2][]float64
			for i := 0; i < b.N; i++ {
				var r [3]float64
				for k, read := range readers {
					r[k] = pass(read)
					best[k] = max(best[k], r[k])
				}
				share[0] = append(share[0], r[1]/r[0])
				share[1] = append(share[1], r[2]/r[0])
			}
			b.ReportMetric(best[0], "plainGB/s")
			b.ReportMetric(best[1], "busy4GB/s")
			b.ReportMetric(best[2], "busy8GB/s")
			for k, s := range share {
				slices.Sort(s)
				b.ReportMetric(100*s[len(s)/2], fmt.Sprintf("%%busy%d", 4*(k+1)))
			}
		})
	}
}

// TestReadBusySums: the busy readers still read every word (their sums are
// ReadStreams'), so BenchmarkReadBusy measures the same bytes three ways.
func TestReadBusySums(t *testing.T) {
	if !hasAVX2 {
		t.Skip("skipping: the readers are AVX2 assembly, which this CPU lacks")
	}
	buf := make([]byte, 64<<10)
	for i := range buf {
		buf[i] = byte(i*131 + i>>8)
	}
	for _, n := range []int{256, 512, 4096, len(buf)} {
		want := ReadStreams(buf[:n])
		if got := readStreamsBusy4AVX(&buf[0], n); got != want {
			t.Errorf("%d bytes: busy4 %#x, want %#x", n, got, want)
		}
		if got := readStreamsBusy8AVX(&buf[0], n); got != want {
			t.Errorf("%d bytes: busy8 %#x, want %#x", n, got, want)
		}
	}
}
