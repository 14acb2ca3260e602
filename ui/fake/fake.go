// Package fake provides in-memory implementations of the ui package's
// interfaces (Engine, Library) for tests, screenshots and demos: the
// engine streams a scripted reply piece by piece and honours cancellation
// like a real one.
package fake

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"flowchat/app/presets"
	"flowchat/ui"
)

// Engine is a scripted ui.Engine. The zero value echoes the last message.
type Engine struct {
	Model string
	// DeviceText is what Device reports; "" gives "CPU · fake".
	DeviceText string
	// Reply returns the whole reply to msgs; nil echoes the last message.
	Reply func(msgs []ui.Message) string
	// Delay is the pause before each piece, a stand-in for decode time.
	Delay time.Duration
	// Gate, when not nil, must yield a value before each piece is sent, so a
	// test can step the stream one piece at a time.
	Gate chan struct{}
	// Err is returned once the whole reply was streamed.
	Err error
	// Stop is the stop reason reported when the whole reply was streamed;
	// "" means ui.StopEOG.
	Stop string
	// Shifted is what Stats.Shifted reports for requests with ContextShift.
	Shifted int
	// Context is the context window in tokens; 0 means 4096.
	Context int
	// Explanation returns the next-token view of req; nil uses Distribution.
	Explanation func(req ui.Request) ui.Explanation

	mu     sync.Mutex
	calls  []ui.Request
	closed bool
}

var _ ui.Engine = (*Engine)(nil)

// Info names the model.
func (e *Engine) Info() ui.ModelInfo {
	name := e.Model
	if name == "" {
		name = "fake"
	}
	return ui.ModelInfo{Name: name, Arch: "fake", Params: 1e6, Quant: "F32", Layers: 4, ContextTrain: e.ContextSize()}
}

// ContextSize returns Context, or 4096.
func (e *Engine) ContextSize() int {
	if e.Context <= 0 {
		return 4096
	}
	return e.Context
}

func (e *Engine) Device() string {
	if e.DeviceText != "" {
		return e.DeviceText
	}
	return "CPU · fake"
}

// Close marks the engine closed; Closed reports it.
func (e *Engine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
	return nil
}

func (e *Engine) Closed() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closed
}

// PerMessageTokens is what the fake chat template adds per message.
const PerMessageTokens = 3

// CountTokens counts Pieces of every message plus PerMessageTokens each.
func (e *Engine) CountTokens(msgs []ui.Message) (int, error) {
	n := 0
	for _, m := range msgs {
		n += len(Pieces(m.Content)) + PerMessageTokens
	}
	return n, nil
}

// Calls returns copies of the requests Generate was called with.
func (e *Engine) Calls() []ui.Request {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]ui.Request, len(e.calls))
	for i, c := range e.calls {
		c.Messages = slices.Clone(c.Messages)
		out[i] = c
	}
	return out
}

// Generate streams the reply as Pieces, at most Sampling.MaxTokens of them.
// Token counts are piece counts.
func (e *Engine) Generate(ctx context.Context, req ui.Request, onPiece func(string)) (ui.Stats, error) {
	start := time.Now()
	e.record(req)
	n, _ := e.CountTokens(req.Messages)
	st := ui.Stats{PromptTokens: n, StopReason: ui.StopEOG}
	if req.OnPrefill != nil { // the prompt in two chunks
		req.OnPrefill(n/2, n)
		req.OnPrefill(n, n)
	}
	for _, p := range Pieces(e.reply(req.Messages)) {
		if max := req.Sampling.MaxTokens; max > 0 && st.GenTokens >= max {
			st.StopReason = ui.StopLength
			break
		}
		if err := e.wait(ctx); err != nil {
			st.Total, st.StopReason = time.Since(start), ui.StopCancelled
			return st, err
		}
		if req.OnExplain != nil {
			req.OnExplain(e.explain(req))
		}
		if st.GenTokens == 0 {
			st.TimeToFirstToken = time.Since(start)
		}
		onPiece(p)
		st.GenTokens++
	}
	st.Total = time.Since(start)
	if e.Stop != "" && st.StopReason == ui.StopEOG {
		st.StopReason = e.Stop
	}
	if req.ContextShift {
		st.Shifted = e.Shifted
	}
	return st, e.Err
}

// Explain returns Explanation(req), or Distribution's view of it.
func (e *Engine) Explain(ctx context.Context, req ui.Request) (ui.Explanation, error) {
	if err := ctx.Err(); err != nil {
		return ui.Explanation{}, err
	}
	return e.explain(req), nil
}

