package tokenizer

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// ErrUnsupported is wrapped when a vocabulary's model or pre-tokenizer type
// is not implemented.
var ErrUnsupported = errors.New("tokenizer: unsupported")

// ErrVocab is wrapped when a vocabulary is malformed.
var ErrVocab = errors.New("tokenizer: malformed vocabulary")

// TokenType is a tokenizer.ggml.token_type value.
type TokenType int32

// Token types as GGUF stores them.
const (
	TypeUndefined   TokenType = 0
	TypeNormal      TokenType = 1
	TypeUnknown     TokenType = 2
	TypeControl     TokenType = 3
	TypeUserDefined TokenType = 4
	TypeUnused      TokenType = 5
	TypeByte        TokenType = 6
)

// attr is llama.cpp's llama_token_attr bit set.
type attr uint16

const (
	attrUnknown attr = 1 << iota
	attrUnused
	attrNormal
	attrControl
	attrUserDefined
	attrByte
	attrNormalized
	attrLStrip
	attrRStrip
	attrSingleWord
)

// OptID is a token id from metadata; Set is false when the key is absent
// (the model type's default applies then).
type OptID struct {
	ID  uint64
	Set bool
}

// ID returns a present OptID.
func ID(id uint64) OptID { return OptID{ID: id, Set: true} }

// OptBool is a flag from metadata; Set is false when the key is absent.
type OptBool struct {
	Value bool
	Set   bool
}

// Bool returns a present OptBool.
func Bool(b bool) OptBool { return OptBool{Value: b, Set: true} }

// SpecialIDs are the tokenizer.ggml.*_token_id keys.
type SpecialIDs struct {
	BOS, EOS, EOT, EOM, UNK, SEP, PAD, MASK        OptID
	FIMPre, FIMSuf, FIMMid, FIMPad, FIMRep, FIMSep OptID
}

// Vocab is everything a tokenizer is built from: the GGUF tokenizer.ggml.*
// metadata as plain Go values.
type Vocab struct {
	Model  string    // tokenizer.ggml.model: "llama", "gpt2", "bert", "t5"
	Pre    string    // tokenizer.ggml.pre (BPE pre-tokenizer name)
	Name   string    // general.name: llama.cpp keys some token attributes on it
	Tokens []string  // token texts by id
	Scores []float32 // optional, one per token
	Types  []int32   // optional TokenType per token; absent means all normal
	Merges []string  // BPE merges "left right", highest priority first

	Special                SpecialIDs
	AddBOS, AddEOS, AddSep OptBool
	AddSpacePrefix         OptBool
	RemoveExtraWhitespaces OptBool
	PrecompiledCharsmap    []byte // t5/UGM normalizer (optional)
}

type modelKind int

const (
	kindSPM modelKind = iota
	kindBPE
	kindWPM
	kindUGM
)

// noToken marks an absent special token (LLAMA_TOKEN_NULL).
const noToken = -1

// Tokenizer encodes text to token ids and back, as llama.cpp b4748 does.
// It is immutable after construction and safe for concurrent use.
type Tokenizer struct {
	kind   modelKind
	tokens []string
	scores []float32
	attrs  []attr
	toID   map[string]int32

	bos, eos, eot, eom, unk, sep, pad, mask int32
	fimPre, fimSuf, fimMid, fimPad, fimRep  int32
	fimSep                                  int32
	eog                                     map[int32]bool

	addBOS, addEOS, addSep bool
	addSpacePrefix         bool
	removeExtraWS          bool
	escapeWS, cleanSpaces  bool
	ignoreMerges           bool
	treatWSAsSuffix        bool
	special                []int32 // control/user-defined/unknown ids, longest text first
	pieces                 [][]byte
	maxTokenLen            int
	ranks                  map[[2]string]int32
	pre                    *preTokenizer
	ugm                    *ugmModel
}

// New builds a tokenizer from v.
func New(v Vocab) (*Tokenizer, error) {
	t := &Tokenizer{eog: map[int32]bool{}}
	if err := t.setModel(&v); err != nil {
		return nil, err
	}
	if err := t.loadTokens(&v); err != nil {
		return nil, err
	}
	if t.kind == kindBPE {
		t.loadMerges(v.Merges)
	}
	t.setSpecialIDs(&v.Special)
	t.setFlags(&v)
	t.detectSpecial()
	t.buildSpecialCache()
	t.buildPieces()
	t.applyNameAttrs(v.Name, v.Pre)
	if t.kind == kindUGM {
		u, err := newUGM(t, v.PrecompiledCharsmap)
		if err != nil {
			return nil, err
		}
		t.ugm = u
	}
	return t, nil
}

