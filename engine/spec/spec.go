// Package spec reads model specification files: the Inferflow-style JSON
// description of a model family as a composition of atomic blocks (norm,
// activation, position embedding, attention layout, FFN, tensor names).
//
// Adding a model family means adding a spec file under specs/; the spec
// interpreter (engine/model) has no code per family. Lines whose first
// non-blank character is '#' are comments.
package spec

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"

	"flowchat/specs"
)

// ErrUnknownArchitecture is returned when no spec handles an architecture.
var ErrUnknownArchitecture = errors.New("no model spec for this architecture")

// Spec is one model family.
type Spec struct {
	// Family names the spec (the file name without .json by default).
	Family string `json:"model_family"`
	// Architectures lists the GGUF general.architecture values (and HF
	// model_type values) this spec handles.
	Architectures []string `json:"architectures"`
	// ModelFileFormat is the file format the tensor names refer to:
	// "gguf", "safetensors", "pickle", "llama2.c".
	ModelFileFormat string `json:"model_file_format"`
	// TokenizationAlgorithm: "spm" (SentencePiece BPE), "bpe" (byte-level),
	// "wordpiece", "unigram"; GGUF files carry their own and override it.
	TokenizationAlgorithm string  `json:"tokenization_algorithm"`
	Network               Network `json:"network_structure"`
	Source                string  `json:"-"` // where it was read from
}

// Network is the network_structure object.
type Network struct {
	// Type: "transformer.decoder_only", "transformer.encoder_only",
	// "transformer.encoder_decoder".
	Type string `json:"type"`
	// Normalization: "rms" or "std" (LayerNorm with mean subtraction).
	Normalization string `json:"normalization_function"`
	// NormBaseOne multiplies by (1 + w) instead of w (HF Gemma weights).
	NormBaseOne bool `json:"norm_base_one"`
	// Activation: "silu", "gelu" (tanh approximation through GGML's fp16
	// table, as llama.cpp computes it), "gelu_exact" (tanh approximation in
	// float32), "gelu_erf", "relu"; GLU variants "swiglu", "geglu", "reglu"
	// (act(gate) * up), with "geglu_exact" and "geglu_erf" the unrounded
	// GELUs.
	Activation string `json:"activation_function"`
	// PositionEmbedding: "rope", "alibi", "sinusoidal", "learned", "empty".
	PositionEmbedding string `json:"position_embedding"`
	// SinusoidalStyle is the convention of "sinusoidal" positions:
	// "fairseq" (the default; m2m100: position offset 2, frequencies
	// 10000^(-i/(d/2-1))) or "marian" (no offset, angle pos/10000^(2i/d));
	// both put sin in the first half of the row and cos in the second.
	SinusoidalStyle string `json:"sinusoidal_style"`
	// QKColumnOrder is the RoPE rotation layout of the Q/K weights:
	// "interleaved" (pairs (2i, 2i+1): GGUF llama, GGML "normal" mode) or
	// "half" (pairs (i, i+d/2): HF rotate-half, GGML NEOX mode).
	QKColumnOrder string `json:"qk_column_order"`
	// QKVFormat: "separate" (q, k, v tensors) or "fused" ([Q;K;V] rows in
	// one tensor). Either is accepted at load; this is the family's usual one.
	QKVFormat string `json:"qkv_format"`
	// TensorNamePrefix is stripped from file tensor names before mapping.
	TensorNamePrefix string `json:"tensor_name_prefix"`
	// TensorNameMapping maps file tensor names (after the prefix; "{i}" is
	// the layer index) to the interpreter's canonical names, which are
	// GGUF's (blk.{i}.attn_q.weight …). Names not mapped are used as is.
	TensorNameMapping map[string]string `json:"tensor_name_mapping"`
	// TensorTransforms names layout conversions a format reader applies to
	// file tensors (keys as in tensor_name_mapping, before mapping):
	// "transpose" (stored [in, out], e.g. GPT-2's Conv1D), "qkv_heads"
	// (fused QKV rows stored per head as [head][q,k,v][dim], e.g. BLOOM,
	// reordered to [Q;K;V]), "drop_rows:N" (skip the first N rows, e.g.
	// OPT's position table offset).
	TensorTransforms map[string]string `json:"tensor_transforms"`
	// RopeTheta, RopeDim, RopePartialFactor are defaults used when the
	// model file does not say (GGUF rope.freq_base, rope.dimension_count).
	RopeTheta         float64 `json:"rope_theta"`
	RopeDim           int     `json:"rope_dim"`
	RopePartialFactor float64 `json:"rope_partial_factor"`
	// ParallelAttention: x + attn(norm(x)) + ffn(norm'(x)) (Falcon, GPT-J).
	ParallelAttention bool `json:"parallel_attention"`
	// EmbeddingScale multiplies token embeddings: a number, or "sqrt_dim".
	EmbeddingScale json.RawMessage `json:"embedding_scale"`
	// AlibiMaxBias is ALiBi's maximum bias (8 for BLOOM).
	AlibiMaxBias float64 `json:"alibi_max_bias"`
	// AttentionScale overrides 1/sqrt(head_dim) (T5 uses 1).
	AttentionScale float64 `json:"attention_scale"`
	// PostNorm applies norms after the residual adds (BERT).
	PostNorm bool `json:"post_norm"`
	// Pooling for encoders: "mean", "cls", "none".
	Pooling string `json:"pooling"`
	// AttnLogitSoftcap and FinalLogitSoftcap soft-cap attention scores and
	// output logits as c·tanh(x/c) (Gemma 2); the file's values win.
	AttnLogitSoftcap  float64 `json:"attn_logit_softcapping"`
	FinalLogitSoftcap float64 `json:"final_logit_softcapping"`
	// SlidingWindowPattern > 0 makes every layer l with l % pattern == 0
	// attend only to the last SlidingWindow positions (the file's
	// {arch}.attention.sliding_window wins).
	SlidingWindowPattern int `json:"sliding_window_pattern"`
	SlidingWindow        int `json:"sliding_window"`
	// NormEps is the default norm epsilon when the file has none.
	NormEps float64 `json:"norm_eps"`
}

