package ui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"flowchat/app/store"
)

// generation is a reply being generated. The UI goroutine owns it; the
// generating goroutine reads only what it was given when it started.
type generation struct {
	conv   *store.Conversation
	parent string        // the user turn it answers
	reply  store.Message // ID, Role, Model, Created; Content comes at the end
	cancel context.CancelFunc
	text   string // the reply so far, as last shown
	// journal is what the reply's journal records of conv: its ID, title
	// and the question, copied on the UI goroutine.
	journal *store.Conversation
}

// send starts a reply to the composer's text. Enter while a reply is being
// generated does nothing, so the text stays for the next turn.
func (c *chatView) send() {
	text := strings.TrimSpace(c.input.Text)
	if text == "" || c.a.busy() {
		return
	}
	if c.a.engine == nil {
		c.setBanner("No model is loaded: load one in the Model tab, then send again.")
		return
	}
	conv := c.a.ensureConv()
	u := conv.Add(conv.Leaf(), store.Message{Role: RoleUser, Content: text})
	c.input.SetText("")
	c.a.saveConv(conv, nil)
	c.a.side.refresh()
	c.title.SetText(titleOf(conv))
	c.a.startReply(conv, u.ID)
}

// regenerate answers the turn before assistant message id again, as a new
// version beside it.
func (a *App) regenerate(id string) {
	m := a.conv.Lookup(id)
	if m == nil || a.busy() || a.engine == nil {
		return
	}
	a.startReply(a.conv, m.Parent)
}

// editAndResend adds text as a new version of user message id and answers
// it; the earlier version stays reachable with ‹ ›.
func (a *App) editAndResend(id, text string) {
	m := a.conv.Lookup(id)
	text = strings.TrimSpace(text)
	if m == nil || text == "" || a.busy() {
		return
	}
	if a.engine == nil {
		a.chat.setBanner("No model is loaded: load one in the Model tab, then send again.")
		return
	}
	u := a.conv.Add(m.Parent, store.Message{Role: RoleUser, Content: text})
	a.saveConv(a.conv, nil)
	a.startReply(a.conv, u.ID)
}

// switchBranch shows the previous or next version of message id.
func (a *App) switchBranch(id string, delta int) {
	if a.busy() {
		return
	}
	sibs, i := a.conv.Siblings(id)
	if j := i + delta; i >= 0 && j >= 0 && j < len(sibs) {
		a.conv.Select(sibs[j])
		a.saveConv(a.conv, nil)
		a.chat.render()
		a.refreshContext()
		a.requestExplain()
	}
}

// startReply generates a reply to user turn parent of conv.
func (a *App) startReply(conv *store.Conversation, parent string) {
	conv.Select(parent)
	conv.Engine, conv.Model = "", ""
	if _, ok := a.engine.(RemoteEngine); ok {
		conv.Engine, conv.Model = engineName(a.engine), a.engine.Info().Name
	}
	msgs, ids := requestMessages(conv, parent)
	ctx, cancel := context.WithCancel(context.Background())
	g := &generation{conv: conv, parent: parent, cancel: cancel, reply: store.Message{
		ID: store.NewID(), Parent: parent, Role: RoleAssistant, Model: a.engine.Info().Name, Engine: engineName(a.engine), Created: time.Now().UTC(),
	}}
	g.journal = &store.Conversation{ID: conv.ID, Title: conv.Title}
	if q := conv.Lookup(parent); q != nil {
		g.journal.Messages = []store.Message{*q}
	}
	if a.gens == nil {
		a.gens = map[*store.Conversation]*generation{}
	}
	a.gens[conv] = g
	a.chat.outside = map[string]bool{}
	a.chat.setBanner("")
	a.chat.render()
	a.status.SetBusy("processing the prompt…")
	req := Request{Messages: msgs, Sampling: a.sampling.Clone().FitContext(a.engine.ContextSize())}
	if a.settings.ExplainLive {
		req.OnExplain = a.explainer.liveFor(g)
	}
	req.OnPrefill = a.prefillReporter(g)
	req.OnWait = func(reason string) {
		a.post(func() {
			if a.cur() == g {
				a.status.SetBusy(reason)
			}
		})
	}
	go a.generate(ctx, g, a.engine, req, ids, policyOf(conv))
}

// prefillReporter passes the prompt's progress from the generating
// goroutine to the status bar with at most one post waiting, the newest
// numbers winning, so a long prompt evaluated in many chunks never builds
// a queue.
func (a *App) prefillReporter(g *generation) func(done, total int) {
	var mu sync.Mutex
	var done, total int
	pending := false
	show := func() {
		mu.Lock()
		d, t := done, total
		pending = false
		mu.Unlock()
		if a.cur() == g && g.text == "" {
			a.status.SetPrefill(d, t)
		}
	}
	return func(d, t int) {
		mu.Lock()
		done, total = d, t
		post := !pending
		pending = true
		mu.Unlock()
		if post {
			a.post(show)
		}
	}
}

