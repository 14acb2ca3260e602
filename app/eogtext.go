package main

import (
	"context"
	"strings"

	"flowchat/engine"
	"flowchat/engine/stoptext"
)

// Small models often spell their end-of-text marker out of ordinary
// pieces instead of sampling the token: TinyStories-656K writes
// "<|" "end" "_story" "|>" and only then its EOS token (whose text is
// "<|end_story|>"). The engine stops at the token; generate below also
// stops at the marker's text, so that it is never shown.

// eogTexts are the texts of the model's end-of-generation tokens
// ("<|end_story|>", "<|endoftext|>", "<|eot_id|>", "<|im_end|>",
// "<end_of_turn>", "</s>", …), longest first.
func eogTexts(m *engine.Model) []string {
	var out []string
	for id := range int32(m.Tok.VocabSize()) {
		if s := m.Tok.Token(id); m.Tok.IsEOG(id) && len(s) >= 3 && !strings.ContainsAny(s, " \n") {
			out = append(out, s)
		}
	}
	return out
}

// stopFilter passes text on to next, holding back what could be the start
// of a stop text (stoptext.Matcher); at a stop text it drops it and what
// follows, and stops.
type stopFilter struct {
	m    stoptext.Matcher
	next func(string) bool
}

// piece takes the next streamed text; false stops generation.
func (f *stopFilter) piece(s string) bool {
	if f.m.Hit() {
		return false
	}
	ok := true
	if out := f.m.Add(s); out != "" {
		ok = f.next(out)
	}
	return ok && !f.m.Hit()
}

// flush passes on the text held back when generation ended otherwise.
func (f *stopFilter) flush() {
	if t := f.m.Flush(); t != "" && !f.m.Hit() {
		f.next(t)
	}
}

// generate is sess.Generate that also ends, with stop reason "eog", where
// the text spells one of the model's end-of-generation tokens; that text
// is not passed to opt.OnPiece. With opt.IgnoreEOG it is plain Generate.
func generate(ctx context.Context, m *engine.Model, sess *engine.Session, ids []int32, opt engine.GenerateOptions) (engine.Stats, error) {
	stops := eogTexts(m)
	if opt.IgnoreEOG || len(stops) == 0 || opt.OnPiece == nil {
		return sess.Generate(ctx, ids, opt)
	}
	f := &stopFilter{m: stoptext.Matcher{Stops: stops}, next: opt.OnPiece}
	opt.OnPiece = f.piece
	st, err := sess.Generate(ctx, ids, opt)
	switch {
	case f.m.Hit():
		st.StopReason = "eog"
	case st.StopReason != "stopped":
		f.flush()
	}
	return st, err
}
