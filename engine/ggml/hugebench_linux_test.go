package ggml

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// hugeCopy copies b into an anonymous mapping advised to use transparent
// huge pages (as a model loader can do), so benchmarks can compare.
func hugeCopy(tb testing.TB, b []byte) []byte {
	size := (len(b) + 2<<20 - 1) &^ (2<<20 - 1)
	m, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		tb.Skip("mmap:", err)
	}
	if err := syscall.Madvise(m, 14 /* MADV_HUGEPAGE */); err != nil {
		tb.Skip("madvise:", err)
	}
	tb.Cleanup(func() { syscall.Munmap(m) })
	copy(m, b)
	return m[:len(b)]
}

// BenchmarkMatVecHuge is BenchmarkMatVec with the weights in huge pages.
func BenchmarkMatVecHuge(b *testing.B) {
	for _, tp := range []Type{F32, Q8_0, Q4_0, Q4_K, Q6_K} {
		b.Run(tp.String(), func(b *testing.B) {
			ws, x := benchWeights(tp, 2048, 2048)
			for i := range ws {
				ws[i] = hugeCopy(b, ws[i])
			}
			dst := make([]float32, 2048)
			b.SetBytes(int64(len(ws[0])))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				MatVec(tp, 2048, ws[i%len(ws)], x, dst)
			}
		})
	}
}

// BenchmarkDecodeStream streams a TinyLlama-sized set of matrices (about
// 600 MiB, more than the last-level cache) through the decode kernels
// (MatMulAct with one prepared column) on one thread, as decode does: the
// single-core memory-bound rate of each kernel.
func BenchmarkDecodeStream(b *testing.B) {
	for _, tp := range []Type{Q4_0, Q8_0, F16, Q4_K, Q6_K} {
		for _, sh := range [][2]int{{5632, 2048}, {2048, 5632}, {256, 2048}} {
			rows, n := sh[0], sh[1]
			b.Run(fmt.Sprintf("%v/%dx%d", tp, rows, n), func(b *testing.B) { benchStream(b, tp, rows, n) })
		}
	}
}

// BenchmarkDecodeStream2 is BenchmarkDecodeStream on two goroutines, each
// over its own half of the set (the 2-thread decode's memory load).
func BenchmarkDecodeStream2(b *testing.B) {
	for _, tp := range []Type{Q4_0, Q8_0, F16, Q4_K, Q6_K} {
		for _, sh := range [][2]int{{2048, 2048}, {5632, 2048}} {
			b.Run(fmt.Sprintf("%v/%dx%d", tp, sh[0], sh[1]), func(b *testing.B) { benchStream2(b, tp, sh[0], sh[1]) })
		}
	}
}

