package hub

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseFileName(t *testing.T) {
	cases := []struct {
		name        string
		base, quant string
		part, parts int
	}{
		{"Llama-3.2-1B-Instruct-Q4_K_M.gguf", "Llama-3.2-1B-Instruct-Q4_K_M", "Q4_K_M", 0, 0},
		{"qwen2.5-0.5b-instruct-q8_0.gguf", "qwen2.5-0.5b-instruct-q8_0", "Q8_0", 0, 0},
		{"Phi-3.5-mini-instruct-IQ4_XS.gguf", "Phi-3.5-mini-instruct-IQ4_XS", "IQ4_XS", 0, 0},
		{"tinyllama-1.1b-chat-v1.0.Q5_K_S.gguf", "tinyllama-1.1b-chat-v1.0.Q5_K_S", "Q5_K_S", 0, 0},
		{"gemma-2-2b-it-f16.gguf", "gemma-2-2b-it-f16", "F16", 0, 0},
		{"SmolLM2-1.7B-Instruct-BF16.gguf", "SmolLM2-1.7B-Instruct-BF16", "BF16", 0, 0},
		{"Meta-Llama-3.1-70B-Instruct-IQ2_XXS.gguf", "Meta-Llama-3.1-70B-Instruct-IQ2_XXS", "IQ2_XXS", 0, 0},
		{"Qwen2.5-72B-Instruct-Q4_K_M-00001-of-00003.gguf", "Qwen2.5-72B-Instruct-Q4_K_M", "Q4_K_M", 1, 3},
		{"Q8_0/Model-Q8_0-00002-of-00002.gguf", "Model-Q8_0", "Q8_0", 2, 2},
		{"Llama-3.2-3B-Instruct-Q4_K_L.gguf", "Llama-3.2-3B-Instruct-Q4_K_L", "Q4_K_L", 0, 0},
		{"Qwen3-8B-UD-Q4_K_XL.gguf", "Qwen3-8B-UD-Q4_K_XL", "UD-Q4_K_XL", 0, 0},
		{"Llama-3.2-1B-Instruct-Q4_0_4_4.gguf", "Llama-3.2-1B-Instruct-Q4_0_4_4", "Q4_0_4_4", 0, 0},
		{"ggml-model-fp16.gguf", "ggml-model-fp16", "F16", 0, 0},
		{"rand-llama-gqa-Q4_K.gguf", "rand-llama-gqa-Q4_K", "Q4_K", 0, 0},
		{"mmproj-model-f16.gguf", "mmproj-model-f16", "F16", 0, 0},
		{"model-00001-of-00002.safetensors", "model", "", 1, 2},
		{"Qwen2-7B-Instruct.gguf", "Qwen2-7B-Instruct", "", 0, 0},     // "Q" of Qwen is not a quant
		{"model-Q4_K_M-Q8_0.gguf", "model-Q4_K_M-Q8_0", "Q8_0", 0, 0}, // the last one wins
		{"gpt-oss-20b-MXFP4.gguf", "gpt-oss-20b-MXFP4", "MXFP4", 0, 0},
		{"x-00003-of-00002.gguf", "x-00003-of-00002", "", 0, 0}, // impossible split index
	}
	for _, c := range cases {
		got := ParseFileName(c.name)
		if got.Base != c.base || got.Quant != c.quant || got.Part != c.part || got.Parts != c.parts {
			t.Errorf("%s: %+v, want base %q quant %q part %d/%d", c.name, got, c.base, c.quant, c.part, c.parts)
		}
	}
}

func lfsFile(path string, size int64) RepoFile {
	return RepoFile{Type: "file", Path: path, Size: size, LFS: &LFSInfo{OID: strings.Repeat("a", 64), Size: size}}
}

func TestGroupFiles(t *testing.T) {
	files := []RepoFile{
		{Type: "file", Path: "README.md", Size: 10},
		lfsFile("M-Q8_0.gguf", 800),
		lfsFile("M-Q4_K_M.gguf", 400),
		lfsFile("big/M-F16-00002-of-00002.gguf", 900),
		lfsFile("big/M-F16-00001-of-00002.gguf", 1000),
		lfsFile("M-Q2_K-00001-of-00002.gguf", 100), // shard 2 missing
		lfsFile("mmproj-M-f16.gguf", 50),
		lfsFile("model-00002-of-00002.safetensors", 300),
		lfsFile("model-00001-of-00002.safetensors", 300),
		{Type: "file", Path: "model.safetensors.index.json", Size: 5},
		{Type: "file", Path: "config.json", Size: 1},
	}
	ms := GroupFiles(files)
	var got []string
	for _, m := range ms {
		got = append(got, m.Kind+":"+m.Quant+":"+m.Files[0].Path)
	}
	want := []string{"gguf:Q2_K:M-Q2_K-00001-of-00002.gguf", "gguf:Q4_K_M:M-Q4_K_M.gguf", "gguf:Q8_0:M-Q8_0.gguf",
		"gguf:F16:big/M-F16-00001-of-00002.gguf", "mmproj:F16:mmproj-M-f16.gguf", "safetensors::model-00001-of-00002.safetensors"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("groups\n got %v\nwant %v", got, want)
	}
	if ms[0].Complete || !ms[3].Complete || ms[3].Size != 1900 || len(ms[5].Files) != 4 || ms[5].Size != 606 {
		t.Errorf("completeness/sizes wrong: %+v", ms)
	}
	for sel, want := range map[string]string{"": "M-Q4_K_M.gguf", "q8_0": "M-Q8_0.gguf", "f16": "big/M-F16-00001-of-00002.gguf",
		"M-F16-00002-of-00002.gguf": "big/M-F16-00001-of-00002.gguf", "safetensors": "model-00001-of-00002.safetensors"} {
		m, ok := FindModel(ms, sel)
		if !ok || m.First().Path != want {
			t.Errorf("FindModel(%q) = %v %v, want %s", sel, m.Name, ok, want)
		}
	}
	if _, ok := FindModel(ms, "IQ1_S"); ok {
		t.Error("FindModel found a quant the repo lacks")
	}
}

// FuzzParseFileName: no panics; the quant, if any, is a substring of the
// name (modulo case and the FP16 spelling); split indexes are consistent.
func FuzzParseFileName(f *testing.F) {
	for _, s := range []string{"a-Q4_K_M.gguf", "x-00001-of-00002.gguf", "IQ2_XXS", "fp16.f32.BF16", "Fp16", "x-fP32.gguf", "UD-Q8_K_XL-00009-of-00010.gguf"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fn := ParseFileName(s)
		up := strings.ReplaceAll(strings.ToUpper(s), "FP", "F")
		if fn.Quant != "" && !strings.Contains(up, fn.Quant) && utf8.ValidString(s) {
			t.Errorf("quant %q not in %q", fn.Quant, s)
		}
		if fn.Parts != 0 && (fn.Part < 1 || fn.Part > fn.Parts) {
			t.Errorf("part %d of %d", fn.Part, fn.Parts)
		}
	})
}
