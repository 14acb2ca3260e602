package tokenizer

import (
	"math/rand/v2"
	"testing"
)

// TestCustomSplittersMatchRegex checks the hand-coded GPT-2 and LLaMA-3
// splitters against the general path (collapsed text through the
// backtracking engine) on random text: llama.cpp keeps the two in step, so
// any difference is a bug in one of them.
func TestCustomSplittersMatchRegex(t *testing.T) {
	alphabet := []rune("aZé日 \t\n\r\u00a0\u3000'sStTrReEvVmMlLdD0123٣.,!?-_\"#$+<😀\u0301\u200d\U000E0001\uFFFD")
	rng := rand.New(rand.NewPCG(7, 8))
	for _, c := range []struct {
		expr   string
		custom customStep
	}{{reGPT2, splitGPT2}, {reLlama3, splitLlama3}} {
		general, err := newRegexStep(c.expr)
		if err != nil {
			t.Fatal(err)
		}
		for trial := 0; trial < 3000; trial++ {
			cpts := make([]rune, rng.IntN(24))
			for i := range cpts {
				cpts[i] = alphabet[rng.IntN(len(alphabet))]
			}
			in := &splitText{cpts: cpts}
			offsets := []int{len(cpts)}
			if len(cpts) > 4 { // two segments, as after an earlier step
				offsets = []int{3, len(cpts) - 3}
			}
			want := general.split(in, offsets)
			if got := c.custom.split(in, offsets); !equalInts(got, want) {
				t.Fatalf("%q on %q: custom %v, regex %v", c.expr, string(cpts), got, want)
			}
		}
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