// stopReply cancels the reply being generated; the engine returns soon
// after and finishReply shows what was produced.
func (a *App) stopReply() {
	if g := a.cur(); g != nil {
		g.cancel()
	}
}

// generate runs on its own goroutine: it touches no widget, only post.
func (a *App) generate(ctx context.Context, g *generation, e Engine, req Request, ids []string, policy string) {
	if policy == store.PolicyShift {
		req.ContextShift = true
		policy = store.PolicyDropOldest // a prompt that does not fit leaves out its oldest turns
	}
	msgs, dropped, err := fitContext(e, req.Messages, ids, policy, req.Sampling.MaxTokens)
	if err != nil {
		a.post(func() { a.finishReply(g, "", Stats{}, err, nil) })
		return
	}
	if len(dropped) > 0 {
		a.post(func() { a.markOutside(g, dropped) })
	}
	req.Messages = msgs
	j, jerr := a.storage.BeginReply(g.journal, g.reply)
	if jerr != nil {
		a.post(func() { a.status.SetMessage("the reply is not journalled: "+jerr.Error(), true) })
	}
	s := &stream{post: a.post, show: func(text string) { a.showPiece(g, text) }}
	onPiece := func(p string) {
		s.add(p)
		if j != nil {
			j.Append(p)
		}
	}
	st, err := e.Generate(ctx, req, onPiece)
	text := s.close()
	var jr journal
	if j != nil {
		jr = j
	}
	a.post(func() { a.finishReply(g, text, st, err, jr) })
}

// showPiece renders the reply so far, following it if it was in view.
func (a *App) showPiece(g *generation, text string) {
	if a.gens[g.conv] != g {
		return // finished: finishReply showed the whole text
	}
	g.text = text
	v := a.chat.pending
	if v == nil || a.conv != g.conv {
		return // another conversation is shown: render() picks g.text up
	}
	a.status.SetBusy("generating…")
	follow := a.chat.atBottom()
	v.SetMarkdown(text)
	if follow {
		a.chat.scroll.ScrollToBottom()
	}
}

// finishReply stores the reply with its stats and why it ended, saves the
// conversation and then drops the journal.
func (a *App) finishReply(g *generation, text string, st Stats, err error, j journal) {
	g.cancel()
	if a.gens[g.conv] == g {
		delete(a.gens, g.conv)
	}
	reply := g.reply
	reply.Content = text
	reply.Stats = toStoreStats(st)
	reply.Interrupted = st.StopReason == StopCancelled
	if err != nil && !errors.Is(err, context.Canceled) {
		reply.Error = err.Error()
	}
	if text == "" && reply.Error != "" && st.GenTokens == 0 && st.PromptTokens == 0 {
		reply.Stats = nil // nothing ran: only the error is worth showing
	}
	g.conv.Add(g.parent, reply)
	var then func()
	if j != nil {
		then = func() { j.Discard() }
	}
	if slices.Contains(a.convs, g.conv) {
		a.saveConv(g.conv, then)
	} else if then != nil {
		then() // deleted while the reply streamed: keep nothing
	}
	a.side.refresh()
	if a.conv != g.conv {
		return // a conversation in the background: shown when it is opened
	}
	a.status.SetBusy("")
	a.status.SetSpeed(speedText(st, err))
	if st.Shifted > 0 {
		a.chat.setBanner(fmt.Sprintf("The context filled up while replying: %d of the oldest tokens after the start left it (context shift), so the model no longer sees them.", st.Shifted))
	}
	if st.StopReason == StopContext {
		a.chat.setBanner("The context window filled up and the reply was cut off. Start a new chat, or choose “Leave out the oldest turns” under System prompt & context.")
	}
	a.chat.render()
	a.chat.focusComposer()
	a.refreshContext()
	a.requestExplain()
}

// journal is the part of store.Journal finishReply uses.
type journal interface{ Discard() error }

// markOutside notes which turns the request left out.
func (a *App) markOutside(g *generation, ids []string) {
	if a.conv != g.conv {
		return
	}
	for _, id := range ids {
		a.chat.outside[id] = true
		if v := a.chat.views[id]; v != nil {
			v.SetNote(outsideNote)
		}
	}
	a.chat.setBanner(fmt.Sprintf("The conversation no longer fits the context window: %d earlier turn(s) were left out of this request.", len(ids)))
}

// speedText is the status bar's speed after a reply.
func speedText(st Stats, err error) string {
	switch {
	case st.StopReason == StopCancelled:
		return "stopped"
	case err != nil:
		return "error"
	}
	if v, ok := genSpeed(st); ok {
		return formatTokPerSec(v)
	}
	return ""
}

