package hub

import (
	"strconv"
	"strings"
)

// ModelInfo is what a GGUF header says about a model, in the units people
// read: counts of tokens, layers, parameters; bytes.
type ModelInfo struct {
	Architecture      string `json:"architecture"`
	Name              string `json:"name,omitempty"`
	FileType          string `json:"file_type,omitempty"` // "Q4_K_M", … from general.file_type
	ContextLength     int64  `json:"context_length"`      // training context, tokens
	BlockCount        int64  `json:"block_count"`         // layers
	EmbeddingLength   int64  `json:"embedding_length"`    // n_embd
	FeedForwardLength int64  `json:"feed_forward_length,omitempty"`
	HeadCount         int64  `json:"head_count"`
	HeadCountKV       int64  `json:"head_count_kv"` // of layer 0 when it varies
	KeyLength         int64  `json:"key_length"`    // per-head K width
	ValueLength       int64  `json:"value_length"`  // per-head V width
	VocabSize         int64  `json:"vocab_size,omitempty"`
	ParamCount        uint64 `json:"param_count"`  // elements of every tensor (of this file)
	WeightBytes       uint64 `json:"weight_bytes"` // tensor data bytes (of this file)
	SplitCount        int64  `json:"split_count,omitempty"`
}

// Int returns an integer value (first element for an array).
func (h *Header) Int(key string) (int64, bool) {
	switch v := h.KV[key].(type) {
	case int64:
		return v, true
	case []int64:
		if len(v) > 0 {
			return v[0], true
		}
	}
	return 0, false
}

// String returns a string value.
func (h *Header) String(key string) string {
	s, _ := h.KV[key].(string)
	return s
}

// Arch is general.architecture.
func (h *Header) Arch() string { return h.String("general.architecture") }

func (h *Header) archInt(key string) int64 {
	v, _ := h.Int(h.Arch() + "." + key)
	return v
}

// LayerInt returns a per-layer hyperparameter (GGUF stores either one value
// for all layers or an array of n_layer values).
func (h *Header) LayerInt(key string, layer int) int64 {
	if a, ok := h.KV[h.Arch()+"."+key].([]int64); ok {
		if layer < len(a) {
			return a[layer]
		}
		return 0
	}
	return h.archInt(key)
}

// Info summarizes the header.
func (h *Header) Info() ModelInfo {
	m := ModelInfo{
		Architecture:      h.Arch(),
		Name:              h.String("general.name"),
		ContextLength:     h.archInt("context_length"),
		BlockCount:        h.archInt("block_count"),
		EmbeddingLength:   h.archInt("embedding_length"),
		FeedForwardLength: h.archInt("feed_forward_length"),
		HeadCount:         h.archInt("attention.head_count"),
		HeadCountKV:       h.archInt("attention.head_count_kv"),
		KeyLength:         h.archInt("attention.key_length"),
		ValueLength:       h.archInt("attention.value_length"),
		VocabSize:         h.archInt("vocab_size"),
	}
	m.SplitCount, _ = h.Int("split.count")
	if ft, ok := h.Int("general.file_type"); ok {
		m.FileType = FileTypeName(ft)
	} else {
		m.FileType = h.mainType()
	}
	h.fillDefaults(&m)
	for i := range h.Tensors {
		m.ParamCount += h.Tensors[i].Elements()
		m.WeightBytes += h.Tensors[i].Size
	}
	return m
}

// mainType is the type holding most of the tensor bytes, the quant of a
// file without general.file_type (llama2.c conversions such as the
// bundled demo: `models` listed its quant as "-"); "" without tensors.
func (h *Header) mainType() string {
	bytes := map[uint32]uint64{}
	for _, t := range h.Tensors {
		bytes[t.Type] += t.Size
	}
	best, most := "", uint64(0)
	for typ, n := range bytes {
		if name := TypeName(typ); n > most || n == most && name < best {
			best, most = name, n
		}
	}
	return best
}

// fillDefaults applies llama.cpp's defaults for keys a file may omit.
func (h *Header) fillDefaults(m *ModelInfo) {
	if m.HeadCountKV == 0 {
		m.HeadCountKV = m.HeadCount
	}
	if m.KeyLength == 0 && m.HeadCount > 0 {
		m.KeyLength = m.EmbeddingLength / m.HeadCount
	}
	if m.ValueLength == 0 {
		m.ValueLength = m.KeyLength
	}
	if m.VocabSize == 0 {
		m.VocabSize = int64(h.ArrayLen["tokenizer.ggml.tokens"])
	}
}

// LayerOf returns the block index of a tensor named "blk.N.…", or -1.
func LayerOf(name string) int {
	rest, ok := strings.CutPrefix(name, "blk.")
	if !ok {
		return -1
	}
	num, _, ok := strings.Cut(rest, ".")
	n, err := strconv.Atoi(num)
	if !ok || err != nil || n < 0 {
		return -1
	}
	return n
}

// fileTypes are llama_ftype names (general.file_type).
var fileTypes = map[int64]string{
	0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1",
	10: "Q2_K", 11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M",
	16: "Q5_K_S", 17: "Q5_K_M", 18: "Q6_K", 19: "IQ2_XXS", 20: "IQ2_XS", 21: "Q2_K_S",
	22: "IQ3_XS", 23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL", 26: "IQ3_S", 27: "IQ3_M",
	28: "IQ2_S", 29: "IQ2_M", 30: "IQ4_XS", 31: "IQ1_M", 32: "BF16", 33: "Q4_0_4_4",
	34: "Q4_0_4_8", 35: "Q4_0_8_8", 36: "TQ1_0", 37: "TQ2_0", 38: "MXFP4_MOE",
}

// FileTypeName names a general.file_type value.
func FileTypeName(ft int64) string {
	if n, ok := fileTypes[ft]; ok {
		return n
	}
	return "ftype" + strconv.FormatInt(ft, 10)
}
