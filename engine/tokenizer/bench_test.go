package tokenizer

import (
	"strings"
	"testing"
)

// BenchmarkEncode tokenizes a ~1 KB paragraph with an SPM and a byte-level
// BPE vocabulary (bytes/s is input text).
func BenchmarkEncode(b *testing.B) {
	text := strings.Repeat("Once upon a time, there was a little girl named Lily. She loved to play outside! ", 12)
	for _, c := range []struct{ name, rel string }{
		{"spm-llama", "vocab/ggml-vocab-llama-spm.gguf"},
		{"bpe-gpt2", "vocab/ggml-vocab-gpt-2.gguf"},
		{"bpe-qwen2-regex", "arch/rand-qwen2-F32.gguf"},
	} {
		b.Run(c.name, func(b *testing.B) {
			tk := loadGGUF(b, c.rel)
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				tk.Encode(text, true, true)
			}
		})
	}
}