func (e *Engine) explain(req ui.Request) ui.Explanation {
	if e.Explanation != nil {
		return e.Explanation(req)
	}
	return Distribution(req.Sampling)
}

// Words and Probs are the fake model's next-token distribution.
var (
	Words = []string{" Once", " The", " In", " A", " It", " There"}
	Probs = []float32{0.40, 0.25, 0.15, 0.10, 0.06, 0.04}
)

// Distribution runs a two-stage chain, top-k then temperature, over
// Words/Probs as the engine's explain API reports it.
func Distribution(p presets.Params) ui.Explanation {
	exp := ui.Explanation{Decoding: p.Decoding}
	cur := slices.Clone(Probs)
	if p.TopK > 0 && p.TopK < len(cur) {
		next := slices.Clone(cur)
		for i := p.TopK; i < len(next); i++ {
			next[i] = 0
		}
		exp.Stages = append(exp.Stages, stage("top_k", cur, normalise(next)))
		cur = normalise(next)
	}
	if p.Temperature > 0 && p.Temperature != 1 {
		next := make([]float32, len(cur))
		for i, q := range cur {
			if q > 0 {
				next[i] = float32(math.Pow(float64(q), 1/float64(p.Temperature)))
			}
		}
		exp.Stages = append(exp.Stages, stage("temperature", cur, normalise(next)))
		cur = normalise(next)
	}
	exp.Stages = append(exp.Stages, stage("dist", cur, cur))
	exp.Chosen = Words[0]
	exp.Stages[len(exp.Stages)-1].Candidates[0].Chosen = true
	return exp
}

func normalise(ps []float32) []float32 {
	var sum float32
	for _, p := range ps {
		sum += p
	}
	out := make([]float32, len(ps))
	for i, p := range ps {
		out[i] = p / sum
	}
	return out
}

// stage reports the candidates alive before a stage.
func stage(name string, before, after []float32) ui.StageReport {
	r := ui.StageReport{Stage: name}
	for i, pb := range before {
		if pb == 0 {
			continue
		}
		r.In++
		c := ui.Candidate{Text: Words[i], PBefore: pb, P: after[i], Kept: after[i] > 0}
		if c.Kept {
			r.Out++
		}
		r.Candidates = append(r.Candidates, c)
	}
	return r
}

func (e *Engine) record(req ui.Request) {
	e.mu.Lock()
	defer e.mu.Unlock()
	req.Messages = slices.Clone(req.Messages)
	req.OnExplain, req.OnPrefill = nil, nil
	e.calls = append(e.calls, req)
}

func (e *Engine) reply(msgs []ui.Message) string {
	if e.Reply != nil {
		return e.Reply(msgs)
	}
	if len(msgs) == 0 {
		return ""
	}
	return msgs[len(msgs)-1].Content
}