// Canonical maps a file tensor name to its canonical name.
func (n *Network) Canonical(name string) string {
	name = strings.TrimPrefix(name, n.TensorNamePrefix)
	if len(n.TensorNameMapping) == 0 {
		return name
	}
	if c, ok := n.TensorNameMapping[name]; ok {
		return c
	}
	layer, tmpl := layerTemplate(name)
	if layer >= 0 {
		if c, ok := n.TensorNameMapping[tmpl]; ok {
			return strings.ReplaceAll(c, "{i}", fmt.Sprint(layer))
		}
	}
	return name
}

// layerTemplate replaces the first dot-delimited integer in name with {i}.
func layerTemplate(name string) (int, string) {
	parts := strings.Split(name, ".")
	for i, p := range parts {
		var n int
		if _, err := fmt.Sscanf(p, "%d", &n); err == nil && fmt.Sprint(n) == p {
			parts[i] = "{i}"
			return n, strings.Join(parts, ".")
		}
	}
	return -1, name
}

// EmbeddingScaleFor returns the embedding multiplier for width nEmbd.
func (n *Network) EmbeddingScaleFor(nEmbd int) (float32, error) {
	if len(n.EmbeddingScale) == 0 {
		return 1, nil
	}
	var s string
	if json.Unmarshal(n.EmbeddingScale, &s) == nil {
		if s == "sqrt_dim" {
			return float32(sqrt(float64(nEmbd))), nil
		}
		return 0, fmt.Errorf("spec: embedding_scale %q: want a number or \"sqrt_dim\"", s)
	}
	var f float64
	if err := json.Unmarshal(n.EmbeddingScale, &f); err != nil {
		return 0, fmt.Errorf("spec: embedding_scale: %w", err)
	}
	return float32(f), nil
}

func sqrt(x float64) float64 {
	z := x
	for i := 0; i < 60 && z > 0; i++ {
		z = (z + x/z) / 2
	}
	return z
}

// Parse reads a spec, tolerating '#' comment lines.
func Parse(data []byte, source string) (*Spec, error) {
	var clean bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			clean.WriteByte('\n') // keep line numbers for error messages
			continue
		}
		clean.WriteString(line)
		clean.WriteByte('\n')
	}
	dec := json.NewDecoder(&clean)
	dec.DisallowUnknownFields()
	s := &Spec{Source: source}
	if err := dec.Decode(s); err != nil {
		return nil, fmt.Errorf("spec %s: %w", source, err)
	}
	if s.Family == "" {
		s.Family = strings.TrimSuffix(path.Base(source), ".json")
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("spec %s: %w", source, err)
	}
	return s, nil
}

