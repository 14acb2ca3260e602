package serve

import (
	"context"
	"net/http"
	"sync"
	"time"

	"flowchat/engine/chat"
)

// chatCall is a validated chat request, ready to run.
type chatCall struct {
	req chatRequest
	job job
	n   int
	id  string
	now int64
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	c, e := s.parseChat(w, r)
	if e != nil {
		writeError(w, e)
		return
	}
	if c.req.Stream {
		s.streamChat(w, r, c)
		return
	}
	s.completeChat(w, r, c)
}

// parseChat reads, decodes and validates a chat request and renders its
// prompt.
func (s *Server) parseChat(w http.ResponseWriter, r *http.Request) (*chatCall, *apiError) {
	body, e := s.readBody(w, r)
	if e != nil {
		return nil, e
	}
	c := &chatCall{n: 1, id: newID("chatcmpl-"), now: time.Now().Unix()}
	params, e := decodeRequest(body, &c.req, func(pr *problems) { checkChat(&c.req, pr) }, s.cfg.Model.Net.NVocab)
	if e != nil {
		return nil, e
	}
	if e := s.checkModel(c.req.Model); e != nil {
		return nil, e
	}
	if c.req.grammar != "" {
		params.Grammar = c.req.grammar
	}
	prompt, e := s.chatPrompt(&c.req)
	if e != nil {
		return nil, e
	}
	var pr problems
	spec, noSpec := s.specFor(c.req.Speculative, params, &pr)
	if e := pr.err(); e != nil {
		return nil, e
	}
	c.job = job{prompt: prompt, params: params, stops: c.req.Stop, topLogprobs: -1, ignoreEOS: c.req.IgnoreEOS, spec: spec, noSpec: noSpec}
	if c.req.Logprobs {
		c.job.topLogprobs = deref(c.req.TopLogprobs, 0)
	}
	c.job.maxTokens = deref(c.req.MaxCompletionTokens, deref(c.req.MaxTokens, 0))
	c.n = deref(c.req.N, 1)
	return c, nil
}

func deref(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}

// chatPrompt renders the conversation with the model's own template and
// tokenizes it as `flowchat run --chat` does: special tokens parsed, BOS
// added only when the template did not write it.
func (s *Server) chatPrompt(r *chatRequest) ([]int32, *apiError) {
	cm := make([]chat.Message, len(r.Messages))
	for i, m := range r.Messages {
		role := m.Role
		if role == "developer" {
			role = "system" // OpenAI's newer name; templates know "system"
		}
		cm[i] = chat.Message{Role: role, Content: assistantText(m)}
	}
	m := s.cfg.Model
	var text string
	if r.useTools() {
		var e *apiError
		if text, e = s.renderWithTools(cm, r.Tools); e != nil {
			return nil, e
		}
	} else {
		var err error
		if text, err = m.RenderChat(cm, true); err != nil {
			return nil, badRequest("messages", "the model's chat template cannot render these messages: %v", err)
		}
	}
	return m.Tok.Encode(text, !startsWithBOS(s, text), true), nil
}

// answer is a finished choice's message: tool calls parsed out of the
// text when the request gave tools.
func (c *chatCall) answer(res result) (*outMessage, string) {
	msg := &outMessage{Role: "assistant", Content: &res.text}
	if !c.req.useTools() {
		return msg, res.finish
	}
	calls, rest := parseToolCalls(res.text, c.req.Tools)
	if len(calls) == 0 {
		return msg, res.finish
	}
	msg.ToolCalls, msg.Content = calls, nil
	if rest != "" {
		msg.Content = &rest
	}
	return msg, "tool_calls"
}

// startsWithBOS reports whether text already begins with the BOS token's
// text, which many templates write themselves.
func startsWithBOS(s *Server, text string) bool {
	tok := s.cfg.Model.Tok
	if tok.BOS() < 0 {
		return false
	}
	b := tok.Token(tok.BOS())
	return b != "" && len(text) >= len(b) && text[:len(b)] == b
}

func (s *Server) completeChat(w http.ResponseWriter, r *http.Request, c *chatCall) {
	resp := chatResponse{ID: c.id, Object: "chat.completion", Created: c.now, Model: s.cfg.ModelID, SystemFingerprint: fingerprint}
	var u usage
	var tm timings
	results, err := s.runChoices(r.Context(), c.job, c.n, choiceHooks{})
	if err != nil {
		writeError(w, runError(err))
		return
	}
	for i, res := range results {
		j := c.job
		addUsage(&u, len(j.prompt), res)
		tm.add(res.stats)
		msg, finish := c.answer(res)
		resp.Choices = append(resp.Choices, chatChoice{Index: i, Message: msg,
			FinishReason: &finish, Logprobs: chatLps(c.job.topLogprobs, res.logprobs)})
	}
	resp.Usage = &u
	resp.Timings = &tm
	writeJSON(w, http.StatusOK, resp)
}

