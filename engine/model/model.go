// Package model is the spec interpreter: it builds one generic transformer
// out of atomic blocks (embeddings, norms, attention, FFN, output head) as a
// spec file describes, binds the blocks' weights by canonical tensor name,
// and runs the forward pass with a KV cache.
//
// There is no code per model family here; a family is a file in specs/.
package model

import (
	"errors"
	"fmt"
	"os"

	"flowchat/engine/ggml"
	"flowchat/engine/parallel"
	"flowchat/engine/spec"
)

// ErrContextFull is returned when a sequence would exceed its context.
var ErrContextFull = errors.New("context window is full")

// Model is a loaded network. It is read-only after Build and may be shared by
// several States (sequences) that are not run concurrently.
type Model struct {
	Config
	Spec *spec.Spec

	TokEmbd *Weight
	// embFile reads token embedding rows with pread where the embedding
	// stayed in the file mapping (FromGGUFHugePages): a read through the
	// mapping would make the rows around it resident (fault-around).
	embFile *os.File
	embOff  int64 // the embedding's offset in embFile
	// embData and embType are the mapped embedding embFile reads for: a
	// load that re-quantizes (LoadOptions.Quant) replaces TokEmbd's data
	// and type, and then its rows come from memory, not the file.
	embData   *byte
	embType   ggml.Type
	PosEmbd   *Weight // learned positions (GPT-2, BERT)
	TypeEmbd  *Weight // token types (BERT); row 0 is used
	EmbdNorm  *Norm   // norm right after the embedding (BLOOM, BERT)
	Layers    []Layer
	OutNorm   *Norm
	Output    Linear // LM head; token_embd when the file ties them
	embdScale float32

	act      func(float32) float32
	silu     bool // act is SiLU: gated rows go through ggml.SiLUMul
	glu      bool
	ropeHalf bool
	useRope  bool
	// sinusoidal adds fixed sinusoidal position embeddings to the input
	// (the fairseq convention of sinusoid, as m2m100 uses).
	sinusoidal bool
	alibi      []float32 // per-head slopes, nil unless ALiBi
	attnScale  float32
	parallel   bool
	causal     bool
	seq        *seq2seq // encoder-decoder networks (seq2seq.go)

	pool       *parallel.Pool
	sharedPool bool     // pool belongs to another model (ShareWorkers)
	off        *offload // blocks placed on devices (offload.go); nil: all on the host
}

// Options are load-time choices.
type Options struct {
	Threads int // goroutines for the forward pass (≥ 1)
	// Interleave (FromGGUFHugePages): the huge-page copy writes the
	// matrices InterleaveRows4 would rewrite in its layout as it reads
	// them, one pass instead of two (the caller promises to run the model
	// on the host, as InterleaveRows4 requires; it then finds them done).
	Interleave bool
}

// Build binds the weights of src into the network that s describes.
func Build(s *spec.Spec, c Config, src Source, opt Options) (*Model, error) {
	n := &s.Network
	if n.Type == "transformer.encoder_decoder" {
		return buildSeq2Seq(s, c, src, opt)
	}
	m := &Model{Config: c, Spec: s, causal: n.Type == "transformer.decoder_only"}
	if err := m.bind(src); err != nil {
		return nil, fmt.Errorf("model %s (spec %s): %w", c.Arch, s.Family, err)
	}
	m.configure()
	if opt.Threads < 1 {
		opt.Threads = 1
	}
	m.pool = parallel.New(opt.Threads)
	return m, nil
}

// slidingLayer reports whether layer l attends through a sliding window.
func (m *Model) slidingLayer(l int) bool {
	return m.SlidingWindow > 0 && m.SlidingPattern > 0 && l%m.SlidingPattern == 0
}

// Close stops the model's workers.
func (m *Model) Close() {
	if !m.sharedPool {
		m.pool.Close()
	}
}

// EarlyExit returns a network that runs the first n layers of m and then
// m's output norm and head (LayerSkip-style early exit: a draft for
// self-speculation with no second copy of the weights). It shares m's
// weights and workers; it must not run while m does (the caller
// serializes them), and must not be used after m is closed.
func (m *Model) EarlyExit(n int) (*Model, error) {
	if n < 1 || n >= m.NLayer {
		return nil, fmt.Errorf("model: early exit after %d layers of %d (want 1…%d)", n, m.NLayer, m.NLayer-1)
	}
	if m.seq != nil || !m.causal {
		return nil, errors.New("model: early exit needs a decoder-only network")
	}
	if m.off != nil {
		return nil, errors.New("model: early exit of a network placed on devices is not supported")
	}
	e := *m
	e.Layers = m.Layers[:n:n]
	e.NLayer = n
	e.sharedPool = true
	return &e, nil
}