// wait blocks for the next piece's turn or the context's end.
func (e *Engine) wait(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if e.Gate != nil {
		select {
		case <-e.Gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if e.Delay > 0 {
		t := time.NewTimer(e.Delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Pieces splits s the way a byte-level BPE vocabulary often does: each piece
// is a run of letters or digits with the whitespace before it, or a single
// other character. Concatenating the pieces gives s back.
func Pieces(s string) []string {
	var out []string
	for len(s) > 0 {
		n := pieceLen(s)
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

// pieceLen returns the byte length of the piece at the start of s.
func pieceLen(s string) int {
	i := len(s) - len(strings.TrimLeftFunc(s, unicode.IsSpace))
	rest := s[i:]
	if rest == "" {
		return len(s)
	}
	word := len(rest) - len(strings.TrimLeftFunc(rest, isWordRune))
	if word == 0 {
		_, word = utf8.DecodeRuneInString(rest)
	}
	return i + word
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// Library is an in-memory ui.Library over a list of model descriptions.
type Library struct {
	Files []ui.ModelInfo
	// GPUStatus is what GPU reports.
	GPUStatus ui.GPUStatus
	// LoadErr makes loading the model at a path fail.
	LoadErr map[string]error
	// Engine makes the engine for a load; nil gives &Engine{Model: info.Name}.
	Engine func(info ui.ModelInfo, o ui.LoadOptions) *Engine
	// LoadGate, when not nil, must yield a value before a load returns.
	LoadGate chan struct{}

	mu    sync.Mutex
	loads []LoadCall
}

// LoadCall records one Load.
type LoadCall struct {
	Path string
	Opts ui.LoadOptions
}

var _ ui.Library = (*Library)(nil)

func (l *Library) Models() ([]ui.ModelInfo, error) { return slices.Clone(l.Files), nil }

// ErrNotModel is Describe's error for a path not in Files.
var ErrNotModel = errors.New("not a GGUF model file")

func (l *Library) Describe(path string) (ui.ModelInfo, error) {
	for _, f := range l.Files {
		if f.Path == path {
			return f, nil
		}
	}
	return ui.ModelInfo{}, fmt.Errorf("%s: %w", path, ErrNotModel)
}

func (l *Library) Load(ctx context.Context, path string, o ui.LoadOptions) (ui.Engine, error) {
	l.mu.Lock()
	l.loads = append(l.loads, LoadCall{path, o})
	l.mu.Unlock()
	if l.LoadGate != nil {
		<-l.LoadGate
	}
	if err := l.LoadErr[path]; err != nil {
		return nil, err
	}
	info, err := l.Describe(path)
	if err != nil {
		return nil, err
	}
	if l.Engine != nil {
		return l.Engine(info, o), nil
	}
	return &Engine{Model: info.Name, Context: o.Context}, nil
}

// Loads returns the loads requested so far.
func (l *Library) Loads() []LoadCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.loads)
}

func (l *Library) GPU() ui.GPUStatus { return l.GPUStatus }

// Choices offers two re-quantization targets and two KV cache types.
func (l *Library) Choices() ui.LoadChoices {
	return ui.LoadChoices{
		Quants:  []ui.Choice{{Value: "", Label: "As stored"}, {Value: "Q8", Label: "Q8"}, {Value: "Q4", Label: "Q4"}},
		KVTypes: []ui.Choice{{Value: "F32", Label: "F32"}, {Value: "F16", Label: "F16"}},
	}
}

// Estimate splits the file between RAM and VRAM by layers offloaded and
// adds 1 KiB of KV cache per context token.
func (l *Library) Estimate(m ui.ModelInfo, o ui.LoadOptions) ui.MemoryEstimate {
	layers := max(m.Layers, 1)
	gpu := min(o.GPULayers, layers)
	size := uint64(m.FileSize)
	if o.Quant == "Q4" {
		size /= 2
	}
	e := ui.MemoryEstimate{
		RAM:  size*uint64(layers-gpu)/uint64(layers) + uint64(o.Context)<<10,
		VRAM: size * uint64(gpu) / uint64(layers),
	}
	if gpu > 0 {
		e.Devices = fakeParts(e.VRAM, gpu, o)
	}
	return e
}

// fakeParts shares vram bytes of n offloaded layers over o.Devices: whole
// layers by share under the layer partition (largest remainder), bytes by
// share otherwise; the parts add up to vram.
func fakeParts(vram uint64, n int, o ui.LoadOptions) []ui.DeviceEstimate {
	shares := o.Split
	if len(shares) != len(o.Devices) {
		shares = make([]float64, len(o.Devices))
		for i := range shares {
			shares[i] = 1
		}
	}
	var total float64
	for _, s := range shares {
		total += s
	}
	out := make([]ui.DeviceEstimate, len(o.Devices))
	cum, given := 0.0, uint64(0)
	for i, id := range o.Devices {
		cum += shares[i]
		upto := uint64(float64(vram) * cum / total)
		where := fmt.Sprintf("share %g", shares[i])
		if o.SplitMode == "" || o.SplitMode == "layer" || len(o.Devices) == 1 {
			layers := int(math.Round(float64(n) * cum / total))
			upto = vram * uint64(layers) / uint64(n)
			where = fmt.Sprintf("%d layers", layers-int(math.Round(float64(n)*(cum-shares[i])/total)))
		}
		if i == len(o.Devices)-1 {
			upto = vram
		}
		out[i] = ui.DeviceEstimate{ID: id, Where: where, Weights: upto - given, VRAM: upto - given}
		given = upto
	}
	return out
}

// ValidateSampling checks a few of the engine's ranges.
func (l *Library) ValidateSampling(p presets.Params) error {
	switch {
	case p.Temperature < 0:
		return errors.New("temperature must be >= 0")
	case p.TopP <= 0 || p.TopP > 1:
		return errors.New("top_p outside (0, 1]")
	case p.TopK < 0:
		return errors.New("top_k must be >= 0")
	}
	return nil
}

func (l *Library) MemoryInUse() uint64 { return 512 << 20 }
func (l *Library) MaxThreads() int     { return 4 }
