// Package engine is the inference engine's front door: it loads a model file
// (format reader → spec → network, tokenizer, chat template) and runs
// generation sessions with a sampler chain. The app layer (CLI, GUI,
// server) uses only this package and the small packages it re-exports.
package engine

import (
	"context"
	"errors"
	"flowchat/engine/device"
	"fmt"
	"os"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"time"

	"flowchat/engine/chat"
	"flowchat/engine/ggml"
	"flowchat/engine/gguf"
	"flowchat/engine/model"
	"flowchat/engine/quant" // also registers the Inferflow tensor types with ggml
	"flowchat/engine/sample"
	"flowchat/engine/spec"
	"flowchat/engine/tokenizer"
)

// LoadOptions are the user's load-time choices.
type LoadOptions struct {
	Threads  int    // forward-pass goroutines; 0 = all cores
	SpecPath string // a user spec file instead of the builtin one
	// HugePages copies the weights into memory backed by transparent huge
	// pages (Linux) instead of reading them from the file mapping: the
	// load reads the whole file (in parallel, with direct I/O where it is
	// not cached), decode runs faster (see docs/PERFORMANCE.md, issue 18).
	// A model that runs on the CPU alone then has its Q4_0/Q8_0 matrices
	// interleaved in groups of 4 rows for the decode kernels
	// (model.InterleaveRows4); without HugePages (--mmap) the weights stay
	// as the file has them.
	HugePages bool
	// Quant, when its Type is set, re-quantizes the weight matrices after
	// loading (Inferflow's load-time quantization: an Inferflow block
	// format or a GGML type; see engine/quant.Options).
	Quant quant.Options
	// KVType is the KV cache's element type for new sessions: F32
	// (default), F16 or Q8_0.
	KVType ggml.Type
	// Sched sizes the model's scheduler, which every Session shares
	// (sequences at once, rows per step, KV budget; see SchedOptions).
	Sched SchedOptions
	// GPU, when set, places blocks on devices (gpu.go). A block the
	// device kernels cannot run is an error, never a silent CPU fallback.
	GPU *GPUOptions
}

// Model is a loaded model with its tokenizer and chat template.
type Model struct {
	Path     string
	Info     Info
	Net      *model.Model
	Tok      *tokenizer.Tokenizer
	Template *chat.Template // nil when the file has none (Fallback is used)
	file     *gguf.File
	release  func() error // releases weight mappings or copies (huge pages, non-GGUF formats)
	// Requant reports the load-time re-quantization (empty when none).
	Requant quant.Report
	// GPUPlan is engine/multigpu's reason for a tensor or hybrid split's
	// shares and layer ranges (empty otherwise).
	GPUPlan string
	kvType  ggml.Type

	// runMu is held by every use of the network's worker pool: a
	// scheduler's step, Embed, Logits and the sessions of networks
	// without a scheduler. (Callbacks run inside a step: they must not
	// call back into those.)
	runMu sync.Mutex

	spec      *SpecOptions // default speculation of sessions (SetSpeculation)
	owned     []*Model     // draft models closed with this one (NewDraftModel)
	closeOnce sync.Once
	schedOpt  SchedOptions
	devices   []device.Device // GPUOptions.Devices, closed with the model
	schedOnce sync.Once
	sched     *Scheduler
	schedErr  error
}

// SetSpeculation makes o the speculative decoding of the model's
// sessions (nil: none); a GenerateOptions.Spec overrides it. What earlier
// replies measured of any drafter is forgotten (a new draft may share an
// old one's name), so the next reply probes afresh.
func (m *Model) SetSpeculation(o *SpecOptions) {
	m.spec = o
	if m.sched != nil {
		m.sched.statsMu.Lock()
		m.sched.priors = nil
		m.sched.statsMu.Unlock()
	}
}

// Speculation is the sessions' default speculative decoding (nil: none).
func (m *Model) Speculation() *SpecOptions { return m.spec }

// KVType is the KV cache element type sessions use.
func (m *Model) KVType() ggml.Type { return m.kvType }

