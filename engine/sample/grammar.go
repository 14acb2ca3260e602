package sample

import (
	"fmt"
	"reflect"
	"sync"

	"flowchat/engine/grammar"
)

// The grammar stage (Params.Grammar, GBNF) keeps only tokens whose bytes
// continue a sentence of the grammar, and end-of-generation tokens only
// where the sentence may end. It runs lazily, as llama.cpp's
// common_sampler_sample does: the chain first runs unconstrained and the
// chosen token alone is checked (one walk of its bytes); only when the
// grammar refuses it is the step rerun from the same state (PRNG and
// mirostat rewound) with every token checked first, by a walk of a byte
// trie of the vocabulary that visits only the prefixes the grammar allows.

// EOGVocab is what the grammar stage needs beyond a Vocab: which tokens
// end generation. *tokenizer.Tokenizer implements it.
type EOGVocab interface {
	Vocab
	IsEOG(id int32) bool
}

// controlVocab is optional: control tokens render as nothing in the
// output, so the grammar never allows them (their text would be checked
// but not sent).
type controlVocab interface{ IsControl(id int32) bool }

type grammarStage struct {
	m       *grammar.Matcher
	cache   *grammar.Cache // m's transitions, for the mask's trie walk
	start   grammar.State
	st      grammar.State
	vx      *vocabIndex
	allowed []bool // [nVocab] scratch of the full mask
	pending bool   // Sample returned a token that Accept has not seen yet
}

func newGrammarStage(src string, v Vocab, nVocab int) (*grammarStage, error) {
	g, err := grammar.Parse(src)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalidParams, err)
	}
	ev, ok := v.(EOGVocab)
	if !ok {
		return nil, fmt.Errorf("%w: grammar needs a vocabulary with end-of-generation tokens (WithVocab)", ErrInvalidParams)
	}
	gs := &grammarStage{m: g.NewMatcher(), vx: indexVocab(ev, nVocab), allowed: make([]bool, nVocab)}
	gs.cache = grammar.NewCache(gs.m, maxCachedStates)
	gs.start = gs.m.Start()
	gs.st = gs.start
	return gs, nil
}

// accepts reports whether tok may come next.
func (gs *grammarStage) accepts(tok int32) bool {
	if gs.vx.eog[tok] {
		return gs.st.Complete()
	}
	if gs.vx.pieces[tok] == nil {
		return false
	}
	_, ok := gs.m.Advance(gs.st, gs.vx.pieces[tok])
	return ok
}

// advance moves past a token Sample chose. A token the grammar refuses
// (a caller accepting something else) leaves a dead state, in which only
// end of generation is allowed.
func (gs *grammarStage) advance(tok int32) {
	if gs.vx.eog[tok] {
		return
	}
	if st, ok := gs.m.Advance(gs.st, gs.vx.pieces[tok]); ok && gs.vx.pieces[tok] != nil {
		gs.st = st
		return
	}
	gs.st = grammar.State{}
}

// mask keeps the candidates the grammar allows. When it allows none (a
// dead state, or a grammar whose end the vocabulary cannot spell), the
// end-of-generation tokens stay, and failing those everything, so the
// chain never runs empty.
func (gs *grammarStage) mask(c *cands) {
	clear(gs.allowed)
	gs.cache.Trim()
	gs.vx.trie.walk(0, gs.cache.ID(gs.st), gs.cache, gs.allowed)
	complete := gs.st.Complete() || gs.st.Dead()
	keep := func(x cand) bool { return gs.allowed[x.id] || (complete && gs.vx.eog[x.id]) }
	n := 0
	for _, x := range c.data {
		if keep(x) {
			n++
		}
	}
	if n == 0 {
		complete = true
		for _, x := range c.data {
			if gs.vx.eog[x.id] {
				n++
			}
		}
	}
	if n > 0 {
		filterInPlace(c, keep)
	}
}

// vocabIndex is a vocabulary as the grammar sees it, built once per
// vocabulary and shared by every sampler over it.
type vocabIndex struct {
	pieces [][]byte // nil: never allowed (control tokens, empty pieces, EOG)
	eog    []bool
	trie   trie
}

var vocabIndexes sync.Map // comparable Vocab → *vocabIndex

func indexVocab(v EOGVocab, nVocab int) *vocabIndex {
	key := any(nil)
	if t := reflect.TypeOf(v); t.Comparable() {
		key = [2]any{v, nVocab}
		if vx, ok := vocabIndexes.Load(key); ok {
			return vx.(*vocabIndex)
		}
	}
	cv, _ := v.(controlVocab)
	vx := &vocabIndex{pieces: make([][]byte, nVocab), eog: make([]bool, nVocab)}
	for id := range int32(nVocab) {
		vx.eog[id] = v.IsEOG(id)
		if p := v.Piece(id); len(p) > 0 && !vx.eog[id] && (cv == nil || !cv.IsControl(id)) {
			vx.pieces[id] = p
		}
	}
	vx.trie = buildTrie(vx.pieces)
	if key != nil {
		vocabIndexes.Store(key, vx)
	}
	return vx
}

// trie holds the pieces by their bytes: node 0 is the root, a node's
// children are edges[first:first+n], sorted by byte.
type trie struct {
	nodes []trieNode
	edges []trieEdge
}

type trieNode struct {
	first, n int32
	toks     []int32 // tokens whose piece ends here
}

type trieEdge struct {
	b     byte
	child int32
}

func buildTrie(pieces [][]byte) trie {
	type building struct {
		kids map[byte]int32
		toks []int32
	}
	nodes := []building{{kids: map[byte]int32{}}}
	for id, p := range pieces {
		n := int32(0)
		for _, b := range p {
			next, ok := nodes[n].kids[b]
			if !ok {
				next = int32(len(nodes))
				nodes[n].kids[b] = next
				nodes = append(nodes, building{kids: map[byte]int32{}})
			}
			n = next
		}
		if len(p) > 0 {
			nodes[n].toks = append(nodes[n].toks, int32(id))
		}
	}
	t := trie{nodes: make([]trieNode, len(nodes))}
	for i, b := range nodes {
		t.nodes[i] = trieNode{first: int32(len(t.edges)), n: int32(len(b.kids)), toks: b.toks}
		for c := range 256 {
			if child, ok := b.kids[byte(c)]; ok {
				t.edges = append(t.edges, trieEdge{byte(c), child})
			}
		}
	}
	return t
}

// maxCachedStates bounds a grammar stage's transition cache (1 KiB a
// state); a mask inside a JSON string meets a few dozen states.
const maxCachedStates = 4096

// walk marks every token below node n whose bytes the grammar takes from
// the cached state id; it descends only into prefixes the grammar allows.
// Each edge is one lookup in the cache's transitions (computed on first
// use, then shared by every node and every later mask that meets the
// same state).
func (t *trie) walk(n int32, id int32, c *grammar.Cache, allowed []bool) {
	nd := &t.nodes[n]
	for _, e := range t.edges[nd.first : nd.first+nd.n] {
		next := c.Next(id, e.b)
		if next < 0 {
			continue
		}
		for _, tok := range t.nodes[e.child].toks {
			allowed[tok] = true
		}
		t.walk(e.child, next, c, allowed)
	}
}
