package ggml

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"

	"flowchat/engine/parallel"
)

// BenchmarkBatchDecode is a batched decode step's matrix products on
// TinyLlama's shapes: a set of copies of one rows×n matrix (about
// streamMiB, more than the last-level cache) each multiplied by T prepared
// columns in row chunks as engine/model's chunkRows gives them (16 tasks
// per thread for one column, 64-row chunks for more): over a persistent
// pool at 2 threads (wall time), inline at 1 thread (timed by CPU time,
// robust on a shared machine). colGB/s is T times the weight bytes
// streamed per second, so colGB/s at T over colGB/s at T=1 is the
// aggregate speed-up of a batch of T sequences over one.
func BenchmarkBatchDecode(b *testing.B) {
	for _, tp := range []Type{Q4_0, Q8_0, Q4_K, Q6_K, F16} {
		for _, sh := range [][2]int{{2048, 2048}, {5632, 2048}, {2048, 5632}, {32000, 2048}} {
			rows, n := sh[0], sh[1]
			b.Run(fmt.Sprintf("%v/%dx%d", tp, rows, n), func(b *testing.B) {
				set, w, _ := streamSet(b, tp, rows, n, 1)
				for _, th := range []int{1, 2} {
					for _, T := range []int{1, 2, 3, 4, 6, 8, 12, 16} {
						b.Run(fmt.Sprintf("t%d/T%d", th, T), func(b *testing.B) {
							if th == 1 {
								benchBatchCPU(b, tp, rows, n, T, set, len(w))
								return
							}
							benchBatch(b, tp, rows, n, th, T, set, len(w))
						})
					}
				}
			})
		}
	}
}

type batchTask struct {
	tp          Type
	n, rows, rs int
	chunk       int
	w           []byte
	a           *Act
	dst         []float32
}

func (t *batchTask) Run(i, worker int) {
	r0 := i * t.chunk
	r1 := min(r0+t.chunk, t.rows)
	MatMulAct(t.tp, t.n, t.w[r0*t.rs:r1*t.rs], r1-r0, t.a, t.dst[r0:], t.rows)
}

func benchChunkRows(rows, T, threads, rowBytes int) int {
	if threads == 1 && T == 1 {
		return rows
	}
	per := 4
	if T == 1 {
		per = 16
	}
	c := (rows + per*threads - 1) / (per * threads)
	if T == 1 {
		c = max(c, (48<<10+rowBytes-1)/max(rowBytes, 1))
	} else {
		c = min(c, 64)
	}
	c = max(16, (c+15)/16*16)
	return min(c, rows)
}

func benchBatch(b *testing.B, tp Type, rows, n, threads, T int, set []byte, wlen int) {
	r := rand.New(rand.NewPCG(3, 4))
	var x []byte
	for c := 0; c < T; c++ {
		x = append(x, randomActivation(r, tp.VecDotType(), n)...)
	}
	pool := parallel.New(threads)
	defer pool.Close()
	var a Act
	rs := tp.RowSize(n)
	task := &batchTask{tp: tp, n: n, rows: rows, rs: rs, a: &a, dst: make([]float32, T*rows),
		chunk: benchChunkRows(rows, T, threads, rs)}
	tasks := (rows + task.chunk - 1) / task.chunk
	b.SetBytes(int64(len(set) / wlen * wlen))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for off := 0; off+wlen <= len(set); off += wlen {
			a.Prepare(tp, n, x, T)
			task.w = set[off : off+wlen]
			pool.Run(task, tasks)
		}
	}
	b.ReportMetric(float64(T)*float64(len(set)/wlen*wlen)*float64(b.N)/b.Elapsed().Seconds()/1e9, "colGB/s")
}