// Scheduler returns the model's shared scheduler, started on first use.
// Encoder-only and encoder-decoder networks have none (an error): their
// sessions run one at a time on a cache of their own.
func (m *Model) Scheduler() (*Scheduler, error) {
	m.schedOnce.Do(func() {
		o := m.schedOpt
		if o.Ctx <= 0 { // blocks are taken as tokens come: a long limit costs little
			o.Ctx = max(min(m.Net.NCtxTrain, 32768), 4096)
		}
		if o.KVBudget > 0 { // a budget smaller than one context bounds the context
			if holds := int(o.KVBudget/blockBytes(m, 16)) * 16; holds < o.Ctx {
				o.Ctx = max(holds, 16)
			}
		}
		m.sched, m.schedErr = NewScheduler(m, o)
		if m.sched != nil {
			m.sched.Start()
		}
	})
	return m.sched, m.schedErr
}

// Info describes a model for people.
type Info struct {
	Name         string // general.name or the file name
	Arch         string
	Family       string // spec used
	Params       int64
	FileSize     int64
	Quant        string // dominant weight type, e.g. "Q4_K (+Q6_K, F32)"
	ContextTrain int
	Layers       int
	Embedding    int
	Vocab        int
	HasTemplate  bool
}

// Load opens a model file. Only GGUF is wired here; other formats come with
// their own readers.
func Load(path string, opt LoadOptions) (*Model, error) {
	m, err := load(path, opt)
	if err != nil {
		return nil, err
	}
	m.kvType, m.schedOpt = opt.KVType, opt.Sched
	if opt.Quant.Type != 0 {
		if m.Requant, err = m.Net.Requantize(opt.Quant); err != nil {
			m.Close()
			return nil, err
		}
		_, types := m.Net.Describe()
		m.Info.Quant = quantSummary(types)
	}
	if opt.GPU != nil {
		if err := m.placeGPU(opt.GPU); err != nil {
			m.Close()
			return nil, err
		}
	}
	switch layers, output := m.Net.Offloaded(); {
	case opt.HugePages && layers == 0 && !output:
		m.Net.InterleaveRows4(threads(opt))
	case layers == m.Net.NLayer && output && m.file != nil:
		// Every weight but the token embedding is on the devices, read
		// there from the file mapping (fullOffload: no huge-page copy). The
		// pages the upload made resident go back to the page cache: an
		// 8B Q8_0 model otherwise kept 8.4 GB of host memory (the H200
		// runs, docs/PERFORMANCE.md) for weights it never reads again.
		m.file.ReleaseResident()
	}
	// Loading leaves garbage (metadata, tokenizer tables, requantization
	// scratch) that the runtime would hand back to the OS only over minutes;
	// returning it now keeps ~20 MiB of a TinyLlama load out of the peak
	// RSS of what follows (issue 18).
	debug.FreeOSMemory()
	return m, nil
}

func load(path string, opt LoadOptions) (*Model, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("model file: %w", err)
	}
	if m, ok, err := loadOther(path, opt); ok {
		return m, err
	}
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	m, err := fromGGUF(f, opt)
	if err != nil {
		f.Close()
		return nil, err
	}
	return m, nil
}

// fullOffload reports whether o puts every block and the head of f's
// model on devices: then the weights are read once, for the upload, and
// the huge-page copy would only hold host memory for nothing.
func fullOffload(f *gguf.File, o *GPUOptions) bool {
	if o == nil || len(o.Devices) == 0 {
		return false
	}
	if o.Layers < 0 {
		return true
	}
	arch, _ := f.String("general.architecture")
	n, ok := f.Uint(arch + ".block_count")
	return ok && uint64(o.Layers) > n
}

