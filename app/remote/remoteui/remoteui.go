// Package remoteui adapts package remote to the GUI's interfaces:
// ui.Remotes (endpoints, their models, connecting) and ui.RemoteEngine (a
// model on a server, answering a conversation).
package remoteui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"
	"time"

	"flowchat/app/presets"
	"flowchat/app/remote"
	"flowchat/app/store"
	"flowchat/engine/sample"
	"flowchat/ui"
)

// Remotes is ui.Remotes over package remote, with keys in the store's key
// files.
type Remotes struct{ keys store.Keys }

var _ ui.Remotes = Remotes{}

// New returns the GUI's Remotes, reading and writing keys in keys.
func New(keys store.Keys) Remotes { return Remotes{keys: keys} }

func (g Remotes) SaveKey(id, key string) error { return g.keys.Save(id, key) }

func (g Remotes) Dialects() []string {
	out := []string{""}
	for _, d := range remote.Dialects {
		out = append(out, string(d))
	}
	return out
}

func (g Remotes) client(e store.Endpoint) (*remote.Client, error) {
	key, err := g.keys.Load(e.ID)
	if err != nil {
		return nil, err
	}
	d, err := remote.ParseDialect(e.Dialect)
	if err != nil {
		return nil, err
	}
	c, err := remote.New(e.BaseURL, key)
	if err != nil {
		return nil, err
	}
	c.Dialect = d
	return c, nil
}

func (g Remotes) Models(ctx context.Context, e store.Endpoint) ([]string, error) {
	c, err := g.client(e)
	if err != nil {
		return nil, err
	}
	ms, err := c.Models(ctx)
	ids := make([]string, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
	}
	return ids, err
}

func (g Remotes) Connect(ctx context.Context, e store.Endpoint, model string) (ui.RemoteEngine, error) {
	c, err := g.client(e)
	if err != nil {
		return nil, err
	}
	d, err := c.Detect(ctx)
	if err != nil {
		return nil, err
	}
	ms, err := c.Models(ctx)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(ms, func(m remote.Model) bool { return m.ID == model })
	if i < 0 {
		return nil, c.CheckModel(ctx, model)
	}
	return &remoteEngine{c: c, endpoint: e.Name, model: model, dialect: d, ctx: ms[i].MaxModelLen}, nil
}

// remoteEngine adapts a remote.Client and one of its models to
// ui.RemoteEngine.
type remoteEngine struct {
	c        *remote.Client
	endpoint string
	model    string
	dialect  remote.Dialect
	ctx      int // the server's context length; 0 when it does not say
	wg       sync.WaitGroup
}

var _ ui.RemoteEngine = (*remoteEngine)(nil)

// assumedContext stands in for a context length the server does not
// report (only vLLM does); the server itself refuses a prompt too long.
const assumedContext = 32768

func (r *remoteEngine) Info() ui.ModelInfo {
	return ui.ModelInfo{Path: "remote:" + r.endpoint + "/" + r.model, Name: r.model,
		Arch: "remote (" + string(r.dialect) + ")", ContextTrain: r.ctx}
}

func (r *remoteEngine) ContextSize() int {
	if r.ctx > 0 {
		return r.ctx
	}
	return assumedContext
}

func (r *remoteEngine) Device() string {
	return fmt.Sprintf("%s · %s (%s)", r.endpoint, r.c.Host(), r.dialect)
}

func (r *remoteEngine) Endpoint() string { return r.endpoint }

// Unsupported expands remote.Support onto the sampling panel's keys:
// mirostat, DRY and XTC stand for their whole groups.
func (r *remoteEngine) Unsupported() map[string]string {
	groups := map[string][]string{
		"mirostat":        {"mirostat", "mirostat_tau", "mirostat_eta"},
		"dry_multiplier":  {"dry_multiplier", "dry_base", "dry_allowed_length", "dry_penalty_last_n", "dry_sequence_breakers"},
		"xtc_probability": {"xtc_probability", "xtc_threshold"},
		"decoding":        {"fsd_alpha", "fsd_k", "fsd_n", "fsd_beta", "fsd_random_steps"},
	}
	out := map[string]string{}
	for k, why := range remote.Support(r.dialect) {
		keys, ok := groups[k]
		if !ok {
			keys = []string{k}
		}
		for _, key := range keys {
			out[key] = why
		}
	}
	return out
}