// setModel sets the model kind and llama.cpp's per-kind defaults.
func (t *Tokenizer) setModel(v *Vocab) error {
	t.eot, t.eom, t.sep, t.pad, t.mask = noToken, noToken, noToken, noToken, noToken
	t.fimPre, t.fimSuf, t.fimMid, t.fimPad, t.fimRep, t.fimSep = noToken, noToken, noToken, noToken, noToken, noToken
	t.escapeWS = true
	switch v.Model {
	case "llama":
		t.kind, t.bos, t.eos, t.unk = kindSPM, 1, 2, 0
		t.addSpacePrefix, t.addBOS = true, true
	case "bert":
		t.kind, t.bos, t.eos, t.unk = kindWPM, 101, noToken, 100
		t.sep, t.pad, t.mask = 102, 0, 103
		t.addBOS, t.addSep, t.cleanSpaces = true, true, true
	case "gpt2":
		t.kind, t.bos, t.eos, t.unk = kindBPE, 11, 11, noToken
		return t.setPre(v.Pre)
	case "t5":
		t.kind, t.bos, t.eos, t.unk, t.pad = kindUGM, noToken, 1, 2, 0
		t.addEOS = true
	default:
		return fmt.Errorf("%w: tokenizer model %q", ErrUnsupported, v.Model)
	}
	return nil
}

// setPre applies a BPE pre-tokenizer's regexes and flags.
func (t *Tokenizer) setPre(name string) error {
	p, ok := preTypes[name]
	if !ok {
		return fmt.Errorf("%w: pre-tokenizer %q", ErrUnsupported, name)
	}
	pre, err := newPreTokenizer(p.exprs)
	if err != nil {
		return fmt.Errorf("pre-tokenizer %q: %w", name, err)
	}
	t.pre = pre
	t.escapeWS = false
	t.cleanSpaces = !p.keepSpaces
	t.ignoreMerges = p.ignoreMerges
	t.addBOS = p.addBOS
	if p.noBOS {
		t.bos = noToken
	}
	return nil
}

func (t *Tokenizer) loadTokens(v *Vocab) error {
	n := len(v.Tokens)
	if n == 0 {
		return fmt.Errorf("%w: no tokens", ErrVocab)
	}
	if n > 1<<31-1 {
		return fmt.Errorf("%w: %d tokens", ErrVocab, n)
	}
	if v.Scores != nil && len(v.Scores) < n {
		return fmt.Errorf("%w: %d scores for %d tokens", ErrVocab, len(v.Scores), n)
	}
	if v.Types != nil && len(v.Types) < n {
		return fmt.Errorf("%w: %d token types for %d tokens", ErrVocab, len(v.Types), n)
	}
	t.tokens = make([]string, n)
	t.scores = make([]float32, n)
	t.attrs = make([]attr, n)
	t.toID = make(map[string]int32, n)
	for i, s := range v.Tokens {
		if s == "" {
			s = fmt.Sprintf("[EMPTY_%d]", i)
		}
		if j, dup := t.toID[s]; dup {
			return fmt.Errorf("%w: duplicate token %q has ids %d and %d", ErrVocab, s, j, i)
		}
		t.toID[s] = int32(i)
		t.tokens[i] = s
		t.maxTokenLen = max(t.maxTokenLen, len(s))
		if v.Scores != nil {
			t.scores[i] = v.Scores[i]
		}
		t.attrs[i] = attrNormal
		if v.Types != nil {
			t.attrs[i] = typeAttr(TokenType(v.Types[i]))
		}
	}
	return nil
}

func typeAttr(tt TokenType) attr {
	switch tt {
	case TypeUnknown:
		return attrUnknown
	case TypeUnused:
		return attrUnused
	case TypeNormal:
		return attrNormal
	case TypeControl:
		return attrControl
	case TypeUserDefined:
		return attrUserDefined
	case TypeByte:
		return attrByte
	}
	return 0
}

// loadMerges fills the BPE rank table. A merge splits at its first space
// after the first byte; the first occurrence of a pair keeps its rank.
func (t *Tokenizer) loadMerges(merges []string) {
	t.ranks = make(map[[2]string]int32, len(merges))
	for i, m := range merges {
		if len(m) < 2 {
			continue
		}
		p := strings.IndexByte(m[1:], ' ')
		if p < 0 {
			continue
		}
		key := [2]string{m[:p+1], m[p+2:]}
		if _, dup := t.ranks[key]; !dup {
			t.ranks[key] = int32(i)
		}
	}
}

// setSpecialIDs overrides the defaults with metadata ids in range; defaults
// out of range are disabled, as llama.cpp does.
func (t *Tokenizer) setSpecialIDs(s *SpecialIDs) {
	n := uint64(len(t.tokens))
	set := func(dst *int32, o OptID) {
		if *dst >= 0 && uint64(*dst) >= n {
			*dst = noToken
		}
		if o.Set && o.ID < n {
			*dst = int32(o.ID)
		}
	}
	set(&t.bos, s.BOS)
	set(&t.eos, s.EOS)
	set(&t.eot, s.EOT)
	set(&t.eom, s.EOM)
	set(&t.unk, s.UNK)
	set(&t.sep, s.SEP)
	set(&t.pad, s.PAD)
	set(&t.mask, s.MASK)
	set(&t.fimPre, s.FIMPre)
	set(&t.fimSuf, s.FIMSuf)
	set(&t.fimMid, s.FIMMid)
	set(&t.fimPad, s.FIMPad)
	set(&t.fimRep, s.FIMRep)
	set(&t.fimSep, s.FIMSep)
}