func benchStream2(b *testing.B, tp Type, rows, n int) {
	set, w, x := streamSet(b, tp, rows, n, 2)
	b.SetBytes(int64(len(set)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var wg sync.WaitGroup
		for t := 0; t < 2; t++ {
			wg.Add(1)
			go func(part []byte) {
				defer wg.Done()
				streamPass(tp, rows, n, part, w, x)
			}(set[t*len(set)/2 : (t+1)*len(set)/2])
		}
		wg.Wait()
	}
}

func benchStream(b *testing.B, tp Type, rows, n int) {
	set, w, x := streamSet(b, tp, rows, n, 1)
	b.SetBytes(int64(len(set)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		streamPass(tp, rows, n, set, w, x)
	}
}

// streamSet returns huge-page-backed copies of one rows×n matrix w of tp,
// about streamMiB in all and a multiple of parts copies, and a column x
// (as benchWeights gives it).
func streamSet(tb testing.TB, tp Type, rows, n, parts int) (set, w, x []byte) {
	ws, x := benchWeights(tp, rows, n)
	w = ws[0]
	set = hugeAlloc(tb, streamMiB()<<20/len(w)/parts*parts*len(w))
	for off := 0; off < len(set); off += len(w) {
		copy(set[off:], w)
	}
	return set, w, x
}

// streamPass runs the decode kernel (MatMulAct on one prepared column)
// over every copy of w in set. The column is prepared per pass: a few
// microseconds against the tens of milliseconds a pass streams.
func streamPass(tp Type, rows, n int, set, w, x []byte) {
	var a Act
	a.Prepare(tp, n, x, 1)
	passCopies(tp, n, rows, set, len(w), &a, make([]float32, rows), false)
}

// hugeAlloc returns n bytes advised to use transparent huge pages.
func hugeAlloc(tb testing.TB, n int) []byte {
	m, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		tb.Skip("mmap:", err)
	}
	_ = syscall.Madvise(m, 14 /* MADV_HUGEPAGE */)
	tb.Cleanup(func() { syscall.Munmap(m) })
	return m
}

// streamMiB is the size of the streamed set (FLOWCHAT_STREAM_MIB, default
// 600 MiB: larger than a TinyLlama decode step's weights).
func streamMiB() int {
	if v, err := strconv.Atoi(os.Getenv("FLOWCHAT_STREAM_MIB")); err == nil && v > 0 {
		return v
	}
	return 600
}

// BenchmarkReadBandwidth is the machine's memory read bandwidth as decode
// sees it: 1 GiB in huge pages read on 1 and 2 goroutines (each its own
// half), by three readers: "dot", the F32 dot kernel, "prefetch", ReadSum
// (a software prefetch 4 KiB ahead), and "streams", ReadStreams (four
// streams side by side, no software prefetch; since 2026-12-07, when it
// read a third more than the other two on the Zen 3 VM). The best is the limit
// the decode GB/s figures in docs/PERFORMANCE.md are compared with (since
// 2026-11-27; before, the dot alone, which read 10–25% less on the Xeon VM).
func BenchmarkReadBandwidth(b *testing.B) {
	const size, chunk = 1 << 30, 1 << 18
	buf := hugeAlloc(b, size)
	for i := range buf {
		buf[i] = byte(i)
	}
	x := make([]byte, chunk)
	readers := []struct {
		name string
		read func(p []byte) float32
	}{
		{"dot", func(p []byte) float32 { return VecDot(F32, chunk/4, p, x) }},
		{"prefetch", func(p []byte) float32 { return float32(ReadSum(p)) }},
		{"streams", func(p []byte) float32 { return float32(ReadStreams(p)) }},
	}
	for _, r := range readers {
		for _, th := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/threads=%d", r.name, th), func(b *testing.B) {
				b.SetBytes(size)
				for i := 0; i < b.N; i++ {
					var wg sync.WaitGroup
					var sums [2]float32
					part := size / th
					for t := 0; t < th; t++ {
						wg.Add(1)
						go func(p []byte, sum *float32) {
							defer wg.Done()
							for off := 0; off < len(p); off += chunk {
								*sum += r.read(p[off : off+chunk])
							}
						}(buf[t*part:(t+1)*part], &sums[t])
					}
					wg.Wait()
					benchSink = sums[0] + sums[1]
				}
			})
		}
	}
}

// BenchmarkModelStream streams a TinyLlama-sized set of 5632×2048 matrices
// through decode as a model runs it: each type in the layout the model
// loads it in here (interleaved where Rows4 says so), one prepared column,
// on 1 and 2 goroutines (each its own half), in wall-clock GB/s of weights
// next to the read probe (BenchmarkReadBandwidth), alternated twice.
func BenchmarkModelStream(b *testing.B) {
	rows, n := 5632, 2048
	for rep := 0; rep < 2; rep++ {
		for _, tp := range streamTypes() {
			for _, th := range []int{1, 2} {
				b.Run(fmt.Sprintf("%v/threads=%d/%d", tp, th, rep), func(b *testing.B) {
					set, w, x := streamSet(b, tp, rows, n, th)
					il := Rows4(tp)
					if il {
						for off := 0; off < len(set); off += len(w) {
							InterleaveRows4(tp, n, set[off:off+len(w)], rows, nil)
						}
					}
					b.SetBytes(int64(len(set)))
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						var wg sync.WaitGroup
						for t := 0; t < th; t++ {
							wg.Add(1)
							go func(part []byte) {
								defer wg.Done()
								var a Act
								if il {
									a.BeginTiles(tp, n, x, 1)
								} else {
									a.Begin(tp, n, x, 1)
								}
								a.Fill(0, 1)
								passCopies(tp, n, rows, part, len(w), &a, make([]float32, rows), il)
							}(set[t*len(set)/th : (t+1)*len(set)/th])
						}
						wg.Wait()
					}
				})
			}
		}
	}
}

// streamTypes is BenchmarkModelStream's types: FLOWCHAT_STREAM_TYPES (names,
// comma-separated) or the issue-18 suite's and the float ones.
func streamTypes() []Type {
	ts := []Type{Q4_0, Q8_0, Q4_K, Q5_K, Q6_K, F16, BF16, F32}
	if v := os.Getenv("FLOWCHAT_STREAM_TYPES"); v != "" {
		ts = ts[:0]
		for _, name := range strings.Split(v, ",") {
			if t, ok := ParseType(name); ok {
				ts = append(ts, t)
			}
		}
	}
	return ts
}