// choiceHooks adapt the choices of runChoices: prep adjusts choice i's
// job before it runs (its emit, for streaming), done receives its result
// as it ends. Both may be called from several goroutines at once.
type choiceHooks struct {
	prep func(i int, j *job)
	done func(i int, res result)
}

// runChoices runs the n choices of a request. The first starts alone and,
// once it has drawn its first token (its prompt's blocks are then in the
// engine's prefix cache), the others start, batched with it by the
// engine's scheduler and each finding the prompt cached. Choice i samples
// with seedFor(params, i), so a fixed seed gives the same choices
// streamed or not. The first error cancels the other choices and is
// returned.
func (s *Server) runChoices(ctx context.Context, base job, n int, h choiceHooks) ([]result, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	out := make([]result, n)
	var errOnce sync.Once
	var firstErr error
	// At most as many at once as the backend has seats, so a request's
	// own choices do not fill the queue.
	sem := make(chan struct{}, max(1, s.cfg.Backend.Load().Slots))
	one := func(i int, started func()) bool {
		sem <- struct{}{}
		defer func() { <-sem }()
		j := base
		j.params, j.started = seedFor(base.params, i), started
		if h.prep != nil {
			h.prep(i, &j)
		}
		res, err := s.run(ctx, j)
		if err != nil {
			errOnce.Do(func() { firstErr = err; cancel(err) })
			return false
		}
		out[i] = res
		if h.done != nil {
			h.done(i, res)
		}
		return true
	}
	var wg sync.WaitGroup
	rest := sync.OnceFunc(func() {
		for i := 1; i < n; i++ {
			wg.Go(func() { one(i, nil) })
		}
	})
	if one(0, rest) {
		rest() // the first ended without drawing a token
	}
	wg.Wait()
	return out, firstErr
}

// fingerprint identifies the serving configuration, as OpenAI's
// system_fingerprint does.
const fingerprint = "flowchat"

func chatLps(top int, lps []tokenLogprob) *chatLogprobs {
	if top < 0 {
		return nil
	}
	if lps == nil {
		lps = []tokenLogprob{}
	}
	return &chatLogprobs{Content: lps, Refusal: []tokenLogprob{}}
}

// addUsage counts one choice. As at OpenAI the prompt counts once for all
// n choices, so its cached part is the first choice's: later choices find
// the whole prompt cached by the first.
func addUsage(u *usage, promptLen int, res result) {
	if u.PromptTokensDetails == nil {
		u.PromptTokens = promptLen
		u.PromptTokensDetails = &promptDetails{CachedTokens: res.stats.CachedTokens}
	}
	u.CompletionTokens += res.stats.GenTokens
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
}

func (s *Server) streamChat(w http.ResponseWriter, r *http.Request, c *chatCall) {
	sw := newSSE(w)
	defer sw.close()
	base := chatResponse{ID: c.id, Object: "chat.completion.chunk", Created: c.now, Model: s.cfg.ModelID, SystemFingerprint: fingerprint}
	chunk := func(ch chatChoice) bool {
		b := base
		b.Choices = []chatChoice{ch}
		return sw.send(b)
	}
	prep := func(i int, j *job) {
		if c.req.useTools() {
			return // calls are parsed from the whole answer, then sent at once
		}
		role := "assistant" // the first delta of each choice names it
		j.emit = func(text string, lps []tokenLogprob) bool {
			ok := chunk(chatChoice{Index: i, Delta: &outMessage{Role: role, Content: &text}, Logprobs: chatLps(j.topLogprobs, lps)})
			role = ""
			return ok
		}
	}
	done := func(i int, res result) {
		finish := res.finish
		if c.req.useTools() {
			finish = c.streamAnswer(chunk, i, res)
		}
		b := base
		b.Choices, b.Timings = []chatChoice{{Index: i, Delta: &outMessage{}, FinishReason: &finish}}, timingsOf(res.stats)
		sw.send(b)
	}
	results, err := s.runChoices(r.Context(), c.job, c.n, choiceHooks{prep: prep, done: done})
	if err != nil {
		sw.fail(runError(err))
		return
	}
	if c.req.StreamOptions != nil && c.req.StreamOptions.IncludeUsage {
		var u usage
		for _, res := range results {
			addUsage(&u, len(c.job.prompt), res)
		}
		b := base
		b.Choices, b.Usage = []chatChoice{}, &u
		sw.send(b)
	}
	sw.done()
}

// streamAnswer sends a tools request's whole answer as one delta, each
// call numbered as streaming deltas are.
func (c *chatCall) streamAnswer(chunk func(chatChoice) bool, i int, res result) string {
	msg, finish := c.answer(res)
	for k := range msg.ToolCalls {
		msg.ToolCalls[k].Index = &k
	}
	chunk(chatChoice{Index: i, Delta: msg, Logprobs: chatLps(c.job.topLogprobs, res.logprobs)})
	return finish
}
