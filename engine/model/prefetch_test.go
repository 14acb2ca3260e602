package model

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"flowchat/engine/ggml"
)

// TestPassChainFollowsDecode: the pass that linkPasses names as a matrix
// pass's next is the one a decode step runs after it, including the head
// to the next token's first pass, for each fixture's layout (separate or
// fused QKV, gated or plain FFN, fused gate, mixed weight types).
func TestPassChainFollowsDecode(t *testing.T) {
	for _, file := range []string{
		"models/stories260K/stories260K-F32.gguf",
		"models/stories260K/stories260K-Q8_0mix.gguf",
		"models/tinystories-656K/TinyStories-656K-Q4_0.gguf",
		"arch/rand-falcon-F32.gguf",
		"arch/rand-phi3-F32.gguf",
		"arch/rand-gpt2-F32.gguf",
		"arch/rand-gemma-F32.gguf",
		"arch/rand-bloom-F32.gguf",
		"arch/rand-llama-gqa-Q4_K_M-mix.gguf",
	} {
		t.Run(file, func(t *testing.T) {
			m := loadSplitFixture(t, file, 2)
			var trace [][]*Weight
			tracePasses = func(mt *matmulTask) {
				var ws []*Weight
				for _, p := range mt.parts[:mt.n] {
					ws = append(ws, p.w)
				}
				trace = append(trace, ws)
			}
			defer func() { tracePasses = nil }()
			s := m.NewState(16, 8)
			if _, err := s.Forward([]int32{1, 2, 3}, false); err != nil {
				t.Fatal(err)
			}
			trace = nil
			for _, tok := range []int32{4, 5, 6} {
				if _, err := s.Forward([]int32{tok}, false); err != nil {
					t.Fatal(err)
				}
			}
			if len(trace) < 3*(1+2*m.NLayer) {
				t.Fatalf("%d passes over 3 tokens of %d layers", len(trace), m.NLayer)
			}
			for i := 0; i+1 < len(trace); i++ {
				if next := trace[i][0].next; !slices.Equal(next, trace[i+1]) {
					t.Fatalf("pass %d (%s) names %s next; decode ran %s", i, names(trace[i]), names(next), names(trace[i+1]))
				}
			}
		})
	}
}

func names(ws []*Weight) string {
	var s []string
	for _, w := range ws {
		s = append(s, w.Name)
	}
	return fmt.Sprint(s)
}

// TestNextShare holds nextShare to the rows each worker owns in the next
// pass, enumerated here from chunkRows and the pool's even split: it
// starts at the first row of the worker's first task, stays inside that
// weight's rows of the worker's tasks, and is at most pfNextBytes.
func TestNextShare(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 18))
	for iter := 0; iter < 2000; iter++ {
		var next []*Weight
		for k := 0; k < 1+r.IntN(3); k++ {
			cols := 32 * (1 + r.IntN(64))
			rows := 1 + r.IntN(3000)
			typ := []ggml.Type{ggml.F32, ggml.Q4_0, ggml.Q8_0}[r.IntN(3)]
			next = append(next, &Weight{Name: fmt.Sprint("w", k), Type: typ, Cols: cols, Rows: rows, Data: make([]byte, rows*typ.RowSize(cols))})
		}
		T := []int{1, 2, 5, 16}[r.IntN(4)]
		threads := 1 + r.IntN(17)
		// The tasks in order: (weight, first row, end row).
		type task struct{ w, r0, r1 int }
		var tasks []task
		for wi, w := range next {
			c := chunkRows(w.Rows, T, threads, w.Type.RowSize(w.Cols))
			for r0 := 0; r0 < w.Rows; r0 += c {
				tasks = append(tasks, task{wi, r0, min(r0+c, w.Rows)})
			}
		}
		for worker := 0; worker < threads; worker++ {
			lo, hi := worker*len(tasks)/threads, (worker+1)*len(tasks)/threads
			if len(tasks) == 1 || threads == 1 {
				lo, hi = 0, 0
				if worker == 0 {
					hi = len(tasks)
				}
			}
			got := nextShare(next, T, threads, worker)
			if lo >= hi {
				if got != nil {
					t.Fatalf("iter %d: worker %d of %d owns no task of %d but got %d bytes", iter, worker, threads, len(tasks), len(got))
				}
				continue
			}
			first := tasks[lo]
			w := next[first.w]
			rs := w.Type.RowSize(w.Cols)
			end := first.r1
			for _, tk := range tasks[lo+1 : hi] {
				if tk.w == first.w {
					end = tk.r1
				}
			}
			want := w.Data[first.r0*rs : min(end*rs, first.r0*rs+pfNextBytes)]
			if len(got) != len(want) || (len(got) > 0 && &got[0] != &want[0]) {
				t.Fatalf("iter %d: worker %d of %d, T=%d: got %d bytes at the wrong place or length, want %d from row %d of %s",
					iter, worker, threads, T, len(got), len(want), first.r0, w.Name)
			}
		}
	}
}
