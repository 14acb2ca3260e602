package grammar

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestScratchEqualsHeap walks a tree of byte strings depth first, as the
// sampler's vocabulary trie walk does: each state AdvanceByteScratch
// derives in the arena must equal the one AdvanceByte derives on the
// heap, and releasing a child's arena must leave its parent intact.
func TestScratchEqualsHeap(t *testing.T) {
	for _, tc := range []struct {
		src      string
		prefixes []string
	}{
		{JSONObject, []string{"", `{"a": "x`, `{"k": [1, `}},
		{`root ::= "\"" [^"\\]* "\"" | [α-ω]+ "." | ("ab" | "c"){1,3}`, []string{"", `"`, "α", "ab"}},
	} {
		src := tc.src
		g := mustParse(t, src)
		heap, scr := g.NewMatcher(), g.NewMatcher()
		alphabet := []byte("{}[]\":, \\abtnu0123456789.-e\xce\xb1\xe6\x97\xa5")
		rng := rand.New(rand.NewPCG(1, 2))
		nodes := 0
		var walk func(h, s State, depth int)
		walk = func(h, s State, depth int) {
			if depth == 0 {
				return
			}
			mk := scr.Mark()
			for range 6 {
				c := alphabet[rng.IntN(len(alphabet))]
				hn, hok := heap.AdvanceByte(h, c)
				sn, sok := scr.AdvanceByteScratch(s, c)
				nodes++
				if hok != sok || !sameState(hn, sn) {
					t.Fatalf("%q byte %q: heap %v %+v, scratch %v %+v", src, c, hok, hn, sok, sn)
				}
				if hok {
					walk(hn, sn, depth-1)
				}
				scr.Release(mk)
				if !sameState(h, s) {
					t.Fatalf("%q: releasing a child changed its parent: %+v, want %+v", src, s, h)
				}
			}
		}
		for _, prefix := range tc.prefixes {
			h, ok1 := heap.Advance(heap.Start(), []byte(prefix))
			s, ok2 := scr.Advance(scr.Start(), []byte(prefix))
			if !ok1 || !ok2 {
				t.Fatalf("%q: prefix %q refused", src, prefix)
			}
			walk(h, s, 7)
		}
		if nodes < 500 {
			t.Errorf("%q: only %d nodes walked", src, nodes)
		}
	}
}

func sameState(a, b State) bool {
	return a.part == b.part && slices.EqualFunc(a.stacks, b.stacks, func(x, y stack) bool { return slices.Equal(x, y) })
}

// TestScratchAllocatesNothing: once the arena has grown, a walk of the
// same depth allocates nothing.
func TestScratchAllocatesNothing(t *testing.T) {
	g := mustParse(t, JSONObject)
	m := g.NewMatcher()
	st, ok := m.Advance(m.Start(), []byte(`{"name": "Jo`))
	if !ok {
		t.Fatal("prefix refused")
	}
	walk := func() {
		mk := m.Mark()
		s := st
		for _, c := range []byte(`hn Smith\" and \u00e9 more`) {
			if s, ok = m.AdvanceByteScratch(s, c); !ok {
				t.Fatalf("byte %q refused", c)
			}
		}
		m.Release(mk)
	}
	walk()
	if n := testing.AllocsPerRun(100, walk); n != 0 {
		t.Errorf("%v allocations per walk, want 0", n)
	}
}
