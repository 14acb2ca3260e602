package model

import (
	"fmt"
	"math"

	"flowchat/engine/gguf"
	"flowchat/engine/spec"
)

// Config holds a model's hyperparameters.
type Config struct {
	Arch      string
	NVocab    int
	NEmbd     int
	NLayer    int
	NHead     int
	NHeadKV   int
	HeadDim   int // per-head width of Q and K (GGUF attention.key_length)
	HeadDimV  int // per-head width of V
	NFF       int
	NCtxTrain int

	// AttnSoftcap and FinalSoftcap soft-cap attention scores and output
	// logits (c·tanh(x/c)); 0 = off (Gemma 2).
	AttnSoftcap, FinalSoftcap float32
	// SlidingWindow limits attention to the last SlidingWindow positions on
	// the layers SlidingPattern selects (layer % pattern == 0); 0 = off.
	SlidingWindow, SlidingPattern int

	NRot          int     // rotated dims per head
	RopeTheta     float64 // frequency base
	RopeFreqScale float32 // 1 / linear scaling factor
	NormEps       float32

	// Encoder-decoder networks (seq2seq.go).
	RelBuckets     int   // T5 relative position buckets (0: none)
	RelMaxDistance int   // T5 relative position max distance (0: 128)
	DecoderStart   int32 // first decoder token
}

func (c Config) qDim() int  { return c.NHead * c.HeadDim }
func (c Config) kvDim() int { return c.NHeadKV * c.HeadDim }
func (c Config) vDim() int  { return c.NHeadKV * c.HeadDimV }

// configFromGGUF reads the standard {arch}.* keys; the spec supplies defaults.
func configFromGGUF(f *gguf.File, s *spec.Spec, arch string) (Config, error) {
	c := Config{Arch: arch}
	key := func(k string) string { return arch + "." + k }
	geti := func(k string, def int) int {
		if v, ok := f.Int(key(k)); ok {
			return int(v)
		}
		return def
	}
	c.NEmbd = geti("embedding_length", 0)
	c.NLayer = geti("block_count", 0)
	c.NHead = geti("attention.head_count", 0)
	if c.NEmbd <= 0 || c.NLayer <= 0 || c.NHead <= 0 {
		return c, fmt.Errorf("model metadata lacks %s.embedding_length, block_count or attention.head_count", arch)
	}
	// Bound what the metadata may claim before anything is sized from it:
	// every layer needs tensors of its own, and a head is at least one
	// element of the embedding.
	if c.NLayer > len(f.Tensors) || c.NHead > 1<<16 || c.NEmbd > 1<<20 {
		return c, fmt.Errorf("implausible metadata: %d layers (file has %d tensors), %d heads, width %d", c.NLayer, len(f.Tensors), c.NHead, c.NEmbd)
	}
	c.NHeadKV = geti("attention.head_count_kv", c.NHead)
	c.HeadDim = geti("attention.key_length", c.NEmbd/c.NHead)
	c.HeadDimV = geti("attention.value_length", c.HeadDim)
	c.NFF = geti("feed_forward_length", 0)
	c.NCtxTrain = geti("context_length", 2048)
	if c.NHeadKV <= 0 || c.NHead%c.NHeadKV != 0 || c.HeadDim <= 0 || c.HeadDim > 1<<16 || c.HeadDimV <= 0 || c.HeadDimV > 1<<16 {
		return c, fmt.Errorf("bad attention shape: %d heads, %d KV heads, head dim %d", c.NHead, c.NHeadKV, c.HeadDim)
	}
	n := &s.Network
	eps, ok := f.Float(key("attention.layer_norm_rms_epsilon"))
	if !ok {
		eps, ok = f.Float(key("attention.layer_norm_epsilon"))
	}
	if !ok {
		eps = n.NormEps
		if eps == 0 {
			eps = 1e-5
		}
	}
	c.NormEps = float32(eps)
	c.RopeTheta = n.RopeTheta
	if v, ok := f.Float(key("rope.freq_base")); ok {
		c.RopeTheta = v
	}
	if c.RopeTheta == 0 {
		c.RopeTheta = 10000
	}
	def := c.HeadDim
	if n.RopePartialFactor > 0 {
		def = int(math.Round(float64(c.HeadDim) * n.RopePartialFactor))
	}
	c.NRot = geti("rope.dimension_count", def)
	if c.NRot > c.HeadDim || c.NRot%2 != 0 {
		return c, fmt.Errorf("rope dimension %d does not fit head dim %d", c.NRot, c.HeadDim)
	}
	c.RelBuckets = geti("attention.relative_buckets_count", 0)
	c.DecoderStart = int32(geti("decoder_start_token_id", 0))
	c.AttnSoftcap = float32(floatOr(f, key("attn_logit_softcapping"), n.AttnLogitSoftcap))
	c.FinalSoftcap = float32(floatOr(f, key("final_logit_softcapping"), n.FinalLogitSoftcap))
	if n.SlidingWindowPattern > 0 {
		c.SlidingPattern = n.SlidingWindowPattern
		c.SlidingWindow = geti("attention.sliding_window", n.SlidingWindow)
	}
	c.RopeFreqScale = 1
	if typ, _ := f.String(key("rope.scaling.type")); typ == "linear" {
		if fac, ok := f.Float(key("rope.scaling.factor")); ok && fac > 0 {
			c.RopeFreqScale = float32(1 / fac)
		}
	}
	return c, nil
}

// floatOr reads a float key, or returns def.
func floatOr(f *gguf.File, key string, def float64) float64 {
	if v, ok := f.Float(key); ok {
		return v
	}
	return def
}
