package model

import (
	"math"
	"testing"

	"flowchat/engine/fixtures"
	"flowchat/engine/gguf"
)

// TestHugePagesEmbeddingByPread: FromGGUFHugePages leaves an untied token
// embedding in the file mapping and reads its rows with pread; a tied one
// (also the LM head) is copied with the other weights. Either way the
// logits are those of the model read in place, bit for bit.
func TestHugePagesEmbeddingByPread(t *testing.T) {
	for _, file := range []string{"arch/rand-llama-gqa-Q4_0.gguf", "arch/rand-llama-gqa-Q4_K_M-mix.gguf", "arch/rand-gpt2-F32.gguf", "arch/rand-gemma-F32.gguf", "arch/rand-qwen2-F32.gguf", "models/stories260K/stories260K-F32.gguf"} {
		f, err := gguf.Open(fixtures.Path(t, file))
		if err != nil {
			t.Fatal(err)
		}
		base, err := FromGGUF(f, nil, Options{Threads: 2})
		if err != nil {
			t.Fatal(err)
		}
		huge, release, err := FromGGUFHugePages(f, nil, Options{Threads: 2})
		if err != nil {
			t.Fatal(err)
		}
		_, tied := f.Tensor("output.weight")
		tied = !tied
		switch {
		case tied && huge.embFile != nil:
			t.Errorf("%s: tied embedding read by pread", file)
		case tied && isFileMapping(huge.TokEmbd.Data):
			t.Errorf("%s: tied embedding (the LM head) left in the file mapping", file)
		case !tied && (huge.embFile == nil || !isFileMapping(huge.TokEmbd.Data)):
			t.Errorf("%s: untied embedding copied (pread file %v)", file, huge.embFile != nil)
		case !tied && isFileMapping(huge.Layers[0].FFN.Down.W.Data):
			t.Errorf("%s: ffn_down left in the file mapping", file)
		}
		t.Logf("%s: tied %v, embedding by pread %v", file, tied, huge.embFile != nil)
		prompt := randPrompt(base, 30, 3)
		want := promptLogits(t, base.NewState(64, 32), prompt)
		got := promptLogits(t, huge.NewState(64, 32), prompt)
		step := promptLogits(t, huge.NewState(64, 1), prompt)
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) || math.Float32bits(step[i]) != math.Float32bits(want[i]) {
				t.Fatalf("%s: logit %d: huge pages %v (token by token %v), in place %v", file, i, got[i], step[i], want[i])
			}
		}
		huge.Close()
		base.Close()
		if err := release(); err != nil {
			t.Error(err)
		}
		f.Close()
	}
}