// ParseFile reads a user's spec file.
func ParseFile(p string) (*Spec, error) {
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("spec: %w", err)
	}
	return Parse(data, p)
}

var allowed = map[string][]string{
	"type":                   {"transformer.decoder_only", "transformer.encoder_only", "transformer.encoder_decoder"},
	"normalization_function": {"rms", "std"},
	"activation_function":    {"silu", "gelu", "gelu_exact", "gelu_erf", "relu", "swiglu", "geglu", "geglu_exact", "geglu_erf", "reglu"},
	"position_embedding":     {"rope", "alibi", "sinusoidal", "learned", "empty"},
	"qk_column_order":        {"", "interleaved", "half"},
	"qkv_format":             {"", "separate", "fused"},
	"pooling":                {"", "none", "mean", "cls"},
	"sinusoidal_style":       {"", "fairseq", "marian"},
}

// Validate checks enumerated values.
func (s *Spec) Validate() error {
	n := &s.Network
	vals := map[string]string{
		"type": n.Type, "normalization_function": n.Normalization, "activation_function": n.Activation,
		"position_embedding": n.PositionEmbedding, "qk_column_order": n.QKColumnOrder,
		"qkv_format": n.QKVFormat, "pooling": n.Pooling, "sinusoidal_style": n.SinusoidalStyle,
	}
	keys := make([]string, 0, len(vals))
	for k := range vals {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		ok := false
		for _, a := range allowed[k] {
			ok = ok || a == vals[k]
		}
		if !ok {
			return fmt.Errorf("network_structure.%s = %q; allowed: %s", k, vals[k], strings.Join(allowed[k], ", "))
		}
	}
	if n.PositionEmbedding == "rope" && n.QKColumnOrder == "" {
		return errors.New("network_structure.qk_column_order is required with rope")
	}
	if _, err := n.EmbeddingScaleFor(1); err != nil {
		return err
	}
	for name, tr := range n.TensorTransforms {
		if _, _, err := ParseTransform(tr); err != nil {
			return fmt.Errorf("network_structure.tensor_transforms[%q]: %w", name, err)
		}
	}
	return nil
}

// ParseTransform splits a tensor_transforms value into its kind and
// argument ("drop_rows:2" → "drop_rows", 2).
func ParseTransform(v string) (kind string, arg int, err error) {
	kind, num, hasArg := strings.Cut(v, ":")
	switch {
	case (kind == "transpose" || kind == "qkv_heads") && !hasArg:
		return kind, 0, nil
	case kind == "drop_rows" && hasArg:
		if _, err := fmt.Sscanf(num, "%d", &arg); err == nil && arg >= 0 {
			return kind, arg, nil
		}
	}
	return "", 0, fmt.Errorf("%q: want transpose, qkv_heads or drop_rows:N", v)
}

// Transform returns the transform for a file tensor name ("" if none).
func (n *Network) Transform(name string) string {
	name = strings.TrimPrefix(name, n.TensorNamePrefix)
	if t, ok := n.TensorTransforms[name]; ok {
		return t
	}
	if _, tmpl := layerTemplate(name); tmpl != name {
		return n.TensorTransforms[tmpl]
	}
	return ""
}

// Builtin returns the specs embedded in the binary.
func Builtin() ([]*Spec, error) {
	names, err := fs.Glob(specs.FS, "*.json")
	if err != nil {
		return nil, err
	}
	var out []*Spec
	for _, name := range names {
		data, err := fs.ReadFile(specs.FS, name)
		if err != nil {
			return nil, err
		}
		s, err := Parse(data, "specs/"+name)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// ForArchitecture finds the builtin spec handling arch for file format
// format ("" matches any).
func ForArchitecture(arch, format string) (*Spec, error) {
	all, err := Builtin()
	if err != nil {
		return nil, err
	}
	var known []string
	for _, s := range all {
		for _, a := range s.Architectures {
			if a == arch && (format == "" || s.ModelFileFormat == format) {
				return s, nil
			}
		}
		known = append(known, s.Architectures...)
	}
	sort.Strings(known)
	return nil, fmt.Errorf("%w %q (known: %s); write a spec file for it and pass --spec FILE", ErrUnknownArchitecture, arch, strings.Join(known, ", "))
}
