package hf

import (
	"encoding/json"
	"fmt"
	"math"
	"os"

	"flowchat/engine/model"
	"flowchat/engine/spec"
)

// maxJSONSize bounds the small JSON files of a model folder
// (tokenizer.json of large vocabularies is a few tens of MB).
const maxJSONSize = 256 << 20

// readJSON decodes a JSON file with a size limit.
func readJSON(path string, v any) error {
	st, err := os.Stat(path)
	if err != nil {
		return err
	}
	if st.Size() > maxJSONSize {
		return fmt.Errorf("%s: %d bytes is over the %d-byte limit", path, st.Size(), maxJSONSize)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Config is a config.json: keys differ between families (hidden_size,
// n_embd, d_model…), so values are looked up by lists of synonyms rather
// than by one struct per family.
type Config map[string]any

// Num returns the first of keys that holds a number.
func (c Config) Num(keys ...string) (float64, bool) {
	for _, k := range keys {
		if v, ok := c[k].(float64); ok {
			return v, true
		}
	}
	return 0, false
}

// Int returns the first of keys that holds an integer, else def.
func (c Config) Int(def int, keys ...string) int {
	if v, ok := c.Num(keys...); ok && v == math.Trunc(v) && math.Abs(v) < 1<<40 {
		return int(v)
	}
	return def
}

// Bool returns key's boolean value, else def.
func (c Config) Bool(key string, def bool) bool {
	if v, ok := c[key].(bool); ok {
		return v
	}
	return def
}

// Str returns key's string value.
func (c Config) Str(key string) string {
	s, _ := c[key].(string)
	return s
}

// IDs returns key's token id or ids (eos_token_id may be either).
func (c Config) IDs(key string) []int32 {
	switch v := c[key].(type) {
	case float64:
		return []int32{int32(v)}
	case []any:
		var out []int32
		for _, x := range v {
			if f, ok := x.(float64); ok {
				out = append(out, int32(f))
			}
		}
		return out
	}
	return nil
}

// Synonyms of the hyperparameters across families.
var (
	keysEmbd    = []string{"hidden_size", "n_embd", "d_model", "dim", "n_embed"}
	keysLayers  = []string{"num_hidden_layers", "n_layer", "num_layers", "encoder_layers", "n_layers"}
	keysHeads   = []string{"num_attention_heads", "n_head", "num_heads", "encoder_attention_heads", "n_heads"}
	keysKVHeads = []string{"num_key_value_heads", "num_kv_heads", "n_head_kv", "multi_query_group_num"}
	keysHeadDim = []string{"head_dim", "d_kv", "attention_head_size"}
	keysFF      = []string{"intermediate_size", "n_inner", "ffn_dim", "d_ff", "encoder_ffn_dim", "ffn_hidden_size"}
	keysCtx     = []string{"max_position_embeddings", "n_positions", "n_ctx", "seq_length", "max_sequence_length"}
	keysEps     = []string{"rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon", "norm_eps", "norm_epsilon"}
	keysTheta   = []string{"rope_theta", "rotary_emb_base"}
	keysPartial = []string{"partial_rotary_factor", "rotary_pct"}
)

// ModelConfig derives the interpreter's hyperparameters from config.json;
// the spec supplies defaults the file leaves out.
func (c Config) ModelConfig(s *spec.Spec, arch string) (model.Config, error) {
	m := model.Config{Arch: arch}
	m.NEmbd = c.Int(0, keysEmbd...)
	m.NLayer = c.Int(0, keysLayers...)
	m.NHead = c.Int(0, keysHeads...)
	if m.NEmbd <= 0 || m.NLayer <= 0 || m.NHead <= 0 {
		return m, fmt.Errorf("config.json lacks the hidden size, layer count or head count")
	}
	m.NHeadKV = c.Int(m.NHead, keysKVHeads...)
	if c.Bool("multi_query", false) && !c.Bool("new_decoder_architecture", false) {
		m.NHeadKV = 1 // Falcon-7B style multi-query attention
	}
	m.HeadDim = c.Int(m.NEmbd/m.NHead, keysHeadDim...)
	m.HeadDimV = m.HeadDim
	m.NFF = c.Int(4*m.NEmbd, keysFF...)
	m.NCtxTrain = c.Int(2048, keysCtx...)
	if m.NHeadKV <= 0 || m.NHead%m.NHeadKV != 0 || m.HeadDim <= 0 || m.HeadDim > 1<<16 {
		return m, fmt.Errorf("bad attention shape: %d heads, %d KV heads, head dim %d", m.NHead, m.NHeadKV, m.HeadDim)
	}
	n := &s.Network
	eps, ok := c.Num(keysEps...)
	if !ok {
		eps = n.NormEps
	}
	if eps == 0 {
		eps = 1e-5
	}
	m.NormEps = float32(eps)
	m.RelBuckets = c.Int(0, "relative_attention_num_buckets")
	m.RelMaxDistance = c.Int(0, "relative_attention_max_distance")
	// Marian and T5 start decoding from the pad token when no start is named.
	m.DecoderStart = int32(c.Int(c.Int(0, "pad_token_id"), "decoder_start_token_id"))
	if n.PositionEmbedding != "rope" {
		m.NRot, m.RopeTheta, m.RopeFreqScale = m.HeadDim, 10000, 1
		return m, nil
	}
	return m, c.rope(&m, n)
}

// seqActivations maps the FFN activations config.json names for
// encoder-decoder families to spec activations: T5's feed_forward_proj
// ("gated-" = act(wi_0 x) · wi_1 x; HF's gated-gelu is the tanh GELU) and
// BART-style activation_function (HF "gelu" is the erf GELU, "swish" SiLU).
var seqActivations = map[string]string{
	"relu": "relu", "gelu": "gelu_erf", "gelu_new": "gelu_exact", "swish": "silu", "silu": "silu",
	"gated-gelu": "geglu_exact", "gated-relu": "reglu", "gated-silu": "swiglu", "gated-swish": "swiglu",
}

// SeqSpec parameterizes a builtin encoder-decoder spec by config.json: the
// FFN activation (feed_forward_proj, activation_function) and whether
// embeddings are scaled by sqrt(d_model) (scale_embedding). Other specs
// are returned as they are; s itself is never modified.
func (c Config) SeqSpec(s *spec.Spec) (*spec.Spec, error) {
	if s.Network.Type != "transformer.encoder_decoder" {
		return s, nil
	}
	cp := *s
	for _, key := range []string{"feed_forward_proj", "activation_function"} {
		if v := c.Str(key); v != "" {
			act, ok := seqActivations[v]
			if !ok {
				return nil, fmt.Errorf("config.json %s %q is not supported", key, v)
			}
			cp.Network.Activation = act
			break
		}
	}
	if v, ok := c["scale_embedding"].(bool); ok {
		cp.Network.EmbeddingScale = nil
		if v {
			cp.Network.EmbeddingScale = json.RawMessage(`"sqrt_dim"`)
		}
	}
	return &cp, nil
}

// rope fills the rotary parameters: base, rotated dims, linear scaling.
func (c Config) rope(m *model.Config, n *spec.Network) error {
	m.RopeTheta = n.RopeTheta
	if v, ok := c.Num(keysTheta...); ok {
		m.RopeTheta = v
	}
	if m.RopeTheta == 0 {
		m.RopeTheta = 10000
	}
	m.NRot = m.HeadDim
	if n.RopeDim > 0 {
		m.NRot = n.RopeDim
	}
	factor := n.RopePartialFactor
	if v, ok := c.Num(keysPartial...); ok {
		factor = v
	}
	if factor > 0 {
		m.NRot = int(math.Round(float64(m.HeadDim) * factor))
	}
	m.NRot = c.Int(m.NRot, "rotary_dim")
	if m.NRot > m.HeadDim || m.NRot%2 != 0 || m.NRot <= 0 {
		return fmt.Errorf("rotary dimension %d does not fit head dim %d", m.NRot, m.HeadDim)
	}
	m.RopeFreqScale = 1
	sc, _ := c["rope_scaling"].(map[string]any)
	if sc == nil {
		return nil
	}
	typ, _ := sc["rope_type"].(string)
	if typ == "" {
		typ, _ = sc["type"].(string)
	}
	fac, _ := sc["factor"].(float64)
	switch {
	case typ == "default" || typ == "":
	case typ == "linear" && fac > 0:
		m.RopeFreqScale = float32(1 / fac)
	default:
		return fmt.Errorf("rope_scaling type %q is not supported", typ)
	}
	return nil
}