// CountTokens estimates: the remote tokenizer is not at hand, so four
// characters a token plus a few for each message's template, which errs
// long for English.
func (r *remoteEngine) CountTokens(msgs []ui.Message) (int, error) {
	n := 0
	for _, m := range msgs {
		n += 4 + (len(m.Content)+3)/4
	}
	return n, nil
}

// toSampleParams converts the panel's parameters to the sampler's: the
// same JSON names (logit biases aside, whose infinities JSON cannot hold).
func toSampleParams(p presets.Params) (sample.Params, error) {
	bias := p.LogitBias
	p.LogitBias = nil
	b, err := json.Marshal(p)
	if err != nil {
		return sample.Params{}, err
	}
	sp := sample.DefaultParams()
	if err := json.Unmarshal(b, &sp); err != nil {
		return sp, err
	}
	sp.LogitBias = maps.Clone(bias)
	return sp, nil
}

func (r *remoteEngine) Generate(ctx context.Context, req ui.Request, onPiece func(string)) (ui.Stats, error) {
	r.wg.Add(1)
	defer r.wg.Done()
	sp, err := toSampleParams(req.Sampling)
	if err != nil {
		return ui.Stats{}, err
	}
	rr := remote.Request{Model: r.model, Sampling: sp, MaxTokens: req.Sampling.MaxTokens}
	for _, m := range req.Messages {
		rr.Messages = append(rr.Messages, remote.Message{Role: m.Role, Content: m.Content})
	}
	if req.OnExplain != nil {
		rr.TopLogprobs = 10
	}
	t0 := time.Now()
	res, err := r.c.Chat(ctx, rr, func(p remote.Piece) {
		if req.OnExplain != nil {
			for _, t := range p.Logprobs {
				req.OnExplain(logprobExplanation(t))
			}
		}
		onPiece(p.Text)
	})
	st := ui.Stats{PromptTokens: res.PromptTokens, GenTokens: res.GenTokens, TimeToFirstToken: res.TimeToFirst,
		Total: time.Since(t0), StopReason: remoteStop(res.FinishReason)}
	if err != nil && res.Text != "" {
		st.StopReason = ui.StopCancelled // cut short: the partial reply is kept and marked
	}
	if errors.Is(err, context.Canceled) {
		st.StopReason = ui.StopCancelled
	}
	return st, err
}

func remoteStop(s string) string {
	switch s {
	case "stop", "eos", "end_turn":
		return ui.StopEOG
	case "length":
		return ui.StopLength
	}
	return s
}

// errNoRemoteExplain says where a remote engine's chart comes from.
var errNoRemoteExplain = errors.New("a remote engine shows the next-token chart while it replies, from the top_logprobs the server returns (turn on live explanation); servers that return none leave it empty")

// Explain is not offered before a reply: each would be a billed request
// to the server.
func (r *remoteEngine) Explain(ctx context.Context, req ui.Request) (ui.Explanation, error) {
	return ui.Explanation{}, errNoRemoteExplain
}

// logprobExplanation draws one step from the server's top_logprobs: one
// stage, the candidates' probabilities renormalised over those returned.
func logprobExplanation(t remote.TokenLogprobs) ui.Explanation {
	st := ui.StageReport{Stage: "server (top_logprobs)", In: len(t.Top), Out: len(t.Top)}
	var sum float64
	for _, c := range t.Top {
		sum += math.Exp(c.Logprob)
	}
	for _, c := range t.Top {
		p := float32(math.Exp(c.Logprob) / sum)
		st.Candidates = append(st.Candidates, ui.Candidate{Text: c.Token, PBefore: p, P: p, Kept: true, Chosen: c.Token == t.Token})
	}
	return ui.Explanation{Decoding: "remote", Chosen: t.Token, Stages: []ui.StageReport{st}}
}

// Close waits for a reply in progress (the caller cancels it first).
func (r *remoteEngine) Close() error {
	r.wg.Wait()
	return nil
}