func (t *Tokenizer) setFlags(v *Vocab) {
	if v.AddSpacePrefix.Set {
		t.addSpacePrefix = v.AddSpacePrefix.Value
	}
	if v.RemoveExtraWhitespaces.Set {
		t.removeExtraWS = v.RemoveExtraWhitespaces.Value
	}
	if v.AddBOS.Set {
		t.addBOS = v.AddBOS.Value
	}
	if v.AddEOS.Set {
		t.addEOS = v.AddEOS.Value
	}
	if v.AddSep.Set {
		t.addSep = v.AddSep.Value
	}
}

// Texts llama.cpp b4748 recognises as end-of-turn / end-of-generation
// tokens when the metadata does not name them.
var (
	eotTexts = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<EOT>", "_<EOT>", "<｜end▁of▁sentence｜>"}
	eogTexts = []string{"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|eom_id|>", "<EOT>", "_<EOT>"}
)

// Texts of the fill-in-the-middle tokens when the metadata does not name
// them: b4748's, plus StarCoder/Granite's "<fim_prefix>" and CodeLlama's
// "▁<PRE>", which later llama.cpp recognises too.
var (
	fimPreTexts = []string{"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<｜fim▁begin｜>", "<PRE>", "▁<PRE>"}
	fimSufTexts = []string{"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<｜fim▁hole｜>", "<SUF>", "▁<SUF>"}
	fimMidTexts = []string{"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<｜fim▁end｜>", "<MID>", "▁<MID>"}
)

// detectSpecial finds EOT/EOM/FIM tokens by text, marks them control, marks
// control tokens named "unused" unused, and builds the end-of-generation set.
func (t *Tokenizer) detectSpecial() {
	t.detectByText(&t.eot, eotTexts)
	t.detectByText(&t.eom, []string{"<|eom_id|>"})
	t.detectByText(&t.fimPre, fimPreTexts)
	t.detectByText(&t.fimSuf, fimSufTexts)
	t.detectByText(&t.fimMid, fimMidTexts)
	t.detectByText(&t.fimPad, []string{"<|fim_pad|>", "<fim-pad>", "<PAD>"})
	t.detectByText(&t.fimRep, []string{"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>"})
	t.detectByText(&t.fimSep, []string{"<|file_sep|>"})
	for i, s := range t.tokens {
		if t.attrs[i]&attrControl != 0 && strings.Contains(s, "unused") {
			t.attrs[i] |= attrUnused
		}
	}
	for _, id := range []int32{t.fimPad, t.fimRep, t.fimSep} {
		if id != noToken {
			t.eog[id] = true
		}
	}
	for _, s := range eogTexts {
		if id, ok := t.toID[s]; ok {
			t.eog[id] = true
			t.attrs[id] |= attrControl
		}
	}
	for _, id := range []int32{t.eos, t.eot, t.eom} {
		if id != noToken {
			t.eog[id] = true
		}
	}
}

// detectByText sets *dst to the lowest id whose text is in texts when the
// metadata left it unset. (llama.cpp walks a hash map; ids are unambiguous
// in practice because a vocabulary holds at most one of these texts.)
func (t *Tokenizer) detectByText(dst *int32, texts []string) {
	if *dst != noToken {
		return
	}
	best := int32(noToken)
	for _, s := range texts {
		if id, ok := t.toID[s]; ok && (best == noToken || id < best) {
			best = id
		}
	}
	if best != noToken {
		*dst = best
		t.attrs[best] |= attrControl
	}
}

// buildSpecialCache lists the tokens matched as wholes in raw text,
// longest first (ties by id, where llama.cpp's unstable sort is arbitrary).
func (t *Tokenizer) buildSpecialCache() {
	for i := range t.tokens {
		if t.attrs[i]&(attrControl|attrUserDefined|attrUnknown) != 0 {
			t.special = append(t.special, int32(i))
		}
	}
	sort.SliceStable(t.special, func(a, b int) bool {
		return len(t.tokens[t.special[a]]) > len(t.tokens[t.special[b]])
	})
}

// applyNameAttrs sets the strip attributes llama.cpp derives from the
// model and pre-tokenizer names (after the piece cache, as llama.cpp does).
func (t *Tokenizer) applyNameAttrs(name, pre string) {
	name = strings.ToLower(name)
	switch {
	case containsAny(pre, "jina-v2-de", "jina-v2-es", "jina-v2-code"):
		if id, ok := t.toID["<mask>"]; ok {
			t.attrs[id] |= attrLStrip
		}
	case containsAny(name, "phi-3", "phi3"):
		for _, id := range t.special {
			t.attrs[id] |= attrRStrip
		}
		t.setAttrByText("</s>", attrRStrip, true)
		for _, s := range []string{"<unk>", "<s>", "<|endoftext|>"} {
			t.setAttrByText(s, attrRStrip, false)
		}
	}
}

func (t *Tokenizer) setAttrByText(s string, a attr, on bool) {
	id, ok := t.toID[s]
	if !ok {
		return
	}
	if on {
		t.attrs[id] |= a
	} else {
		t.attrs[id] &^= a
	}
}

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
