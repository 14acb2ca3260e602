package serve

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"math"
	"net/http"

	"flowchat/engine"
	"flowchat/engine/sample"
	"flowchat/engine/stoptext"
)

// job is one completion to run: the same for chat and legacy completions.
type job struct {
	prompt    []int32
	params    sample.Params
	maxTokens int // 0 = until end of generation or the context is full
	ignoreEOS bool
	stops     []string // stop strings; none of their text is ever returned
	// topLogprobs is how many alternatives to report per token; -1 means
	// no logprobs at all (they cost a second pass of the sampler chain).
	topLogprobs int
	// continuation marks a legacy completion, whose text continues the
	// prompt: a leading space of the first token is part of it.
	continuation bool
	// emit, when set, streams text as it becomes safe to send, with the
	// logprobs of the tokens since the last call; false stops generation.
	emit func(text string, lps []tokenLogprob) bool
	// started, when set, is called once, as the first token is drawn.
	started func()
	// spec and noSpec are the request's speculation (speculative.go).
	spec   *engine.SpecOptions
	noSpec bool
}

// result is a finished completion.
type result struct {
	text     string
	logprobs []tokenLogprob
	finish   string // "stop" or "length"
	stats    engine.Stats
}

// noLogprob is what a token outside the listed candidates is reported
// with: OpenAI's own value for "effectively impossible".
const noLogprob = -9999.0

// run generates j on the backend, applying stop strings and collecting
// logprobs.
func (s *Server) run(ctx context.Context, j job) (result, error) {
	stops := j.stops
	if !j.ignoreEOS && len(s.cfg.EndTexts) > 0 {
		stops = append(append([]string(nil), stops...), s.cfg.EndTexts...)
	}
	g := &generation{s: s, j: j, stop: stoptext.Matcher{Stops: stops}, first: -1, fix: j.continuation}
	opt := engine.GenerateOptions{MaxTokens: j.maxTokens, Sampling: j.params, IgnoreEOG: j.ignoreEOS,
		OnPiece: g.onPiece, OnToken: g.onToken, Spec: j.spec, NoSpec: j.noSpec}
	if j.topLogprobs >= 0 {
		opt.OnExplain = func(e sample.Explanation) { g.exp = e }
	}
	stats, err := s.cfg.Backend.Generate(ctx, j.prompt, opt)
	g.res.stats = stats
	if err != nil {
		return g.res, err
	}
	if stats.StopReason == "cancelled" {
		return g.res, context.Cause(ctx)
	}
	g.send(g.stop.Flush())
	if j.emit != nil && len(g.pending) > 0 {
		j.emit("", g.pending) // tokens whose text was a cut stop string
	}
	s.metrics.generation(stats)
	g.res.finish = finishReason(stats.StopReason, g.stop.Hit())
	return g.res, nil
}

// generation is the state of one run between the engine's callbacks,
// which all come from the generating goroutine.
type generation struct {
	s       *Server
	j       job
	stop    stoptext.Matcher
	res     result
	pending []tokenLogprob     // logprobs not yet sent with text
	exp     sample.Explanation // the current step's, when logprobs are wanted
	first   int32              // the first token, -1 before it
	fix     bool               // the first piece may need its space back
}

func (g *generation) onPiece(piece string) bool {
	if g.fix {
		piece, g.fix = g.s.restoreSpace(g.first, piece), false
	}
	return g.send(g.stop.Add(piece)) && !g.stop.Hit()
}

func (g *generation) onToken(id int32) {
	if g.first < 0 {
		g.first = id
		if g.j.started != nil {
			g.j.started()
		}
	}
	if g.j.topLogprobs >= 0 {
		lp := g.s.tokenLogprob(g.exp, id, g.j.topLogprobs)
		g.res.logprobs = append(g.res.logprobs, lp)
		g.pending = append(g.pending, lp)
	}
}

// send records text and streams it with the pending logprobs; false
// means the client is gone.
func (g *generation) send(text string) bool {
	if text == "" {
		return true
	}
	g.res.text += text
	ok := g.j.emit == nil || g.j.emit(text, g.pending)
	g.pending = nil
	return ok
}

// restoreSpace puts back the space the engine's streaming decoder drops
// from the start of a generation (SentencePiece's "add space prefix"
// rule, right for a text's first word but not for a continuation).
func (s *Server) restoreSpace(first int32, piece string) string {
	if first < 0 || len(piece) == 0 || piece[0] == ' ' {
		return piece
	}
	if p := s.cfg.Model.Tok.Piece(first); len(p) > 0 && p[0] == ' ' {
		return " " + piece
	}
	return piece
}

// finishReason maps the engine's stop reasons onto OpenAI's.
func finishReason(engineReason string, stopHit bool) string {
	if stopHit {
		return "stop"
	}
	switch engineReason {
	case "length", "context":
		return "length"
	}
	return "stop"
}

// tokenLogprob reports id's log-probability under the model's
// distribution (the candidates entering the first stage of the chain,
// before any truncation or temperature) and the top alternatives.
func (s *Server) tokenLogprob(e sample.Explanation, id int32, top int) tokenLogprob {
	lp := tokenLogprob{Token: s.tokenText(id), Logprob: noLogprob, Bytes: s.tokenBytes(id), TopLogprobs: []topLogprob{}}
	if len(e.Stages) == 0 {
		return lp
	}
	for i, c := range e.Stages[0].Candidates {
		if c.Token == id {
			lp.Logprob = logOf(c.PBefore)
		}
		if i < top {
			lp.TopLogprobs = append(lp.TopLogprobs, topLogprob{Token: s.tokenText(c.Token), Logprob: logOf(c.PBefore), Bytes: s.tokenBytes(c.Token)})
		}
	}
	return lp
}

func logOf(p float32) float64 {
	if p <= 0 {
		return noLogprob
	}
	return math.Log(float64(p))
}

func (s *Server) tokenText(id int32) string { return string(s.cfg.Model.Tok.Piece(id)) }

func (s *Server) tokenBytes(id int32) []int {
	b := s.cfg.Model.Tok.Piece(id)
	out := make([]int, len(b))
	for i, c := range b {
		out[i] = int(c)
	}
	return out
}

// runError maps a generation error onto an HTTP error.
func runError(err error) *apiError {
	switch {
	case errors.Is(err, ErrBusy):
		return &apiError{Status: http.StatusServiceUnavailable, Type: "server_error", Message: err.Error()}
	case errors.Is(err, engine.ErrContextFull):
		return withCode(badRequest("messages", "%v", err), "context_length_exceeded")
	}
	return serverError(err)
}

// seedFor gives choice i of n its own seed, so that n > 1 yields n
// different samples yet a fixed seed still reproduces all of them.
func seedFor(p sample.Params, i int) sample.Params {
	if p.Seed != sample.SeedRandom {
		p.Seed += uint64(i)
	}
	return p
}

func newID(prefix string) string {
	var b [12]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}
