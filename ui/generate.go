package ui

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
)

// send starts a reply to the composer's text. Enter while a reply is being
// generated does nothing, so the text stays for the next turn.
func (c *chatScreen) send() {
	text := strings.TrimSpace(c.input.Text)
	if text == "" || c.busy() {
		return
	}
	c.input.SetText("")
	c.history = append(c.history, Message{Role: RoleUser, Content: text})
	c.addMessage(RoleUser, "You", text)
	reply := c.addMessage(RoleAssistant, c.engine.ModelName(), "")
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	c.setBusy(true)
	c.speed.SetText("generating…")
	go c.generate(ctx, slices.Clone(c.history), reply)
}

// generate runs on its own goroutine: it touches no widget, only post.
func (c *chatScreen) generate(ctx context.Context, msgs []Message, reply *messageView) {
	s := &stream{post: c.post, show: func(text string) { c.showPiece(reply, text) }}
	stats, err := c.engine.Generate(ctx, msgs, s.add)
	text := s.close()
	stopped := ctx.Err() != nil
	c.post(func() { c.finish(reply, text, stats, err, stopped) })
}

// showPiece renders the reply so far, following it if it was in view.
func (c *chatScreen) showPiece(reply *messageView, text string) {
	follow := c.atBottom()
	reply.SetMarkdown(text)
	if follow {
		c.scroll.ScrollToBottom()
	}
}

// finish shows the end of a reply: its final text, stats, and why it ended
// if that was not the engine finishing normally.
func (c *chatScreen) finish(reply *messageView, text string, st Stats, err error, stopped bool) {
	c.cancel()
	c.cancel = nil
	c.setBusy(false)
	if text == "" {
		reply.SetMarkdown("*no reply*")
	} else {
		c.showPiece(reply, text)
		c.history = append(c.history, Message{Role: RoleAssistant, Content: text})
	}
	footer := formatStats(st)
	switch {
	case stopped:
		footer += " · stopped"
	case err != nil && !errors.Is(err, context.Canceled):
		reply.SetError(err)
	}
	reply.SetFooter(footer)
	c.speed.SetText(speedText(st, err, stopped))
	c.focusComposer()
}

// speedText is the status line's right side after a reply.
func speedText(st Stats, err error, stopped bool) string {
	switch {
	case stopped:
		return "stopped"
	case err != nil:
		return "error"
	}
	if v, ok := genSpeed(st); ok {
		return formatTokPerSec(v)
	}
	return ""
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