func fromGGUF(f *gguf.File, opt LoadOptions) (*Model, error) {
	var sp *spec.Spec
	if opt.SpecPath != "" {
		var err error
		if sp, err = spec.ParseFile(opt.SpecPath); err != nil {
			return nil, err
		}
	}
	nt := threads(opt)
	release := func() error { return nil }
	var net *model.Model
	var err error
	if opt.HugePages && hugePagesFit(f.Size()) && !fullOffload(f, opt.GPU) {
		// On the host alone (no devices, no requantization), InterleaveRows4
		// runs after the load: the copy lays out its matrices as it reads.
		il := opt.GPU == nil && opt.Quant.Type == 0
		net, release, err = model.FromGGUFHugePages(f, sp, model.Options{Threads: nt, Interleave: il})
	} else {
		net, err = model.FromGGUF(f, sp, model.Options{Threads: nt})
	}
	if err != nil {
		return nil, err
	}
	tok, err := tokenizer.FromGGUF(f)
	if err != nil {
		net.Close()
		release()
		return nil, fmt.Errorf("%s: tokenizer: %w", f.Path, err)
	}
	m := &Model{Path: f.Path, Net: net, Tok: tok, file: f, release: release}
	if src, ok := f.String("tokenizer.chat_template"); ok && src != "" {
		if m.Template, err = chat.Parse(src); err != nil {
			// A broken template should not make the model unusable.
			fmt.Fprintf(os.Stderr, "warning: %s: chat template does not parse (%v); using the fallback\n", f.Path, err)
			m.Template = nil
		}
	}
	m.Info = describe(f, net, m.Template != nil)
	return m, nil
}

func describe(f *gguf.File, net *model.Model, tmpl bool) Info {
	params, types := net.Describe()
	name := ModelName(f)
	return Info{
		Name: name, Arch: net.Arch, Family: net.Spec.Family, Params: params, FileSize: f.Size(),
		Quant: quantSummary(types), ContextTrain: net.NCtxTrain, Layers: net.NLayer,
		Embedding: net.NEmbd, Vocab: net.NVocab, HasTemplate: tmpl,
	}
}

// ModelName is the name a model is shown under: general.name, unless that
// is missing or only the architecture (converters often write just that), in
// which case the file name without its extension.
func ModelName(f *gguf.File) string {
	name, _ := f.String("general.name")
	if arch, _ := f.String("general.architecture"); name == "" || name == arch {
		name = strings.TrimSuffix(baseName(f.Path), ".gguf")
	}
	return name
}

func baseName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

// quantSummary names the most common matrix type first.
func quantSummary(types map[ggml.Type]int) string {
	ts := make([]ggml.Type, 0, len(types))
	for t := range types {
		ts = append(ts, t)
	}
	sort.Slice(ts, func(i, j int) bool {
		if types[ts[i]] != types[ts[j]] {
			return types[ts[i]] > types[ts[j]]
		}
		return ts[i] < ts[j]
	})
	if len(ts) == 0 {
		return "?"
	}
	s := ts[0].String()
	if len(ts) > 1 {
		rest := make([]string, len(ts)-1)
		for i, t := range ts[1:] {
			rest[i] = t.String()
		}
		s += " (+" + strings.Join(rest, ", ") + ")"
	}
	return s
}

// Close stops the model's workers and releases its weights: copies made at
// load (huge pages) and the file mappings.
func (m *Model) Close() error {
	var err error
	m.closeOnce.Do(func() {
		m.schedOnce.Do(func() {}) // no scheduler after Close
		if m.sched != nil {
			m.sched.Close()
		}
		for _, d := range m.owned { // drafts run on this model's workers: close them first
			err = errors.Join(err, d.Close())
		}
		m.Net.Unplace()
		device.CloseAll(m.devices)
		m.Net.Close()
		if m.release != nil {
			err = errors.Join(err, m.release())
		}
		if m.file != nil {
			err = errors.Join(err, m.file.Close())
		}
	})
	return err
}

// RenderChat renders a conversation with the model's chat template. A model
// without one is treated as a base (completion) model: the messages' texts
// are joined by newlines with no role markers, so the model continues the
// user's text — a generic chat format would only confuse a model that never
// saw it. chat.Fallback (ChatML) is used when a model has chat-format special
// tokens but no template.
func (m *Model) RenderChat(msgs []chat.Message, addGenerationPrompt bool) (string, error) {
	t := m.Template
	if t == nil && !m.knowsChatML() {
		parts := make([]string, len(msgs))
		for i, msg := range msgs {
			parts[i] = msg.Content
		}
		return strings.Join(parts, "\n"), nil
	}
	if t == nil {
		t = chat.Fallback()
	}
	bos, eos := "", ""
	if id := m.Tok.BOS(); id >= 0 {
		bos = m.Tok.Token(id)
	}
	if id := m.Tok.EOS(); id >= 0 {
		eos = m.Tok.Token(id)
	}
	return t.Render(msgs, chat.Options{AddGenerationPrompt: addGenerationPrompt, BOS: bos, EOS: eos})
}

