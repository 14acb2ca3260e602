package tokenizer

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
)

// HFConfig is what a Hugging Face model folder says about its tokenizer
// besides tokenizer.json: tokenizer_config.json's special tokens and flags
// and generation_config.json's end-of-generation ids.
type HFConfig struct {
	Name               string // model name (some token attributes key on it)
	BOS, EOS, UNK, PAD string // special token texts ("" = not named)
	AddBOS, AddEOS     OptBool
	EOG                []int32 // extra end-of-generation ids
	MaxVocab           int     // refuse ids above this (0 = 1<<22)
	// GGUFCompat scores SentencePiece-style BPE tokens as
	// convert_hf_to_gguf.py does for a folder without tokenizer.model
	// (every score -1000: merges then follow text order, not merge
	// ranks), to reproduce such a GGUF's ids. The default follows the
	// merge ranks, as the tokenizers library does.
	GGUFCompat bool
}

// hfFile is the part of tokenizer.json that tokenization depends on.
type hfFile struct {
	AddedTokens []hfAdded       `json:"added_tokens"`
	Normalizer  *hfComponent    `json:"normalizer"`
	PreTok      *hfComponent    `json:"pre_tokenizer"`
	PostProc    *hfComponent    `json:"post_processor"`
	Model       json.RawMessage `json:"model"`
}

type hfAdded struct {
	ID      int64  `json:"id"`
	Content string `json:"content"`
	Special bool   `json:"special"`
}

// hfComponent is any normalizer, pre-tokenizer or post-processor; the
// fields used depend on Type.
type hfComponent struct {
	Type          string         `json:"type"`
	Normalizers   []*hfComponent `json:"normalizers"`
	PreTokenizers []*hfComponent `json:"pretokenizers"`
	Processors    []*hfComponent `json:"processors"`
	Pattern       *hfPattern     `json:"pattern"`
	Content       string         `json:"content"`
	Prepend       string         `json:"prepend"`
	Replacement   string         `json:"replacement"`
	PrependScheme string         `json:"prepend_scheme"`
	AddPrefix     *bool          `json:"add_prefix_space"`
	UseRegex      *bool          `json:"use_regex"`
	Individual    bool           `json:"individual_digits"`
	Lowercase     *bool          `json:"lowercase"`
	Charsmap      string         `json:"precompiled_charsmap"`
	Single        []hfTemplate   `json:"single"`
	ClsRaw        []any          `json:"cls"`
	SepRaw        []any          `json:"sep"`
}

type hfPattern struct {
	Regex  *string `json:"Regex"`
	String *string `json:"String"`
}

type hfTemplate struct {
	Special *struct {
		ID string `json:"id"`
	} `json:"SpecialToken"`
	Sequence *struct {
		ID string `json:"id"`
	} `json:"Sequence"`
}

// hfModel is tokenizer.json's "model" for BPE, WordPiece and Unigram.
type hfModel struct {
	Type         string          `json:"type"`
	Vocab        json.RawMessage `json:"vocab"`
	Merges       []json.RawMessage
	RawMerges    json.RawMessage `json:"merges"`
	ByteFallback bool            `json:"byte_fallback"`
	UnkToken     string          `json:"unk_token"`
	UnkID        *int64          `json:"unk_id"`
	Prefix       *string         `json:"continuing_subword_prefix"`
}

// FromHFJSON builds a tokenizer from a tokenizer.json. It maps the file
// onto the llama.cpp tokenizer of the same kind, as convert_hf_to_gguf.py
// does, so that a model gives the same ids from its HF folder as from its
// GGUF conversion: byte-level BPE → "gpt2" with the pre-tokenizer's regexes;
// BPE over "▁"-escaped text with byte fallback → SentencePiece "llama";
// WordPiece → "bert"; Unigram → "t5".
func FromHFJSON(data []byte, cfg HFConfig) (*Tokenizer, error) {
	v, exprs, err := VocabFromHFJSON(data, cfg)
	if err != nil {
		return nil, err
	}
	t, err := New(v)
	if err != nil {
		return nil, err
	}
	if exprs != nil {
		if t.pre, err = newPreTokenizer(exprs); err != nil {
			return nil, fmt.Errorf("tokenizer.json pre-tokenizer: %w", err)
		}
	}
	for _, id := range cfg.EOG {
		if id >= 0 && int(id) < len(t.tokens) {
			t.eog[id] = true
		}
	}
	return t, nil
}