// benchBatchCPU is benchBatch on one thread timed by its CPU time (robust
// on a shared machine): 64-row chunks for T > 1, as engine/model's
// chunkRows gives them.
func benchBatchCPU(b *testing.B, tp Type, rows, n, T int, set []byte, wlen int) {
	r := rand.New(rand.NewPCG(3, 4))
	var x []byte
	for c := 0; c < T; c++ {
		x = append(x, randomActivation(r, tp.VecDotType(), n)...)
	}
	var a Act
	rs := tp.RowSize(n)
	chunk := benchChunkRows(rows, T, 1, rs)
	dst := make([]float32, T*rows)
	ns := cpuTimed(b, func() {
		for off := 0; off+wlen <= len(set); off += wlen {
			a.Prepare(tp, n, x, T)
			w := set[off : off+wlen]
			for r0 := 0; r0 < rows; r0 += chunk {
				r1 := min(r0+chunk, rows)
				MatMulAct(tp, n, w[r0*rs:r1*rs], r1-r0, &a, dst[r0:], rows)
			}
		}
	})
	b.ReportMetric(float64(T)*float64(len(set)/wlen*wlen)/ns, "colGB/s")
}

// BenchmarkActPrepare is the activation preparation of a batched decode
// step's matrix product (Act.Prepare of T Q8_0 columns for Q4_0 weights),
// to set against BenchmarkBatchDecode's time per matrix; tiles: through
// BeginTiles, as the model prepares the input of interleaved matrices.
func BenchmarkActPrepare(b *testing.B) {
	for _, tiles := range []bool{false, true} {
		for _, n := range []int{2048, 5632} {
			for _, T := range []int{1, 2, 8, 16} {
				b.Run(fmt.Sprintf("tiles=%v/n%d/T%d", tiles, n, T), func(b *testing.B) {
					r := rand.New(rand.NewPCG(3, 4))
					var x []byte
					for c := 0; c < T; c++ {
						x = append(x, randomActivation(r, Q8_0, n)...)
					}
					var a Act
					cpuTimed(b, func() {
						if tiles {
							a.BeginTiles(Q4_0, n, x, T)
						} else {
							a.Begin(Q4_0, n, x, T)
						}
						a.Fill(0, T)
					})
				})
			}
		}
	}
}

// benchBatchCPU2 is benchBatchCPU on two goroutines, each on its own
// locked thread over its own half of the set (both cores loading memory
// as a 2-thread decode does): colGB/s counts the set's bytes by the larger
// of the two threads' CPU times, which, unlike the pool's wall time, the
// other processes of a shared machine barely change.
func benchBatchCPU2(b *testing.B, tp Type, rows, n, T int, set []byte, wlen int) {
	r := rand.New(rand.NewPCG(3, 4))
	var x []byte
	for c := 0; c < T; c++ {
		x = append(x, randomActivation(r, tp.VecDotType(), n)...)
	}
	rs := tp.RowSize(n)
	chunk := benchChunkRows(rows, T, 1, rs)
	copies := len(set) / wlen
	var cpu [2]int64
	b.ResetTimer()
	var wg sync.WaitGroup
	for t := 0; t < 2; t++ {
		wg.Add(1)
		go func(t int) {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var a Act
			dst := make([]float32, T*rows)
			t0 := threadCPU()
			for i := 0; i < b.N; i++ {
				for k := t; k < copies; k += 2 {
					a.Prepare(tp, n, x, T)
					w := set[k*wlen : (k+1)*wlen]
					for r0 := 0; r0 < rows; r0 += chunk {
						r1 := min(r0+chunk, rows)
						MatMulAct(tp, n, w[r0*rs:r1*rs], r1-r0, &a, dst[r0:], rows)
					}
				}
			}
			cpu[t] = threadCPU() - t0
		}(t)
	}
	wg.Wait()
	ns := float64(max(cpu[0], cpu[1])) / float64(b.N)
	b.ReportMetric(ns, "cpu-ns/op")
	b.ReportMetric(float64(T)*float64(copies*wlen)/ns, "colGB/s")
}
