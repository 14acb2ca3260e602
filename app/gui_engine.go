package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"flowchat/engine"
	"flowchat/engine/chat"
	"flowchat/engine/sample"
	"flowchat/ui"
)

// guiEngine adapts a loaded engine.Model to ui.Engine. Every Generate and
// Explain is a session of its own on the model's scheduler, so replies of
// several conversations stream at once (batched into one forward pass),
// and a conversation's next turn finds its earlier tokens in the prefix
// cache. They hold mu for reading; Close takes it for writing, so it waits
// for them. The chat template and tokenizer have their own lock so that
// counting tokens does not wait for a reply.
type guiEngine struct {
	mu      sync.RWMutex
	tokMu   sync.Mutex
	m       *engine.Model
	nCtx    int
	path    string
	threads int
	gpu     string // the backend and device names when blocks are offloaded ("CUDA 12.4 · NVIDIA H100")
}

var _ ui.Engine = (*guiEngine)(nil)

func newGUIEngine(m *engine.Model, path string, nCtx, threads int) *guiEngine {
	return &guiEngine{m: m, nCtx: m.NewSession(nCtx).Ctx(), path: path, threads: threads}
}

func (g *guiEngine) Info() ui.ModelInfo {
	i := g.m.Info
	return ui.ModelInfo{Path: g.path, Name: i.Name, Arch: i.Arch, Params: i.Params, Quant: i.Quant,
		FileSize: i.FileSize, ContextTrain: i.ContextTrain, Layers: i.Layers}
}

func (g *guiEngine) ContextSize() int { return g.nCtx }

// Device says what runs where: "GPU 22/22 layers · CUDA 12.4 · NVIDIA
// H100" when blocks are offloaded, else the CPU and its threads.
func (g *guiEngine) Device() string {
	if layers, head := g.m.Net.Offloaded(); layers > 0 || head {
		return fmt.Sprintf("GPU %d/%d layers · %s", layers, g.m.Net.NLayer, g.gpu)
	}
	return fmt.Sprintf("CPU · %d threads", g.threads)
}

// encode renders msgs with the model's chat template, generation prompt
// included, and tokenizes the result (BOS added unless the template did).
func (g *guiEngine) encode(msgs []ui.Message) ([]int32, error) {
	cm := make([]chat.Message, len(msgs))
	for i, m := range msgs {
		cm[i] = chat.Message{Role: m.Role, Content: m.Content}
	}
	g.tokMu.Lock()
	defer g.tokMu.Unlock()
	prompt, err := g.m.RenderChat(cm, true)
	if err != nil {
		return nil, err
	}
	addBOS := g.m.Tok.BOS() < 0 || !strings.HasPrefix(prompt, g.m.Tok.Token(g.m.Tok.BOS()))
	return g.m.Tok.Encode(prompt, addBOS, true), nil
}

func (g *guiEngine) CountTokens(msgs []ui.Message) (int, error) {
	ids, err := g.encode(msgs)
	return len(ids), err
}

func (g *guiEngine) Generate(ctx context.Context, req ui.Request, onPiece func(string)) (ui.Stats, error) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	ids, err := g.encode(req.Messages)
	if err != nil {
		return ui.Stats{}, err
	}
	sp, err := toSampleParams(req.Sampling)
	if err != nil {
		return ui.Stats{}, err
	}
	t0 := time.Now()
	var first time.Duration
	opt := engine.GenerateOptions{MaxTokens: req.Sampling.MaxTokens, Sampling: sp}
	opt.OnPiece = func(s string) bool {
		if first == 0 {
			first = time.Since(t0)
		}
		onPiece(s)
		return true
	}
	if req.OnExplain != nil {
		opt.OnExplain = func(e sample.Explanation) { req.OnExplain(g.explanation(e)) }
	}
	opt.OnPrefill, opt.ContextShift, opt.OnWait = req.OnPrefill, req.ContextShift, req.OnWait
	st, err := generate(ctx, g.m, g.m.NewSession(g.nCtx), ids, opt)
	out := ui.Stats{PromptTokens: st.PromptTokens, CachedTokens: st.CachedTokens, GenTokens: st.GenTokens,
		TimeToFirstToken: first, Total: time.Since(t0), StopReason: stopReason(st.StopReason), Shifted: st.Shifted,
		Drafted: st.Drafted, DraftAccepted: st.DraftAccepted}
	if first == 0 {
		out.TimeToFirstToken = st.PromptTime
	}
	if errors.Is(err, engine.ErrContextFull) {
		err = fmt.Errorf("%w: %w", ui.ErrContextFull, err)
	}
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	return out, err
}

// stopReason maps the engine's stop reasons onto the UI's.
func stopReason(s string) string {
	switch s {
	case "eog":
		return ui.StopEOG
	case "length":
		return ui.StopLength
	case "context":
		return ui.StopContext
	case "cancelled", "stopped":
		return ui.StopCancelled
	}
	return s
}

// Explain computes what the first step of a reply to req would see, with
// a session's Explain: the prompt costs only what the prefix cache does
// not hold (a following Generate then reuses it) and no token is drawn.
// It runs beside replies being generated, in the same batches.
func (g *guiEngine) Explain(ctx context.Context, req ui.Request) (ui.Explanation, error) {
	if !g.mu.TryRLock() {
		return ui.Explanation{}, ui.ErrBusy // closing
	}
	defer g.mu.RUnlock()
	ids, err := g.encode(req.Messages)
	if err != nil {
		return ui.Explanation{}, err
	}
	sp, err := toSampleParams(req.Sampling)
	if err != nil {
		return ui.Explanation{}, err
	}
	exp, err := g.m.NewSession(g.nCtx).Explain(ctx, ids, sp)
	if err != nil {
		if errors.Is(err, engine.ErrContextFull) {
			err = fmt.Errorf("%w: %w", ui.ErrContextFull, err)
		}
		return ui.Explanation{}, err
	}
	return g.explanation(exp), nil
}

// explanation converts the engine's explanation, naming tokens by their
// text.
func (g *guiEngine) explanation(e sample.Explanation) ui.Explanation {
	out := ui.Explanation{Decoding: e.Decoding, Chosen: g.piece(e.Chosen)}
	for _, st := range e.Stages {
		r := ui.StageReport{Stage: st.Stage, In: st.In, Out: st.Out}
		for _, c := range st.Candidates {
			r.Candidates = append(r.Candidates, ui.Candidate{
				Text: g.piece(c.Token), PBefore: c.PBefore, P: c.P, Kept: c.Kept, Chosen: c.Token == e.Chosen,
			})
		}
		out.Stages = append(out.Stages, r)
	}
	return out
}

func (g *guiEngine) piece(id int32) string {
	g.tokMu.Lock()
	defer g.tokMu.Unlock()
	return string(g.m.Tok.Piece(id))
}

// Close waits for a reply or explanation in progress, then releases the
// model.
func (g *guiEngine) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.m.Close()
}