// VocabFromHFJSON converts a tokenizer.json to a Vocab. For byte-level BPE
// whose split regexes match no named llama.cpp pre-tokenizer it also
// returns the regexes to use.
func VocabFromHFJSON(data []byte, cfg HFConfig) (Vocab, []string, error) {
	var f hfFile
	if err := json.Unmarshal(data, &f); err != nil {
		return Vocab{}, nil, fmt.Errorf("%w: tokenizer.json: %v", ErrVocab, err)
	}
	var m hfModel
	if err := json.Unmarshal(f.Model, &m); err != nil {
		return Vocab{}, nil, fmt.Errorf("%w: tokenizer.json model: %v", ErrVocab, err)
	}
	if cfg.MaxVocab <= 0 {
		cfg.MaxVocab = 1 << 22
	}
	c := &hfConv{f: &f, m: &m, cfg: cfg}
	return c.convert()
}

type hfConv struct {
	f     *hfFile
	m     *hfModel
	cfg   HFConfig
	v     Vocab
	exprs []string
}

func (c *hfConv) convert() (Vocab, []string, error) {
	c.v.Name = c.cfg.Name
	var err error
	switch c.m.Type {
	case "BPE", "":
		err = c.bpe()
	case "WordPiece":
		err = c.wordPiece()
	case "Unigram":
		err = c.unigram()
	default:
		err = fmt.Errorf("%w: tokenizer.json model type %q", ErrUnsupported, c.m.Type)
	}
	if err != nil {
		return Vocab{}, nil, err
	}
	c.specials()
	return c.v, c.exprs, nil
}

// tokenTable places id→text pairs in a dense table; ids nobody uses
// become unused filler tokens as in convert_hf_to_gguf.py.
func (c *hfConv) tokenTable(ids map[string]int64) error {
	n := int64(0)
	for _, id := range ids {
		n = max(n, id+1)
	}
	for _, a := range c.f.AddedTokens {
		n = max(n, a.ID+1)
	}
	if n <= 0 || n > int64(c.cfg.MaxVocab) {
		return fmt.Errorf("%w: tokenizer.json has %d token ids (limit %d)", ErrVocab, n, c.cfg.MaxVocab)
	}
	c.v.Tokens = make([]string, n)
	c.v.Types = make([]int32, n)
	for text, id := range ids {
		if id < 0 {
			return fmt.Errorf("%w: token %q has id %d", ErrVocab, text, id)
		}
		c.v.Tokens[id], c.v.Types[id] = text, int32(TypeNormal)
	}
	for _, a := range c.f.AddedTokens {
		if a.ID < 0 {
			return fmt.Errorf("%w: added token %q has id %d", ErrVocab, a.Content, a.ID)
		}
		c.v.Tokens[a.ID] = a.Content
		c.v.Types[a.ID] = int32(TypeUserDefined)
		if a.Special {
			c.v.Types[a.ID] = int32(TypeControl)
		}
	}
	for i, s := range c.v.Tokens {
		if s == "" {
			c.v.Tokens[i], c.v.Types[i] = fmt.Sprintf("[PAD%d]", i), int32(TypeUnused)
		}
	}
	return nil
}

func (c *hfConv) vocabMap() (map[string]int64, error) {
	var ids map[string]int64
	if err := json.Unmarshal(c.m.Vocab, &ids); err != nil {
		return nil, fmt.Errorf("%w: tokenizer.json vocab: %v", ErrVocab, err)
	}
	return ids, nil
}