// ShareWorkers makes m run on from's worker pool and stops its own: a
// draft model whose passes alternate with its target's would otherwise
// have two pools spinning for the same cores. The two must never run at
// once (the caller serializes them); from must outlive m's use.
func (m *Model) ShareWorkers(from *Model) {
	if m.pool == from.pool {
		return
	}
	if !m.sharedPool {
		m.pool.Close()
	}
	m.pool, m.sharedPool = from.pool, true
}

// Threads is the number of goroutines used by the forward pass.
func (m *Model) Threads() int { return m.pool.Size() }

// MeasureGaps turns on (from zero) or off the count of the forward pass's
// serial time between its parallel passes (parallel.Pool.MeasureGaps), for
// flowchat bench; call it between forward passes.
func (m *Model) MeasureGaps(on bool) { m.pool.MeasureGaps(on) }

// Gaps returns the counts since MeasureGaps(true).
func (m *Model) Gaps() parallel.Gaps { return m.pool.Gaps() }

func (m *Model) bind(src Source) error {
	n := &m.Spec.Network
	b := &binder{src: src}
	emb, ok := src.Weight("token_embd.weight")
	if !ok {
		return errors.New("model file lacks tensor token_embd.weight")
	}
	if emb.Cols != m.NEmbd {
		return fmt.Errorf("token_embd.weight has width %d, metadata says %d", emb.Cols, m.NEmbd)
	}
	m.TokEmbd, m.NVocab = emb, emb.Rows
	rms := n.Normalization == "rms"
	m.PosEmbd = b.optMatrix("position_embd.weight", m.NEmbd, -1)
	m.TypeEmbd = b.optMatrix("token_types.weight", m.NEmbd, -1)
	m.EmbdNorm = b.norm("token_embd_norm", m.NEmbd, rms, n.NormBaseOne, m.NormEps)
	m.glu = isGLU(n.Activation)
	m.Layers = make([]Layer, m.NLayer)
	for i := range m.Layers {
		m.Layers[i] = b.layer(i, m.Config, rms, n.NormBaseOne, m.glu)
	}
	m.OutNorm = b.norm("output_norm", m.NEmbd, rms, n.NormBaseOne, m.NormEps)
	if m.Output = b.optLinear("output", m.NEmbd, m.NVocab); m.Output.W == nil {
		m.Output.W = emb // tied embeddings
	}
	if n.PositionEmbedding == "learned" && m.PosEmbd == nil && b.err == nil {
		return errors.New("spec says learned positions but the file lacks position_embd.weight")
	}
	return b.err
}

func (m *Model) configure() {
	n := &m.Spec.Network
	m.act = activation(n.Activation)
	m.silu = isSiLU(n.Activation)
	m.useRope = n.PositionEmbedding == "rope"
	m.sinusoidal = n.PositionEmbedding == "sinusoidal"
	m.ropeHalf = n.QKColumnOrder == "half"
	if n.PositionEmbedding == "alibi" {
		bias := n.AlibiMaxBias
		if bias == 0 {
			bias = 8
		}
		m.alibi = alibiSlopes(m.NHead, bias)
	}
	m.attnScale = 1 / float32(sqrt64(float64(m.HeadDim)))
	if n.AttentionScale != 0 {
		m.attnScale = float32(n.AttentionScale)
	}
	m.embdScale, _ = n.EmbeddingScaleFor(m.NEmbd)
	m.parallel = n.ParallelAttention
}

// Describe summarizes the weights: parameter count and the tensor types.
func (m *Model) Describe() (params int64, types map[ggml.Type]int) {
	types = map[ggml.Type]int{}
	for _, w := range m.Weights() {
		params += int64(w.Cols) * int64(w.Rows)
		types[w.Type]++
	}
	return params, types
}

// embFromFile reports whether token embedding rows are read from the file
// (embFile) rather than from TokEmbd.Data: only while TokEmbd still holds
// the mapped tensor it was opened for.
func (m *Model) embFromFile() bool {
	w := m.TokEmbd
	return m.embFile != nil && w != nil && len(w.Data) > 0 && &w.Data[0] == m.embData && w.Type == m.embType
}
