package sample

import (
	"math"
	"math/rand/v2"
	"testing"
)

func dryOn(toks []int32, nVocab int, brk breakers, p dryParams) []float32 {
	c := loaded(make([]float32, nVocab))
	d := newDRYState(nVocab, brk)
	dry(c, toks, &d, p)
	out := make([]float32, nVocab)
	for _, x := range c.data {
		out[x.id] = x.logit
	}
	return out
}

// The example of llama.cpp's comment: context "a b c c b c y a b c". The
// suffix "a b c" also occurs at the start followed by "c" (3 -> 4), "b c"
// before "y" (2 -> 3), "c" before "b" (1 -> 2, under the allowed length).
func TestDRYExample(t *testing.T) {
	const a, b, c, y = 0, 1, 2, 3
	toks := []int32{a, b, c, c, b, c, y, a, b, c}
	p := dryParams{multiplier: 0.8, base: 1.75, allowed: 2, lastN: -1}
	got := dryOn(toks, 5, breakers{}, p)
	want := []float32{0, 0, -0.8 * 1.75, -0.8, 0}
	for i := range want {
		if math.Abs(float64(got[i]-want[i])) > 1e-6 {
			t.Errorf("token %d: logit %g, want %g", i, got[i], want[i])
		}
	}
	// allowed length 1: b now extends a repeat of 1 -> exponent 0.
	p.allowed = 1
	got = dryOn(toks, 5, breakers{}, p)
	want = []float32{0, -0.8, -0.8 * 1.75 * 1.75, -0.8 * 1.75, 0}
	for i := range want {
		if math.Abs(float64(got[i]-want[i])) > 1e-5 {
			t.Errorf("allowed 1: token %d: logit %g, want %g", i, got[i], want[i])
		}
	}
	// dry_penalty_last_n 4 sees only "c y a b c"[1:] = "y a b c": no repeat.
	p = dryParams{multiplier: 0.8, base: 1.75, allowed: 2, lastN: 4}
	for i, l := range dryOn(toks, 5, breakers{}, p) {
		if l != 0 {
			t.Errorf("last_n 4: token %d penalized (%g)", i, l)
		}
	}
}

// A breaker caps how far back a repeat can reach, and is never penalized
// itself.
func TestDRYBreaker(t *testing.T) {
	const a, b, c, x = 0, 1, 2, 3
	toks := []int32{a, b, c, x, a, b, c, x, a, b}
	p := dryParams{multiplier: 1, base: 2, allowed: 2, lastN: -1}
	// Without breakers "a b c x a b" repeats: c extends a repeat of 6.
	got := dryOn(toks, 4, breakers{}, p)
	if want := float32(-16); got[c] != want {
		t.Errorf("no breaker: c logit %g, want %g", got[c], want)
	}
	// x breaks: the repeat is only "a b" (2 tokens back to the breaker).
	got = dryOn(toks, 4, breakers{x: {nil}}, p)
	if want := float32(-1); got[c] != want {
		t.Errorf("breaker: c logit %g, want %g", got[c], want)
	}
	// A two-token breaker "x a" (head x, tail a): the repeat may only use
	// the tokens after the whole breaker, "b", under the allowed length.
	got = dryOn(toks, 4, breakers{x: {{a}}}, p)
	for tok, l := range got {
		if l != 0 {
			t.Errorf("two-token breaker: token %d penalized (%g)", tok, l)
		}
	}
	// A tail that does not match ("x c") does not break.
	got = dryOn(toks, 4, breakers{x: {{c}}}, p)
	if want := float32(-16); got[c] != want {
		t.Errorf("unmatched two-token breaker: c logit %g, want %g", got[c], want)
	}
	// Single-token breakers are exempt even when they extend a repeat.
	toks = []int32{a, b, x, a, b}
	got = dryOn(toks, 4, breakers{x: {nil}}, p)
	if got[x] != 0 {
		t.Errorf("breaker token penalized: %g", got[x])
	}
}

// naiveRepeats is the plain twin of suffixRepeats: for every earlier end
// position j, the longest common suffix of toks[:j+1] and toks, capped.
func naiveRepeats(last []int32, limit int) []int32 {
	n := len(last)
	rep := make([]int32, n)
	for j := 0; j < n-1; j++ {
		m := 0
		for m <= j && last[j-m] == last[n-1-m] {
			m++
		}
		rep[j] = int32(min(m, limit))
	}
	return rep
}

func TestDRYSuffixRepeatsMatchesNaive(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	d := newDRYState(4, breakers{})
	for trial := 0; trial < 2000; trial++ {
		n := 2 + r.IntN(60)
		last := make([]int32, n)
		alphabet := 1 + r.IntN(3)
		for i := range last {
			last[i] = int32(r.IntN(alphabet))
		}
		limit := 1 + r.IntN(n)
		d.suffixRepeats(last, limit)
		want := naiveRepeats(last, limit)
		for i := 0; i < n-1; i++ {
			if d.repeat[i] != want[i] {
				t.Fatalf("%v limit %d: repeat[%d] = %d, naive %d", last, limit, i, d.repeat[i], want[i])
			}
		}
	}
}

type fakeVocab struct {
	pieces []string
	ids    map[string][]int32
}

func (v fakeVocab) Piece(id int32) []byte { return []byte(v.pieces[id]) }
func (v fakeVocab) Encode(text string, addSpecial, parseSpecial bool) []int32 {
	return v.ids[text]
}

func TestDRYBreakersFromVocab(t *testing.T) {
	v := fakeVocab{
		pieces: []string{"a", "b", "c", "xa", "ab", "zab"},
		ids:    map[string][]int32{"b": {1}},
	}
	b := buildBreakers([]string{"ab"}, v, len(v.pieces))
	if !b.singleToken(4) || !b.singleToken(5) {
		t.Errorf("tokens containing the breaker should break alone: %v", b)
	}
	for _, head := range []int32{0, 3} { // "a" and "xa" end with "a", the rest "b" is token 1
		if tails := b[head]; len(tails) != 1 || len(tails[0]) != 1 || tails[0][0] != 1 {
			t.Errorf("head %d: tails %v, want [[1]]", head, tails)
		}
	}
	if _, ok := b[1]; ok {
		t.Errorf("b alone is not a breaker: %v", b[1])
	}
	// Without a Tokenizer only whole breakers count.
	b = buildBreakers([]string{"ab"}, struct{ Vocab }{v}, len(v.pieces))
	if len(b) != 2 || !b.singleToken(4) || !b.singleToken(5) {
		t.Errorf("vocab without tokenizer: %v", b)
	}
}

func TestDRYThroughSampler(t *testing.T) {
	p := DefaultParams()
	p.Seed = 9
	p.Decoding = DecodingGreedy
	p.DRYMultiplier, p.DRYBase, p.DRYAllowedLength = 0.8, 1.75, 2
	s, err := New(p, 5, WithBreakerTokens([][]int32{{4}}))
	if err != nil {
		t.Fatal(err)
	}
	for _, tok := range []int32{0, 1, 2, 3, 0, 1} {
		s.Accept(tok)
	}
	// greedy would continue the loop with 2 (logit 1.0); DRY takes
	// 0.8*1.75^0 from it (repeat "0 1" of length 2), so 3 (0.5) wins.
	if tok := s.Sample([]float32{0, 0, 1, 0.5, 0}); tok != 3 {
		t.Errorf("DRY greedy chose %d, want 3", tok)
	}
}
