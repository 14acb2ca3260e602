package sample

import (
	"errors"
	"strings"
	"testing"

	"flowchat/engine/grammar"
)

// listVocab is a vocabulary of literal pieces; token 0 ends generation and
// token 1 is a control token.
type listVocab []string

func (v listVocab) Piece(id int32) []byte   { return []byte(v[id]) }
func (v listVocab) IsEOG(id int32) bool     { return id == 0 }
func (v listVocab) IsControl(id int32) bool { return id == 1 }
func (v listVocab) text(toks []int32) (s string) {
	for _, t := range toks {
		s += v[t]
	}
	return s
}

// testVocab spells 日 (E6 97 A5) whole and as three byte-fallback tokens,
// and has multi-character pieces that straddle the grammar's structure.
var testVocab = &listVocab{"</s>", "<|im_start|>", "{", "}", `"`, "a", "ab", `"a`, `a"}`, "\xe6", "\x97", "\xa5", "日", " ", "{\"", "b", "x", ""}

const quoted = `root ::= "{" "\"" [ab日]{0,6} "\"" "}"`

// TestGrammarStageOutputParses samples at temperature 1 from random
// logits, many seeds: every generation must be a whole sentence of the
// grammar ending in EOS, whatever the logits prefer.
func TestGrammarStageOutputParses(t *testing.T) {
	g, err := grammar.Parse(quoted)
	if err != nil {
		t.Fatal(err)
	}
	v := *testVocab
	sawBytes := false
	for seed := range uint64(300) {
		p := DefaultParams()
		p.Seed, p.Temperature, p.TopK, p.TopP, p.MinP, p.Grammar = seed, 1, 0, 1, 0, quoted
		s := mustNew(t, p, len(v), WithVocab(testVocab))
		var toks []int32
		for step := 0; ; step++ {
			if step > 40 {
				t.Fatalf("seed %d: no end after %q", seed, v.text(toks))
			}
			logits := randLogits(len(v), seed*100+uint64(step))
			logits[1] += 5 // the control token would be likely
			tok := s.Sample(logits)
			s.Accept(tok)
			if tok == 0 {
				break
			}
			toks = append(toks, tok)
			sawBytes = sawBytes || tok >= 9 && tok <= 11
		}
		m := g.NewMatcher()
		if st, ok := m.Advance(m.Start(), []byte(v.text(toks))); !ok || !st.Complete() {
			t.Fatalf("seed %d: %q is not a sentence of the grammar", seed, v.text(toks))
		}
	}
	if !sawBytes {
		t.Errorf("no generation used the byte-fallback tokens")
	}
}

// TestGrammarStageLazyIsExplained: Explain chooses what Sample does, and
// shows a grammar stage exactly when the unconstrained choice was refused.
func TestGrammarStageLazyIsExplained(t *testing.T) {
	v := *testVocab
	p := DefaultParams()
	p.Seed, p.Grammar = 7, quoted
	s := mustNew(t, p, len(v), WithVocab(testVocab))
	logits := make([]float32, len(v))
	logits[5] = 10 // "a": refused at the start
	e := s.Explain(logits)
	if e.Stages[0].Stage != "grammar" || e.RemovedBy(5) != "grammar" {
		t.Fatalf("refused token: stages %+v", e.Stages)
	}
	if tok := s.Sample(logits); tok != e.Chosen || (tok != 2 && tok != 14) {
		t.Fatalf("Sample = %d, Explain chose %d; want { or {\"", tok, e.Chosen)
	}
	s.Accept(2)
	logits = make([]float32, len(v))
	logits[4] = 10 // `"` is allowed after "{": no grammar stage
	e = s.Explain(logits)
	for _, st := range e.Stages {
		if st.Stage == "grammar" {
			t.Fatalf("grammar stage ran although the first choice was allowed")
		}
	}
	if tok := s.Sample(logits); tok != 4 || e.Chosen != 4 {
		t.Fatalf("Sample = %d, Explain %d, want 4", tok, e.Chosen)
	}
}

// TestGrammarEOS: end of generation is masked until the sentence is whole,
// and then it is the only choice when nothing may follow.
func TestGrammarEOS(t *testing.T) {
	v := *testVocab
	p := DefaultParams()
	p.Seed, p.Grammar, p.Decoding = 1, quoted, DecodingGreedy
	s := mustNew(t, p, len(v), WithVocab(testVocab))
	eos := make([]float32, len(v))
	eos[0] = 10
	for _, want := range []int32{2, 4, 4, 3, 0} { // { " " } then only EOS
		if tok := s.Sample(eos); tok != want && !(want == 2 && tok == 14) {
			t.Fatalf("got %d, want %d", tok, want)
		} else {
			s.Accept(tok)
		}
	}
}