// knowsChatML reports whether the vocabulary has ChatML's turn markers as
// single special tokens.
func (m *Model) knowsChatML() bool {
	ids := m.Tok.Encode("<|im_start|>", false, true)
	return len(ids) == 1
}

// Session is one conversation: a thin wrapper over the model's scheduler,
// whose prefix cache keeps the conversation's tokens between turns (a new
// turn evaluates only what is new). Encoder-decoder networks have no
// scheduler; their session keeps a cache of its own (state).
type Session struct {
	m      *Model
	nCtx   int
	sched  *Scheduler
	state  *model.State
	tokens []int32 // the conversation's tokens after the last generation
}

// NewSession starts a conversation with a context of nCtx tokens (0 = the
// model's training context, capped at 4096).
func (m *Model) NewSession(nCtx int) *Session {
	if nCtx <= 0 {
		nCtx = min(m.Net.NCtxTrain, 4096)
	}
	if sc, err := m.Scheduler(); err == nil {
		return &Session{m: m, nCtx: min(nCtx, sc.opt.Ctx), sched: sc}
	}
	// LoadOptions.KVType was validated by the caller's parser; an
	// unsupported type keeps F32 rather than failing a session.
	st, err := m.Net.NewStateKV(nCtx, 256, m.kvType)
	if err != nil {
		st = m.Net.NewState(nCtx, 256)
	}
	return &Session{m: m, nCtx: nCtx, state: st}
}

// Ctx is the session's context size in tokens.
func (s *Session) Ctx() int { return s.nCtx }

// Used is the number of tokens in the context.
func (s *Session) Used() int { return min(len(s.tokens), s.nCtx) }

// GenerateOptions control one generation.
type GenerateOptions struct {
	MaxTokens int           // 0 = until end of generation or the context is full
	Sampling  sample.Params // see engine/sample
	IgnoreEOG bool          // keep going past end-of-generation tokens
	// OnPiece receives decoded text as it is produced (whole UTF-8
	// characters only); returning false stops generation.
	OnPiece func(text string) bool
	// OnToken, if set, sees each token id before its text.
	OnToken func(id int32)
	// OnExplain, if set, receives each step's sampling explanation (the
	// candidates after every stage) before the token is drawn.
	OnExplain func(sample.Explanation)
	// OnPrefill, if set, reports progress through the prompt: done of total
	// tokens evaluated (those reused from the cache are not counted).
	OnPrefill func(done, total int)
	// ContextShift keeps generating past a full context by dropping the
	// oldest tokens after the first few (Query.ContextShift).
	ContextShift bool
	// OnWait hears why the generation waits to start (Query.OnWait).
	OnWait func(reason string)
	// Spec turns on speculative decoding for this generation; nil takes
	// the model's default (SetSpeculation). NoSpec turns it off.
	Spec   *SpecOptions
	NoSpec bool
}

// Stats describe one generation.
type Stats struct {
	PromptTokens int // tokens evaluated for the prompt (after prefix reuse)
	CachedTokens int // prompt tokens reused from the cache
	GenTokens    int
	PromptTime   time.Duration // admission to the first token (the batch's other work included)
	GenTime      time.Duration
	QueueTime    time.Duration // waiting for a seat or KV blocks before the first step
	Shifted      int           // tokens dropped by context shifts
	StopReason   string        // "eog", "length", "context", "stopped", "cancelled", "explained", "error"

	// Speculative decoding: steps that drafted, tokens drafted and kept,
	// the plain decode rate measured in the same generation (tokens/s, 0
	// when no plain step was measured) and why drafting stopped, if it did.
	SpecSteps, Drafted, DraftAccepted int
	PlainTPS                          float64
	SpecNote                          string
	// DraftTime and VerifyTime are the drafting and the target's passes
	// of the drafting steps (formula 9's K·t_draft and t_target, summed).
	DraftTime, VerifyTime time.Duration
}