// ErrContextFull explains a request that cannot fit the context window.
var ErrContextFull = errors.New("the conversation does not fit the context window")

// replyRoom is the share of the context kept free for the reply when the
// oldest turns are left out: 1/replyRoom of the window.
const replyRoom = 8

// fitContext applies the context policy: under "stop" a prompt that does
// not fit is an error that says what to do; under "drop-oldest" the
// oldest turns after the system prompt are left out until the prompt and
// room for a reply fit, and their ids are returned.
func fitContext(e Engine, msgs []Message, ids []string, policy string, maxTokens int) ([]Message, []string, error) {
	size := e.ContextSize()
	n, err := e.CountTokens(msgs)
	if err != nil {
		return nil, nil, err
	}
	room := size / replyRoom
	if maxTokens > 0 {
		room = min(room, maxTokens)
	}
	if n < size && (policy != store.PolicyDropOldest || n+room <= size) {
		return msgs, nil, nil
	}
	if policy != store.PolicyDropOldest {
		return nil, nil, fmt.Errorf("%w: it is %d tokens and the model's context holds %d. Start a new chat, edit an earlier message, load the model with a longer context, or choose “Leave out the oldest turns”", ErrContextFull, n, size)
	}
	return dropOldest(e, msgs, ids, size-room)
}

// dropOldest removes turns after the system prompt, oldest first, until
// the prompt is at most limit tokens; the last message always stays.
func dropOldest(e Engine, msgs []Message, ids []string, limit int) ([]Message, []string, error) {
	first := 0
	if len(msgs) > 0 && msgs[0].Role == RoleSystem {
		first = 1
	}
	var dropped []string
	for {
		n, err := e.CountTokens(msgs)
		if err != nil {
			return nil, nil, err
		}
		if n <= limit {
			return msgs, dropped, nil
		}
		if len(msgs)-first <= 1 {
			return nil, nil, fmt.Errorf("%w: the last message alone is %d tokens; the context holds %d", ErrContextFull, n, e.ContextSize())
		}
		// Drop a whole turn: the oldest message and the replies after it,
		// so that the request still starts with a user message (strict
		// chat templates require it).
		n = 1
		for first+n < len(msgs)-1 && msgs[first+n].Role != RoleUser {
			n++
		}
		dropped = append(dropped, ids[first:first+n]...)
		msgs = append(msgs[:first:first], msgs[first+n:]...)
		ids = append(ids[:first:first], ids[first+n:]...)
	}
}

// refreshContext counts the tokens of the branch shown, off the UI
// goroutine, and shows the result.
func (a *App) refreshContext() {
	e, conv := a.engine, a.conv
	if e == nil || conv == nil {
		a.chat.setContext(0, 0)
		return
	}
	msgs, _ := requestMessages(conv, "")
	size := e.ContextSize()
	go func() {
		n, err := e.CountTokens(msgs)
		if err != nil {
			return
		}
		a.post(func() {
			if a.conv == conv && a.engine == e {
				a.chat.setContext(n, size)
			}
		})
	}()
}

func toStoreStats(s Stats) *store.Stats {
	return &store.Stats{
		PromptTokens: s.PromptTokens, CachedTokens: s.CachedTokens, GenTokens: s.GenTokens,
		TTFTMillis: s.TimeToFirstToken.Milliseconds(), TotalMillis: s.Total.Milliseconds(), StopReason: s.StopReason,
		Drafted: s.Drafted, DraftAccepted: s.DraftAccepted,
	}
}

func fromStoreStats(s *store.Stats) Stats {
	return Stats{
		PromptTokens: s.PromptTokens, CachedTokens: s.CachedTokens, GenTokens: s.GenTokens,
		TimeToFirstToken: time.Duration(s.TTFTMillis) * time.Millisecond, Total: time.Duration(s.TotalMillis) * time.Millisecond,
		StopReason: s.StopReason, Drafted: s.Drafted, DraftAccepted: s.DraftAccepted,
	}
}

// stream collects the pieces of one reply from the generating goroutine
// and schedules at most one render at a time: when the UI is slower than
// the engine, intermediate states are skipped, never queued.
type stream struct {
	post func(func())
	show func(text string) // runs on the UI goroutine

	mu      sync.Mutex
	text    strings.Builder
	pending bool // a render is posted and has not run yet
	closed  bool // Generate returned; late pieces are dropped
}

func (s *stream) add(piece string) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.text.WriteString(piece)
	schedule := !s.pending
	s.pending = true
	s.mu.Unlock()
	if schedule {
		s.post(s.render)
	}
}

func (s *stream) render() {
	s.mu.Lock()
	text := s.text.String()
	s.pending = false
	s.mu.Unlock()
	s.show(text)
}

// close stops accepting pieces and returns the whole text.
func (s *stream) close() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return s.text.String()
}