func TestGrammarParams(t *testing.T) {
	p := DefaultParams()
	p.Grammar = `root ::= "a`
	err := p.Validate()
	if !errors.Is(err, ErrInvalidParams) || !strings.Contains(err.Error(), "grammar: line 1: unterminated string") {
		t.Errorf("Validate = %v", err)
	}
	p.Grammar = quoted
	if _, err := New(p, 4); !errors.Is(err, ErrInvalidParams) || !strings.Contains(err.Error(), "vocabulary") {
		t.Errorf("New without a vocabulary = %v", err)
	}
}

// BenchmarkGrammarMask times the full mask (the trie walk; warm: its
// transitions cached by an earlier mask, cold: a new cache) and a check of
// one token with a grammar over LLaMA's 32000-token SentencePiece vocabulary, in a
// permissive state (inside a JSON string: most tokens allowed) and a
// narrow one (after a key: only ":" and whitespace).
func BenchmarkGrammarMask(b *testing.B) {
	tk := llamaSPM(b)
	n := tk.VocabSize()
	g, err := grammar.Parse(grammar.JSONObject)
	if err != nil {
		b.Fatal(err)
	}
	for _, tc := range []struct{ name, prefix string }{{"in-string", `{"name": "Jo`}, {"after-key", `{"name"`}} {
		gs, err := newGrammarStage(grammar.JSONObject, tk, n)
		if err != nil {
			b.Fatal(err)
		}
		m := g.NewMatcher()
		st, ok := m.Advance(m.Start(), []byte(tc.prefix))
		if !ok {
			b.Fatal("prefix refused")
		}
		gs.m, gs.st = m, st
		logits := randLogits(n, 3)
		c := newCands(n)
		word := tk.Encode("hello", false, false)[0]
		b.Run("check/"+tc.name, func(b *testing.B) {
			for b.Loop() {
				gs.accepts(word)
			}
		})
		b.Run("mask/"+tc.name, func(b *testing.B) {
			allowed := 0
			cpu := cpuTime()
			for b.Loop() {
				c.load(logits)
				gs.mask(&c)
				allowed = len(c.data)
			}
			b.ReportMetric(float64(allowed), "allowed")
			if cpu := cpuTime() - cpu; cpu > 0 {
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
			}
		})
		// The first mask in a state computes its transitions.
		b.Run("mask-cold/"+tc.name, func(b *testing.B) {
			cpu := cpuTime()
			for b.Loop() {
				gs.cache = grammar.NewCache(gs.m, maxCachedStates)
				c.load(logits)
				gs.mask(&c)
			}
			if cpu := cpuTime() - cpu; cpu > 0 {
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
			}
		})
	}
}

// TestGrammarMaskEqualsCheck: the full mask (the trie walk over cached
// transitions) allows exactly the tokens that the one-token check
// (AdvanceByte) accepts, over LLaMA's 32000 pieces in several states, one
// stage and one cache for all of them.
func TestGrammarMaskEqualsCheck(t *testing.T) {
	tk := llamaSPM(t)
	n := tk.VocabSize()
	gs, err := newGrammarStage(grammar.JSONObject, tk, n)
	if err != nil {
		t.Fatal(err)
	}
	for _, prefix := range []string{``, `{"name": "Jo`, `{"name"`, `{"n": [1, 2.`, `{"é": "\u00`, "{\"k\": \"\xe6\x97", `{"name": "Jo`} {
		st, ok := gs.m.Advance(gs.start, []byte(prefix))
		if !ok {
			t.Fatalf("prefix %q refused", prefix)
		}
		gs.st = st
		c := newCands(n)
		c.load(make([]float32, n))
		gs.mask(&c)
		masked := make([]bool, n)
		for _, x := range c.data {
			masked[x.id] = true
		}
		allowed := 0
		for id := range int32(n) {
			if want := gs.accepts(id); masked[id] != want {
				t.Fatalf("prefix %q: token %d %q masked-in %v, check %v", prefix, id, tk.Piece(id), masked[id], want)
			} else if want {
				allowed++
			}
		}
		if allowed == 0 || allowed == n {
			t.Errorf("prefix %q: %d of %d tokens allowed", prefix, allowed, n)
		}
	}
}
