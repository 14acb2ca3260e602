// Package fake provides an in-memory ui.Engine for tests, screenshots and
// demos: it streams a scripted reply piece by piece and honours
// cancellation like a real engine.
package fake

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"flowchat/ui"
)

// Engine is a scripted ui.Engine. The zero value echoes the last message.
type Engine struct {
	Model string
	// Reply returns the whole reply to msgs; nil echoes the last message.
	Reply func(msgs []ui.Message) string
	// Delay is the pause before each piece, a stand-in for decode time.
	Delay time.Duration
	// Gate, when not nil, must yield a value before each piece is sent, so a
	// test can step the stream one piece at a time.
	Gate chan struct{}
	// Err is returned once the whole reply was streamed.
	Err error

	mu    sync.Mutex
	calls [][]ui.Message
}

var _ ui.Engine = (*Engine)(nil)

// ModelName returns Model, or "fake" when it is empty.
func (e *Engine) ModelName() string {
	if e.Model == "" {
		return "fake"
	}
	return e.Model
}

// Calls returns a copy of the conversations Generate was called with.
func (e *Engine) Calls() [][]ui.Message {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([][]ui.Message, len(e.calls))
	for i, c := range e.calls {
		out[i] = slices.Clone(c)
	}
	return out
}

// Generate streams the reply as Pieces. Token counts are piece counts.
func (e *Engine) Generate(ctx context.Context, msgs []ui.Message, onPiece func(string)) (ui.Stats, error) {
	start := time.Now()
	e.record(msgs)
	st := ui.Stats{PromptTokens: promptPieces(msgs)}
	for _, p := range Pieces(e.reply(msgs)) {
		if err := e.wait(ctx); err != nil {
			st.Total = time.Since(start)
			return st, err
		}
		if st.GenTokens == 0 {
			st.TimeToFirstToken = time.Since(start)
		}
		onPiece(p)
		st.GenTokens++
	}
	st.Total = time.Since(start)
	return st, e.Err
}

func (e *Engine) record(msgs []ui.Message) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls = append(e.calls, slices.Clone(msgs))
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
	var gate <-chan struct{} = e.Gate
	var timer <-chan time.Time
	if e.Delay > 0 {
		t := time.NewTimer(e.Delay)
		defer t.Stop()
		timer = t.C
	}
	if gate == nil && timer == nil {
		return nil
	}
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if timer != nil {
		select {
		case <-timer:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

func promptPieces(msgs []ui.Message) int {
	n := 0
	for _, m := range msgs {
		n += len(Pieces(m.Content))
	}
	return n
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
