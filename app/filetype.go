package main

import (
	"fmt"
	"strings"

	"flowchat/engine/ggml"
)

// fileType is a model file type as llama-quantize names it ("Q4_K_M",
// "Q4_0", "F16", …): a base weight type plus the rules that give some
// tensors more bits. Benchmark files written with it match llama-quantize's
// files tensor for tensor in type, so their speed compares with llama.cpp's
// figures on the same file type. The rules are llama.cpp's
// llama_tensor_get_type (output.weight, attn_v and ffn_down under the _M
// mixes, and the fallback for rows that are not a multiple of the K-quant
// super-block); the rest of its table (IQ mixes, Falcon, 70B, MoE) does not
// apply to the llama shapes written here.
type fileType struct {
	name   string
	base   ggml.Type
	mixKM  bool // Q4_K_M / Q5_K_M: attn_v and ffn_down of some layers in Q6_K
	pure   bool // every 2-D tensor of base
	isQuan bool
}

func parseFileType(name string, pure bool) (fileType, error) {
	ft := fileType{name: strings.ToUpper(name), pure: pure}
	base := ft.name
	switch ft.name {
	case "Q4_K_M", "Q5_K_M":
		base, ft.mixKM = ft.name[:4], true
	case "Q4_K_S", "Q5_K_S":
		// llama-quantize's _S mixes bump a few early layers to Q5_K; files
		// written here leave that out (a few percent of the weights).
		base = ft.name[:4]
	}
	t, ok := ggml.ParseType(base)
	if !ok {
		return ft, fmt.Errorf("unknown file type %q", name)
	}
	ft.base = t
	ft.isQuan = t != ggml.F32 && t != ggml.F16 && t != ggml.BF16
	return ft, nil
}

// useMoreBits is llama.cpp's choice of layers that get more bits: the first
// and last eighth, and every third one between.
func useMoreBits(i, n int) bool {
	return i < n/8 || i >= 7*n/8 || (i-n/8)%3 == 2
}

// tensorType is the type the 2-D tensor name (cols = row length) gets in a
// file of this type with nLayers blocks; tied means the file has no
// output.weight, so the token embedding doubles as the output matrix and
// gets its rule.
func (ft fileType) tensorType(name string, cols, nLayers int, tied bool) ggml.Type {
	t := ft.base
	if ft.pure || !ft.isQuan {
		return t
	}
	layer := -1
	if strings.HasPrefix(name, "blk.") {
		fmt.Sscanf(name, "blk.%d.", &layer)
	}
	switch {
	case name == "output.weight" || tied && name == "token_embd.weight":
		if cols%256 != 0 {
			t = ggml.Q8_0
		} else if t != ggml.Q8_0 {
			t = ggml.Q6_K
		}
	case strings.HasSuffix(name, "attn_v.weight"), strings.HasSuffix(name, "ffn_down.weight"):
		if ft.mixKM && layer >= 0 && useMoreBits(layer, nLayers) {
			t = ggml.Q6_K
		}
	}
	return kFallback(t, cols)
}

// kFallback is llama.cpp's replacement for a type whose rows are not a
// multiple of its block: a K-quant falls back to a 32-value type, and what
// still does not fit is stored as F16.
func kFallback(t ggml.Type, cols int) ggml.Type {
	if cols%t.BlockSize() == 0 {
		return t
	}
	switch t {
	case ggml.Q2_K, ggml.Q3_K:
		t = ggml.IQ4_NL
	case ggml.Q4_K:
		t = ggml.Q5_0
	case ggml.Q5_K:
		t = ggml.Q5_1
	case ggml.Q6_K:
		t = ggml.Q8_0
	}
	if cols%t.BlockSize() != 0 {
		return ggml.F16
	}
	return t
}