// merges reads "a b" strings or ["a", "b"] pairs.
func (c *hfConv) merges() ([]string, error) {
	if len(c.m.RawMerges) == 0 || string(c.m.RawMerges) == "null" {
		return nil, nil
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(c.m.RawMerges, &raw); err != nil {
		return nil, fmt.Errorf("%w: tokenizer.json merges: %v", ErrVocab, err)
	}
	out := make([]string, 0, len(raw))
	for _, r := range raw {
		var s string
		if json.Unmarshal(r, &s) == nil {
			out = append(out, s)
			continue
		}
		var pair []string
		if err := json.Unmarshal(r, &pair); err != nil || len(pair) != 2 {
			return nil, fmt.Errorf("%w: tokenizer.json merge %s", ErrVocab, r)
		}
		out = append(out, pair[0]+" "+pair[1])
	}
	return out, nil
}

func (c *hfConv) bpe() error {
	ids, err := c.vocabMap()
	if err != nil {
		return err
	}
	if err := c.tokenTable(ids); err != nil {
		return err
	}
	merges, err := c.merges()
	if err != nil {
		return err
	}
	if c.isByteLevel() {
		c.v.Model, c.v.Merges = "gpt2", merges
		c.v.Pre, c.exprs = c.preType()
		return nil
	}
	return c.spmBPE(merges)
}

// isByteLevel: a ByteLevel pre-tokenizer anywhere in the chain.
func (c *hfConv) isByteLevel() bool {
	found := false
	walk(c.f.PreTok, func(p *hfComponent) {
		found = found || p.Type == "ByteLevel"
	})
	return found
}

func walk(p *hfComponent, f func(*hfComponent)) {
	if p == nil {
		return
	}
	f(p)
	for _, list := range [][]*hfComponent{p.Normalizers, p.PreTokenizers, p.Processors} {
		for _, q := range list {
			walk(q, f)
		}
	}
}

// preType returns the llama.cpp pre-tokenizer whose regexes the file's
// splits use, or the regexes themselves when none matches.
func (c *hfConv) preType() (string, []string) {
	var exprs []string
	walk(c.f.PreTok, func(p *hfComponent) {
		switch {
		case p.Type == "Split" && p.Pattern != nil && p.Pattern.Regex != nil:
			exprs = append(exprs, *p.Pattern.Regex)
		case p.Type == "Digits" && p.Individual:
			exprs = append(exprs, `\p{N}`)
		case p.Type == "ByteLevel" && (p.UseRegex == nil || *p.UseRegex):
			exprs = append(exprs, reGPT2)
		}
	})
	for _, name := range []string{"gpt-2", "llama-bpe", "qwen2", "starcoder", "bloom", "falcon", "deepseek-llm", "deepseek-coder", "deepseek-v3", "tekken", "gpt-4o"} {
		if p, ok := preTypes[name]; ok && equalStrings(p.exprs, exprs) {
			return name, nil
		}
	}
	if len(exprs) == 0 {
		return "gpt-2", []string{`(?s).+`} // no split: the whole text is one word
	}
	return "gpt-2", exprs
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// spmBPE maps a SentencePiece-style BPE (text escaped with "▁", byte
// fallback) to llama.cpp's SPM tokenizer. SPM merges the pair whose merged
// token scores highest; BPE merges the lowest-ranked pair, so a token's
// score is minus the rank of the first merge that makes it.
func (c *hfConv) spmBPE(merges []string) error {
	c.v.Model = "llama"
	c.v.Scores = make([]float32, len(c.v.Tokens))
	for i := range c.v.Scores {
		c.v.Scores[i] = -1e9 // not made by any merge
	}
	toID := map[string]int{}
	for i, s := range c.v.Tokens {
		toID[s] = i
		if isByteToken(s) && c.m.ByteFallback {
			c.v.Types[i] = int32(TypeByte)
		}
		if len([]rune(s)) == 1 {
			c.v.Scores[i] = 0
		}
	}
	for r := len(merges) - 1; r >= 0; r-- {
		if id, ok := toID[strings.Replace(merges[r], " ", "", 1)]; ok {
			c.v.Scores[id] = -float32(r + 1)
		}
	}
	if c.cfg.GGUFCompat {
		for i := range c.v.Scores {
			c.v.Scores[i] = -1000
		}
	}
	if id, ok := toID[c.m.UnkToken]; ok && c.m.UnkToken != "" {
		c.v.Types[id] = int32(TypeUnknown)
		c.v.Special.UNK = ID(uint64(id))
	}
	c.v.AddSpacePrefix = Bool(c.prefixSpace())
	return nil
}

func isByteToken(s string) bool {
	return len(s) == 6 && strings.HasPrefix(s, "<0x") && s[5] == '>'
}

// prefixSpace: the normalizer prepends "▁" or Metaspace adds a prefix.
func (c *hfConv) prefixSpace() bool {
	found := false
	check := func(p *hfComponent) {
		switch {
		case p.Type == "Prepend" && p.Prepend == "\u2581":
			found = true
		case p.Type == "Metaspace":
			found = found || p.PrependScheme == "always" || p.PrependScheme == "first" ||
				(p.PrependScheme == "" && (p.AddPrefix == nil || *p.AddPrefix))
		}
	}
	walk(c.f.Normalizer, check)
	walk(c.f.PreTok, check)
	return found
}

// wordPiece maps to llama.cpp's WPM, whose tokens are stored as
// convert_hf_to_gguf.py writes them: "##x" continuations become "x" and
// word starts "▁x" ([BRACKETED] specials stay).
func (c *hfConv) wordPiece() error {
	ids, err := c.vocabMap()
	if err != nil {
		return err
	}
	if err := c.tokenTable(ids); err != nil {
		return err
	}
	prefix := "##"
	if c.m.Prefix != nil {
		prefix = *c.m.Prefix
	}
	c.v.Model = "bert"
	for i, s := range c.v.Tokens {
		switch {
		case strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]"):
		case prefix != "" && strings.HasPrefix(s, prefix):
			c.v.Tokens[i] = s[len(prefix):]
		default:
			c.v.Tokens[i] = "\u2581" + s
		}
	}
	c.dedupe()
	if id := c.find("\u2581" + c.m.UnkToken); id >= 0 {
		c.v.Types[id] = int32(TypeUnknown)
	}
	if id := c.find(c.m.UnkToken); id >= 0 {
		c.v.Types[id] = int32(TypeUnknown)
		c.v.Special.UNK = ID(uint64(id))
	}
	return nil
}

// dedupe renames the later of two tokens that the WordPiece rewrite made
// equal ("##a" and "a" are distinct only by position).
func (c *hfConv) dedupe() {
	seen := map[string]bool{}
	for i, s := range c.v.Tokens {
		if seen[s] {
			c.v.Tokens[i], c.v.Types[i] = fmt.Sprintf("[DUP%d]", i), int32(TypeUnused)
		}
		seen[c.v.Tokens[i]] = true
	}
}

func (c *hfConv) find(s string) int {
	for i, t := range c.v.Tokens {
		if t == s {
			return i
		}
	}
	return -1
}

// unigram maps to llama.cpp's UGM with the SentencePiece normalizer's
// precompiled charsmap.
func (c *hfConv) unigram() error {
	var pieces []struct {
		Text  string
		Score float64
	}
	var raw [][2]any
	if err := json.Unmarshal(c.m.Vocab, &raw); err != nil {
		return fmt.Errorf("%w: tokenizer.json unigram vocab: %v", ErrVocab, err)
	}
	ids := make(map[string]int64, len(raw))
	for i, p := range raw {
		s, ok1 := p[0].(string)
		sc, ok2 := p[1].(float64)
		if !ok1 || !ok2 {
			return fmt.Errorf("%w: unigram piece %d: %v", ErrVocab, i, p)
		}
		pieces = append(pieces, struct {
			Text  string
			Score float64
		}{s, sc})
		ids[s] = int64(i)
	}
	if err := c.tokenTable(ids); err != nil {
		return err
	}
	c.v.Model = "t5"
	c.v.Scores = make([]float32, len(c.v.Tokens))
	for i, p := range pieces {
		if c.v.Tokens[i] == p.Text {
			c.v.Scores[i] = float32(p.Score)
		}
		if isByteToken(p.Text) {
			c.v.Types[i] = int32(TypeByte)
		}
	}
	if c.m.UnkID != nil && *c.m.UnkID >= 0 && *c.m.UnkID < int64(len(c.v.Tokens)) {
		c.v.Types[*c.m.UnkID] = int32(TypeUnknown)
		c.v.Special.UNK = ID(uint64(*c.m.UnkID))
	}
	c.v.AddSpacePrefix = Bool(c.prefixSpace())
	c.v.RemoveExtraWhitespaces = Bool(c.collapsesSpaces())
	return c.charsmap()
}

func (c *hfConv) collapsesSpaces() bool {
	found := false
	walk(c.f.Normalizer, func(p *hfComponent) {
		found = found || (p.Type == "Replace" && p.Pattern != nil && p.Pattern.Regex != nil && *p.Pattern.Regex == " {2,}")
	})
	return found
}

func (c *hfConv) charsmap() error {
	var cm string
	walk(c.f.Normalizer, func(p *hfComponent) {
		if p.Type == "Precompiled" {
			cm = p.Charsmap
		}
	})
	if cm == "" {
		return nil
	}
	b, err := base64.StdEncoding.DecodeString(cm)
	if err != nil {
		return fmt.Errorf("%w: precompiled_charsmap: %v", ErrVocab, err)
	}
	c.v.PrecompiledCharsmap = b
	return nil
}

// specials sets BOS/EOS/SEP/PAD and whether encoding adds them, from the
// post-processor and tokenizer_config.json (which wins).
func (c *hfConv) specials() {
	c.fromPostProcessor()
	set := func(dst *OptID, text string) {
		if id := c.find(text); text != "" && id >= 0 {
			*dst = ID(uint64(id))
		}
	}
	set(&c.v.Special.BOS, c.cfg.BOS)
	set(&c.v.Special.EOS, c.cfg.EOS)
	set(&c.v.Special.UNK, c.cfg.UNK)
	set(&c.v.Special.PAD, c.cfg.PAD)
	if c.cfg.AddBOS.Set {
		c.v.AddBOS = c.cfg.AddBOS
	}
	if c.cfg.AddEOS.Set {
		c.v.AddEOS = c.cfg.AddEOS
	}
	if c.v.Model == "bert" {
		set(&c.v.Special.BOS, "[CLS]")
		set(&c.v.Special.SEP, "[SEP]")
		set(&c.v.Special.PAD, "[PAD]")
		set(&c.v.Special.MASK, "[MASK]")
	}
}

// fromPostProcessor reads the single-sequence template: special tokens
// before $A are BOS (CLS), after it EOS (SEP for BERT processing).
func (c *hfConv) fromPostProcessor() {
	c.v.AddBOS, c.v.AddEOS = Bool(false), Bool(false)
	walk(c.f.PostProc, func(p *hfComponent) {
		switch p.Type {
		case "TemplateProcessing":
			seen := false
			for _, it := range p.Single {
				switch {
				case it.Sequence != nil:
					seen = true
				case it.Special != nil && !seen:
					c.setID(&c.v.Special.BOS, it.Special.ID, &c.v.AddBOS)
				case it.Special != nil:
					c.setID(&c.v.Special.EOS, it.Special.ID, &c.v.AddEOS)
				}
			}
		case "BertProcessing", "RobertaProcessing":
			if s := firstString(p.ClsRaw); s != "" {
				c.setID(&c.v.Special.BOS, s, &c.v.AddBOS)
			}
			if s := firstString(p.SepRaw); s != "" {
				c.setID(&c.v.Special.SEP, s, &c.v.AddSep)
				if c.v.Model != "bert" {
					c.setID(&c.v.Special.EOS, s, &c.v.AddEOS)
				}
			}
		}
	})
}

func (c *hfConv) setID(dst *OptID, text string, flag *OptBool) {
	if id := c.find(text); id >= 0 {
		*dst, *flag = ID(uint64(id)), Bool(true)
	}
}

func firstString(a []any) string {
	if len(a) > 0 {
		s, _ := a[0].(string)
		return s
	}
	return ""
}