// AcceptRate is the share of drafted tokens kept.
func (s Stats) AcceptRate() float64 {
	if s.Drafted == 0 {
		return 0
	}
	return float64(s.DraftAccepted) / float64(s.Drafted)
}

// MeanAccepted is the mean number of drafts kept per drafting step.
func (s Stats) MeanAccepted() float64 {
	if s.SpecSteps == 0 {
		return 0
	}
	return float64(s.DraftAccepted) / float64(s.SpecSteps)
}

// PromptTPS and GenTPS are tokens per second.
func (s Stats) PromptTPS() float64 { return tps(s.PromptTokens, s.PromptTime) }
func (s Stats) GenTPS() float64    { return tps(s.GenTokens, s.GenTime) }

func tps(n int, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// ErrContextFull is returned when the prompt alone does not fit.
var ErrContextFull = model.ErrContextFull

// Generate evaluates prompt (reusing the longest cached prefix) and samples
// up to opt.MaxTokens tokens.
func (s *Session) Generate(ctx context.Context, prompt []int32, opt GenerateOptions) (Stats, error) {
	if s.sched != nil {
		spec := opt.Spec
		if spec == nil && opt.Sampling.SpeculationError() == nil {
			spec = s.m.spec // the default steps aside for settings it cannot verify
		}
		if opt.NoSpec {
			spec = nil
		}
		return s.run(ctx, Query{Prompt: prompt, Sampling: opt.Sampling, MaxTokens: opt.MaxTokens, IgnoreEOG: opt.IgnoreEOG,
			ContextShift: opt.ContextShift, OnToken: opt.OnToken, OnText: opt.OnPiece, OnExplain: opt.OnExplain, OnPrefill: opt.OnPrefill, OnWait: opt.OnWait,
			Spec: spec})
	}
	s.m.runMu.Lock() // a network without a scheduler: one session at a time
	defer s.m.runMu.Unlock()
	var st Stats
	sm, err := sample.New(opt.Sampling, s.m.Net.NVocab, sample.WithVocab(s.m.Tok))
	if err != nil {
		return st, err
	}
	if len(prompt) == 0 {
		return st, errors.New("empty prompt")
	}
	if len(prompt) >= s.Ctx() {
		return st, fmt.Errorf("%w: the prompt has %d tokens, the context holds %d", ErrContextFull, len(prompt), s.Ctx())
	}
	logits, err := s.prefill(ctx, prompt, &st, opt.OnPrefill)
	if err != nil {
		return st, err
	}
	for _, t := range prompt {
		sm.Accept(t)
	}
	return st, s.decode(ctx, sm, logits, opt, &st)
}

// prefill brings the cache to hold prompt and returns the last logits.
// prefillChunk is how many prompt tokens are evaluated between progress
// reports and cancellation checks.
const prefillChunk = 128

func (s *Session) prefill(ctx context.Context, prompt []int32, st *Stats, progress func(done, total int)) ([]float32, error) {
	keep := commonPrefix(s.tokens, prompt)
	if keep == len(prompt) {
		keep-- // re-evaluate the last token to get its logits
	}
	s.state.Truncate(keep)
	s.tokens = s.tokens[:keep]
	st.CachedTokens, st.PromptTokens = keep, len(prompt)-keep
	t0 := time.Now()
	defer func() { st.PromptTime = time.Since(t0) }()
	rest := prompt[keep:]
	var logits []float32
	for done := 0; done < len(rest); {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n := min(prefillChunk, len(rest)-done)
		var err error
		if logits, err = s.state.Forward(rest[done:done+n], false); err != nil {
			s.tokens = s.tokens[:min(len(s.tokens), s.state.Pos())]
			return nil, err
		}
		s.tokens = append(s.tokens, rest[done:done+n]...)
		done += n
		if progress != nil {
			progress(done, len(rest))
		}
	}
	return logits, nil
}

// Explain evaluates prompt (reusing the cache as Generate does) and returns
// what the sampler chain p would do with the next token, without drawing
// it: the data of the "next token" view. A following Generate on the same
// prompt reuses the work.
func (s *Session) Explain(ctx context.Context, prompt []int32, p sample.Params) (sample.Explanation, error) {
	if s.sched != nil {
		var ex sample.Explanation
		_, err := s.run(ctx, Query{Prompt: prompt, Sampling: p, ExplainOnly: true, OnExplain: func(e sample.Explanation) { ex = e }})
		return ex, err
	}
	s.m.runMu.Lock()
	defer s.m.runMu.Unlock()
	sm, err := sample.New(p, s.m.Net.NVocab, sample.WithVocab(s.m.Tok))
	if err != nil {
		return sample.Explanation{}, err
	}
	if len(prompt) == 0 || len(prompt) >= s.Ctx() {
		return sample.Explanation{}, fmt.Errorf("%w: the prompt has %d tokens, the context holds %d", ErrContextFull, len(prompt), s.Ctx())
	}
	var st Stats
	logits, err := s.prefill(ctx, prompt, &st, nil)
	if err != nil {
		return sample.Explanation{}, err
	}
	for _, t := range prompt {
		sm.Accept(t)
	}
	return sm.Explain(logits), nil
}

// run sends q to the scheduler and waits for it, cancelling it when ctx
// ends; the session then holds the prompt and the generated tokens.
func (s *Session) run(ctx context.Context, q Query) (Stats, error) {
	if err := ctx.Err(); err != nil {
		return Stats{StopReason: "cancelled"}, err
	}
	q.Ctx = s.nCtx
	gen := []int32(nil)
	onToken := q.OnToken
	q.OnToken = func(id int32) {
		gen = append(gen, id)
		if onToken != nil {
			onToken(id)
		}
	}
	h, err := s.sched.AddQuery(q)
	if err != nil {
		return Stats{}, err
	}
	select {
	case <-h.Done():
	case <-ctx.Done():
		h.Cancel()
	}
	st, err := h.Wait()
	s.tokens = append(append(s.tokens[:0], q.Prompt...), gen...)
	return st, err
}

func (s *Session) decode(ctx context.Context, sm *sample.Sampler, logits []float32, opt GenerateOptions, st *Stats) error {
	dec := s.m.Tok.NewDecoder()
	t0 := time.Now()
	defer func() { st.GenTime = time.Since(t0) }()
	for {
		if err := ctx.Err(); err != nil {
			st.StopReason = "cancelled"
			return nil
		}
		if opt.OnExplain != nil {
			opt.OnExplain(sm.Explain(logits))
		}
		tok := sm.Sample(logits)
		sm.Accept(tok)
		if !opt.IgnoreEOG && s.m.Tok.IsEOG(tok) {
			st.StopReason = "eog"
			return flush(dec, opt)
		}
		st.GenTokens++
		if opt.OnToken != nil {
			opt.OnToken(tok)
		}
		if text := dec.Add(tok); text != "" && opt.OnPiece != nil && !opt.OnPiece(text) {
			st.StopReason = "stopped"
			return nil
		}
		if opt.MaxTokens > 0 && st.GenTokens >= opt.MaxTokens {
			st.StopReason = "length"
			return flush(dec, opt)
		}
		if s.state.Pos() >= s.Ctx() {
			st.StopReason = "context"
			return flush(dec, opt)
		}
		var err error
		if logits, err = s.state.Forward([]int32{tok}, false); err != nil {
			return err
		}
		s.tokens = append(s.tokens, tok)
	}
}

func flush(dec *tokenizer.Decoder, opt GenerateOptions) error {
	if text := dec.Flush(); text != "" && opt.OnPiece != nil {
		opt.OnPiece(text)
	}
	return nil
}

func commonPrefix(a, b []int32) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// Logits evaluates tokens from an empty cache and returns every position's
// logits, [len(tokens) × vocab].
func (m *Model) Logits(tokens []int32) ([]float32, error) {
	m.runMu.Lock()
	defer m.runMu.Unlock()
	st := m.Net.NewState(max(len(tokens), 1), 256)
	out, err := st.Forward(tokens, true)
	if err != nil {
		return nil, err
	}
	return append([]float32(nil), out...), nil
}
