package model

import (
	"sync"

	"flowchat/engine/ggml"
)

// InterleaveRows4 rewrites, in place, the matrices the layers and the
// output head multiply by whose type has kernels on ggml's interleaved
// layout here (ggml.Rows4: Q4_0 and Q8_0 on AVX-512 VNNI) into that
// layout, on up to threads goroutines, and returns how many it rewrote. Decode reads a
// group of 4 rows as one stream: on the EPYC VM TinyLlama Q4_0 generation
// ran faster this way (docs/PERFORMANCE.md, issue 18), with results bit
// for bit the same. The token embedding (also when tied to the output
// head) stays row-major: its rows are looked up one by one.
//
// The weights must be in private writable memory, not a file mapping
// (engine.Load calls this after the huge-page copy, never with --mmap),
// and on the host: a device's share is uploaded from the rows in place.
// It is a no-op when the first candidate is still file-mapped.
//
// With Options.Interleave the huge-page copy has already laid out the same
// matrices as it read them (copyToHugePages); they are skipped here.
func (m *Model) InterleaveRows4(threads int) int {
	var ws []*Weight
	for _, w := range m.Weights() {
		if w == m.TokEmbd || w == m.PosEmbd || w == m.TypeEmbd || !rows4Candidate(w) {
			continue
		}
		ws = append(ws, w)
	}
	if len(ws) == 0 || isFileMapping(ws[0].Data) {
		return 0
	}
	next := make(chan *Weight, len(ws))
	for _, w := range ws {
		next <- w
	}
	close(next)
	var wg sync.WaitGroup
	for i := 0; i < max(1, min(threads, len(ws))); i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var scratch []byte
			for w := range next {
				if n := ggml.InterleaveGroup(w.Type) * w.Type.RowSize(w.Cols); len(scratch) < n {
					scratch = make([]byte, n)
				}
				ggml.InterleaveRows4(w.Type, w.Cols, w.Data, w.Rows, scratch)
				w.Rows4 = true
			}
		}()
	}
	wg.Wait()
	return len(ws)
}

// rows4Candidate reports whether InterleaveRows4 rewrites w, unless it is
// one of the lookup tables.
func rows4Candidate(w *Weight) bool {
	return !w.Rows4 && w.Rows >= 8 && ggml.Rows4(w.Type)
}

// lookupTables are the canonical names of the tensors whose rows are
// looked up one by one (Model.TokEmbd, PosEmbd and TypeEmbd: bind), which
// stay row-major.
var lookupTables = map[string]bool{"token_embd.weight": true, "position_embd.weight": true, "token_types.weight": true}
