package ggml

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkStreamVsRead measures the decode strip's streaming rate as a
// share of the read probe's over the same bytes (the faster of its
// readers ReadSum and ReadStreams, each pass): each iteration reads the
// same 600 MiB set of interleaved rows4 groups with each reader and once
// with MatMulActRows4 on one
// column, on the same locked thread, so the VM's drift (±10–20% within
// minutes on the 2-vCPU machines) falls on both sides of each pair. It
// reports the median pair's ratio (%read) and the ratio of the two best
// passes (%best). F16 streams row-major where it has no interleaved
// kernels (the AVX-512 tier). Q4_K and Q6_K take their own tile layout (k16.go); their
// decode kernels, with an L1 prefetch besides the L2 one, read 92–110% of
// ReadSum on the EPYC VM (Zen 5, 2026-11-28), no faster without it.
func BenchmarkStreamVsRead(b *testing.B) {
	for _, th := range []int{1, 2} {
		for _, tp := range []Type{Q4_0, Q8_0, Q4_K, Q6_K, F16} {
			for _, sh := range [][2]int{{5632, 2048}, {2048, 5632}} {
				rows, n := sh[0], sh[1]
				b.Run(fmt.Sprintf("%v/%dx%d/threads=%d", tp, rows, n, th), func(b *testing.B) { benchStreamVsRead(b, tp, rows, n, th) })
			}
		}
	}
}

// benchStreamVsRead: with th goroutines, each over its own part of the set
// (as the decode pool's threads each start at their own share of a
// matrix), in wall time.
func benchStreamVsRead(b *testing.B, tp Type, rows, n, th int) {
	set, w, x := streamSet(b, tp, rows, n, th)
	il := Rows4(tp) // as the model's loader: interleaved where that layout has kernels
	for off := 0; il && off < len(set); off += len(w) {
		InterleaveRows4(tp, n, set[off:off+len(w)], rows, nil)
	}
	part := len(set) / th
	each := func(body func(p []byte)) float64 {
		var wg sync.WaitGroup
		t0 := time.Now()
		for t := 0; t < th; t++ {
			wg.Add(1)
			go func(p []byte) {
				defer wg.Done()
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				body(p)
			}(set[t*part : (t+1)*part])
		}
		wg.Wait()
		return float64(len(set)) / float64(time.Since(t0).Nanoseconds())
	}
	var sink atomic.Uint32
	read := func(p []byte) { sink.Add(ReadSum(p)) }
	streams := func(p []byte) { sink.Add(ReadStreams(p)) }
	kernel := func(p []byte) {
		var a Act
		a.Prepare(tp, n, x, 1)
		passCopies(tp, n, rows, p, len(w), &a, make([]float32, rows), il)
	}
	var ratios []float64
	bestR, bestK := 0.0, 0.0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := max(each(read), each(streams))
		k := each(kernel)
		ratios = append(ratios, k/r)
		bestR, bestK = max(bestR, r), max(bestK, k)
	}
	slices.Sort(ratios)
	b.ReportMetric(100*ratios[len(ratios)/2], "%read")
	b.ReportMetric(100*bestK/bestR, "%best")
	b.ReportMetric(bestR, "readGB/s")
	b.ReportMetric(bestK, "kernelGB/s")
}
