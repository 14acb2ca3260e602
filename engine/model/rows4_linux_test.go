package model

import (
	"bytes"
	"math"
	"testing"

	"flowchat/engine/fixtures"
	"flowchat/engine/ggml"
	"flowchat/engine/gguf"
)

// TestInterleaveRows4Logits: a model whose Q4_0 and Q8_0 matrices were interleaved
// after the huge-page copy gives the same logits for a prompt in one batch
// and token by token, bit for bit, and those of the model read in place,
// bit for bit (groups of 4 rows) or within 1% relative RMS with the same
// argmax (the tile layouts of 16 rows: the AMX tier's Q4_0/Q8_0, which
// round by block, and the K-quants', by sub-block), on 1 and 2
// threads (the decode chunks of 16 rows start on groups); its rows read
// back row-major; a file mapping is never rewritten; and the load's one
// pass (the huge-page copy laying out as it reads) writes the same bytes.
func TestInterleaveRows4Logits(t *testing.T) {
	if !ggml.Rows4(ggml.Q4_0) {
		t.Skip("skipping: this CPU has no interleaved Q4_0 kernels (they need AVX-512 VNNI)")
	}
	files := []string{"arch/rand-llama-gqa-Q4_0.gguf", "models/stories260K/stories260K-Q4_0mix.gguf", "models/tinystories-656K/TinyStories-656K-Q4_0.gguf", "models/stories260K/stories260K-Q8_0mix.gguf", "models/tinystories-656K/TinyStories-656K-Q8_0.gguf"}
	if ggml.Rows4(ggml.Q4_K) { // the K-quant tile layouts of AVX-512 VNNI (ggml/k16.go, k16q6.go), the AVX2 tier's groups of 4 rows
		files = append(files, "arch/rand-llama-gqa-Q4_K.gguf", "arch/rand-llama-gqa-Q4_K_M-mix.gguf", "arch/rand-llama-gqa-Q6_K.gguf")
	}
	if ggml.Rows4(ggml.Q5_K) { // AVX-512 VNNI's only
		files = append(files, "arch/rand-llama-gqa-Q5_K.gguf")
	}
	for _, file := range files {
		f, err := gguf.Open(fixtures.Path(t, file))
		if err != nil {
			t.Fatal(err)
		}
		for _, threads := range []int{1, 2} {
			base, err := FromGGUF(f, nil, Options{Threads: threads})
			if err != nil {
				t.Fatal(err)
			}
			if n := base.InterleaveRows4(2); n != 0 {
				t.Fatalf("%s: %d matrices of a file mapping rewritten", file, n)
			}
			huge, release, err := FromGGUFHugePages(f, nil, Options{Threads: threads})
			if err != nil {
				t.Fatal(err)
			}
			n := huge.InterleaveRows4(2)
			if n == 0 {
				t.Fatalf("%s: no matrix interleaved", file)
			}
			if huge.TokEmbd.Rows4 {
				t.Errorf("%s: token embedding interleaved", file)
			}
			// The load's one pass (Options.Interleave: the copy lays out
			// the matrices as it reads) gives the same matrices, byte for
			// byte, and leaves InterleaveRows4 nothing to do.
			one, releaseOne, err := FromGGUFHugePages(f, nil, Options{Threads: threads, Interleave: true})
			if err != nil {
				t.Fatal(err)
			}
			if k := one.InterleaveRows4(2); k != 0 {
				t.Fatalf("%s: %d matrices left to interleave after the one-pass copy", file, k)
			}
			for i, w := range one.Weights() {
				h := huge.Weights()[i]
				if w.Rows4 != h.Rows4 || !bytes.Equal(w.Data, h.Data) {
					t.Fatalf("%s: %s one pass: Rows4 %v, in place %v; same bytes %v", file, w.Name, w.Rows4, h.Rows4, bytes.Equal(w.Data, h.Data))
				}
			}
			one.Close()
			if err := releaseOne(); err != nil {
				t.Error(err)
			}
			for i, w := range huge.Weights() {
				b := base.Weights()[i]
				// One block a row is the same layout either way (the
				// K-quant matrices of 256 columns).
				if w.Rows4 && (!ggml.Rows4(w.Type) || bytes.Equal(w.Data, b.Data) && w.Cols > w.Type.BlockSize()) {
					t.Fatalf("%s: %s marked interleaved (type %v, data unchanged %v)", file, w.Name, w.Type, bytes.Equal(w.Data, b.Data))
				}
				for _, r := range []int{0, 1, 3, 4, w.Rows - 1} {
					if r >= 0 && r < w.Rows && !bytes.Equal(w.Row(r), b.Row(r)) {
						t.Fatalf("%s: %s row %d differs from the file's", file, w.Name, r)
					}
				}
				if !bytes.Equal(w.Plain(0, w.Rows), b.Data) {
					t.Fatalf("%s: %s Plain differs from the file's rows", file, w.Name)
				}
			}
			t.Logf("%s, %d threads: %d matrices interleaved", file, threads, n)
			prompt := randPrompt(base, 30, 5)
			want := promptLogits(t, base.NewState(64, 32), prompt)
			got := promptLogits(t, huge.NewState(64, 32), prompt)
			step := promptLogits(t, huge.NewState(64, 1), prompt)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(step[i]) {
					t.Fatalf("%s: logit %d: interleaved %v in one batch, %v token by token", file, i, got[i], step[i])
				}
			}
			tile := false // a matrix in a tile layout of 16 rows (ggml/b16.go, k16.go)
			for _, w := range huge.Weights() {
				tile = tile || w.Rows4 && ggml.InterleaveGroup(w.Type) == 16
			}
			if tile {
				// The AMX tier's tile layout rounds by block where the
				// row-major VNNI kernels of the model read in place round
				// by lane (ggml/amx.go): close, not the same bits.
				var d2, w2 float64
				for i := range want {
					d := float64(got[i]) - float64(want[i])
					d2, w2 = d2+d*d, w2+float64(want[i])*float64(want[i])
				}
				rel := math.Sqrt(d2 / w2)
				t.Logf("%s: tile layout against the rows in place: relative RMS %.2g", file, rel)
				if rel > 1e-2 || argmax(got) != argmax(want) {
					t.Fatalf("%s: tile layout's logits off by relative RMS %.2g (argmax %d, in place %d)", file, rel, argmax(got), argmax(want))
				}
				continue
			}
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("%s: logit %d: interleaved %v (token by token %v), in place %v", file, i, got[i], step[i], want[i])
				}
			}
			huge.Close()
			base.Close()
			if err := release(); err != nil {
				t.Error(err)
			}
		}
		f.Close()
	}
}
