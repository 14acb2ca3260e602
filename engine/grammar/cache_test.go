package grammar

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCacheEqualsAdvance walks random byte strings depth first, as the
// sampler's vocabulary trie walk does: the state each cached transition
// leads to must equal the one AdvanceByte derives, refusals included,
// and equal states must share an id.
func TestCacheEqualsAdvance(t *testing.T) {
	for _, tc := range []struct {
		src      string
		prefixes []string
	}{
		{JSONObject, []string{"", `{"a": "x`, `{"k": [1, `}},
		{`root ::= "\"" [^"\\]* "\"" | [α-ω]+ "." | ("ab" | "c"){1,3}`, []string{"", `"`, "α", "ab"}},
	} {
		g := mustParse(t, tc.src)
		m := g.NewMatcher()
		c := NewCache(g.NewMatcher(), 1<<20)
		alphabet := []byte("{}[]\":, \\abtnu0123456789.-e\xce\xb1\xe6\x97\xa5")
		rng := rand.New(rand.NewPCG(1, 2))
		nodes, refusals := 0, 0
		var walk func(s State, id int32, depth int)
		walk = func(s State, id int32, depth int) {
			if depth == 0 {
				return
			}
			for range 6 {
				b := alphabet[rng.IntN(len(alphabet))]
				want, ok := m.AdvanceByte(s, b)
				next := c.Next(id, b)
				nodes++
				if !ok {
					refusals++
					if next != -1 {
						t.Fatalf("%q byte %q: refused by AdvanceByte, cache gives state %d", tc.src, b, next)
					}
					continue
				}
				if next < 0 || !sameState(c.State(next), want) || c.ID(want) != next {
					t.Fatalf("%q byte %q: cache state %d %+v, AdvanceByte %+v", tc.src, b, next, c.State(max(next, 0)), want)
				}
				walk(want, next, depth-1)
			}
		}
		for _, prefix := range tc.prefixes {
			s, ok := m.Advance(m.Start(), []byte(prefix))
			if !ok {
				t.Fatalf("%q: prefix %q refused", tc.src, prefix)
			}
			walk(s, c.ID(s), 7)
		}
		if nodes < 500 || refusals == 0 || c.Len() >= nodes-refusals {
			t.Errorf("%q: %d transitions, %d refused, %d states: the walk did not exercise the cache", tc.src, nodes, refusals, c.Len())
		}
	}
}

func sameState(a, b State) bool {
	return a.part == b.part && slices.EqualFunc(a.stacks, b.stacks, func(x, y stack) bool { return slices.Equal(x, y) })
}

// TestCacheTrim: past its bound the cache starts over, and still answers.
func TestCacheTrim(t *testing.T) {
	g := mustParse(t, JSONObject)
	m := g.NewMatcher()
	c := NewCache(m, 2)
	id := c.ID(m.Start())
	for _, b := range []byte(`{"a": 1`) {
		if id = c.Next(id, b); id < 0 {
			t.Fatalf("byte %q refused", b)
		}
	}
	if c.Len() <= 2 {
		t.Fatalf("%d states after 7 bytes", c.Len())
	}
	c.Trim()
	if c.Len() != 0 {
		t.Fatalf("%d states after Trim", c.Len())
	}
	id = c.ID(m.Start())
	if id != 0 || c.Next(id, '{') < 0 || c.Next(id, 'x') != -1 {
		t.Error("the trimmed cache answers wrongly")
	}
}

// TestCacheWarmAllocatesNothing: transitions seen before cost no
// allocation.
func TestCacheWarmAllocatesNothing(t *testing.T) {
	g := mustParse(t, JSONObject)
	m := g.NewMatcher()
	c := NewCache(m, 1024)
	st, ok := m.Advance(m.Start(), []byte(`{"name": "Jo`))
	if !ok {
		t.Fatal("prefix refused")
	}
	root := c.ID(st)
	walk := func() {
		id := root
		for _, b := range []byte(`hn Smith\" and \u00e9 more`) {
			if id = c.Next(id, b); id < 0 {
				t.Fatalf("byte %q refused", b)
			}
		}
	}
	walk()
	if n := testing.AllocsPerRun(100, walk); n != 0 {
		t.Errorf("%v allocations per warm walk, want 0", n)
	}
}
