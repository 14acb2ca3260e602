package tokenizer

import "strings"

// Pre-tokenizer regexes exactly as llama.cpp b4748 lists them (llama-vocab.cpp).
// The GPT-2 and LLaMA-3 ones are hand-coded splitters there and here; the
// rest run through a backtracking regex engine as llama.cpp runs them
// through std::regex.
const (
	reGPT2   = `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)`
	reLlama3 = `(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	reQwen2  = `(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	reBloom  = ` ?[^(\s|.,!?…。，、।۔،)]+`
	reTekken = `[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`
	reGPT4o  = `[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))*((?=[\p{L}])([^A-Z]))+(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|[^\r\n\p{L}\p{N}]?((?=[\p{L}])([^a-z]))+((?=[\p{L}])([^A-Z]))*(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+`

	reDeepseekLetters = `\s?[A-Za-z` +
		"\u00b5\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u01ba\u01bc-\u01bf\u01c4-\u0293\u0295-\u02af\u0370-\u0373\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c\u038e-\u03a1\u03a3-\u03f5\u03f7-\u0481\u048a-\u052f\u0531-\u0556\u10a0-\u10c5\u13a0-\u13f5\u13f8-\u13fd\u1c90-\u1cba\u1cbd-\u1cbf\u1d00-\u1d2b\u1d6b-\u1d77\u1d79-\u1d9a\u1e00-\u1f15\u1f18-\u1f1d\u1f20-\u1f45\u1f48-\u1f4d\u1f50-\u1f57\u1f59\u1f5b\u1f5d\u1f5f-\u1f7d\u1f80-\u1fb4\u1fb6-\u1fbc\u1fbe\u1fc2-\u1fc4\u1fc6-\u1fcc\u1fd0-\u1fd3\u1fd6-\u1fdb\u1fe0-\u1fec\u1ff2-\u1ff4\u1ff6-\u1ffc\u2102\u2107\u210a-\u2113\u2115\u2119-\u211d\u2124\u2126\u2128\u212a-\u212d\u212f-\u2134\u2139\u213c-\u213f\u2145-\u2149\u214e\u2183\u2184\u2c00-\u2c7b\u2c7e-\u2ce4\u2ceb-\u2cee\u2cf2\u2cf3\ua640-\ua66d\ua680-\ua69b\ua722-\ua76f\ua771-\ua787\ua78b-\ua78e\uab70-\uabbf\ufb00-\ufb06\ufb13-\ufb17\uff21-\uff3a\uff41-\uff5a\U00010400-\U0001044f\U000104b0-\U000104d3\U000104d8-\U000104fb\U00010c80-\U00010cb2\U00010cc0-\U00010cf2\U000118a0-\U000118df\U0001e900-\U0001e943" + `]+`
	reDeepseekPunct = `\s?[!-/:-~！-／：-～‘-‟　-。]+`
	reCJK           = `[一-龥ࠀ-一가-퟿]+`
	reNewline       = "[\r\n]"
)

// preType is one tokenizer.ggml.pre value: its regexes and the vocabulary
// flags llama.cpp sets with it.
type preType struct {
	exprs        []string
	keepSpaces   bool // clean_spaces = false in llama_detokenize
	ignoreMerges bool // a word that is a token is not merged
	addBOS       bool
	noBOS        bool // no BOS token at all (chatglm)
}

var (
	exprsDefault   = []string{`[\p{P}\$\+<=>\^~\|]+`, reGPT2, `\p{N}+`, `[0-9][0-9][0-9]`}
	exprsGPT2      = []string{reGPT2}
	exprsLlama3    = []string{reLlama3}
	exprsQwen2     = []string{reQwen2}
	exprsStarcoder = []string{`\p{N}`, reGPT2}
	exprsBloom     = []string{reBloom}
)

var preTypes = map[string]preType{
	"":               {exprs: exprsDefault},
	"default":        {exprs: exprsDefault},
	"llama3":         {exprs: exprsLlama3, ignoreMerges: true, addBOS: true},
	"llama-v3":       {exprs: exprsLlama3, ignoreMerges: true, addBOS: true},
	"llama-bpe":      {exprs: exprsLlama3, ignoreMerges: true, addBOS: true},
	"falcon3":        {exprs: exprsLlama3, ignoreMerges: true, addBOS: true},
	"dbrx":           {exprs: exprsLlama3},
	"smaug-bpe":      {exprs: exprsLlama3},
	"chatglm-bpe":    {exprs: exprsLlama3, noBOS: true},
	"glm4":           {exprs: exprsLlama3, noBOS: true},
	"deepseek-llm":   {exprs: []string{reNewline, reDeepseekLetters, reDeepseekPunct, `\s+$`, reCJK, `\p{N}+`}, keepSpaces: true},
	"deepseek-coder": {exprs: []string{reNewline, `\s?\p{L}+`, `\s?\p{P}+`, reCJK, `\p{N}`}, keepSpaces: true},
	"deepseek-v3": {exprs: []string{`\p{N}{1,3}`, `[一-龥぀-ゟ゠-ヿ]+`,
		`[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_` + "`" + `{|}~][A-Za-z]+|[^` + "\r\n" + `\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[` + "\r\n" + `]*|\s*[` + "\r\n" + `]+|\s+(?!\S)|\s+`},
		keepSpaces: true},
	"falcon":           {exprs: []string{`[\p{P}\$\+<=>\^~\|` + "`" + `]+`, reGPT2, `[0-9][0-9][0-9]`}},
	"mpt":              {exprs: exprsGPT2},
	"olmo":             {exprs: exprsGPT2},
	"jais":             {exprs: exprsGPT2},
	"gpt-2":            {exprs: exprsGPT2},
	"phi-2":            {exprs: exprsGPT2},
	"jina-es":          {exprs: exprsGPT2},
	"jina-de":          {exprs: exprsGPT2},
	"gigachat":         {exprs: exprsGPT2},
	"jina-v1-en":       {exprs: exprsGPT2},
	"jina-v2-es":       {exprs: exprsGPT2},
	"jina-v2-de":       {exprs: exprsGPT2},
	"jina-v2-code":     {exprs: exprsGPT2},
	"roberta-bpe":      {exprs: exprsGPT2},
	"starcoder":        {exprs: exprsStarcoder},
	"refact":           {exprs: exprsStarcoder},
	"codeshell":        {exprs: exprsStarcoder},
	"exaone":           {exprs: exprsStarcoder},
	"minerva-7b":       {exprs: exprsStarcoder},
	"command-r":        {exprs: exprsStarcoder, keepSpaces: true},
	"smollm":           {exprs: exprsStarcoder, keepSpaces: true},
	"qwen2":            {exprs: exprsQwen2, keepSpaces: true},
	"deepseek-r1-qwen": {exprs: exprsQwen2, keepSpaces: true},
	"megrez":           {exprs: exprsQwen2},
	"stablelm2":        {exprs: exprsQwen2},
	"bloom":            {exprs: exprsBloom},
	"gpt3-finnish":     {exprs: exprsBloom},
	"poro-chat":        {exprs: exprsBloom, keepSpaces: true},
	"viking":           {exprs: []string{reBloom, `\p{N}`}, keepSpaces: true},
	"tekken":           {exprs: []string{reTekken}, keepSpaces: true, ignoreMerges: true, addBOS: true},
	"gpt-4o":           {exprs: []string{reGPT4o}, keepSpaces: true},
	"chameleon": {exprs: []string{`<sentinel:[0-9]+>`, `(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z`, `([\t\n]|    |  )`,
		`\p{N}`, `[\p{P}!-/:-@\[-` + "`" + `{-~]`, reGPT2}, keepSpaces: true, addBOS: true},
}

// splitStep refines a segmentation: offsets are segment lengths in code
// points; each segment is split independently.
type splitStep interface {
	split(in *splitText, offsets []int) []int
}

// preTokenizer is llama.cpp's unicode_regex_split for one expression list.
type preTokenizer struct {
	steps []splitStep
}

func newPreTokenizer(exprs []string) (*preTokenizer, error) {
	p := &preTokenizer{}
	for _, e := range exprs {
		s, err := newSplitStep(e)
		if err != nil {
			return nil, err
		}
		p.steps = append(p.steps, s)
	}
	return p, nil
}

func newSplitStep(expr string) (splitStep, error) {
	switch expr {
	case reGPT2:
		return customStep(splitGPT2), nil
	case reLlama3:
		return customStep(splitLlama3), nil
	}
	return newRegexStep(expr)
}

// splitText is the text being split in the forms the steps need, built on
// first use: code points, the category-collapsed form, and the wide form.
type splitText struct {
	cpts      []rune
	collapsed []rune
	wide      []rune
}

// words splits text and returns each word byte-level encoded (every UTF-8
// byte mapped through GPT-2's byte-to-unicode table).
func (p *preTokenizer) words(text string, byteEncode bool) []string {
	in := &splitText{cpts: codepoints(text)}
	offsets := []int{len(in.cpts)}
	for _, s := range p.steps {
		offsets = s.split(in, offsets)
	}
	out := make([]string, 0, len(offsets))
	start := 0
	var buf []byte
	for _, n := range offsets {
		buf = buf[:0]
		for _, r := range in.cpts[start : start+n] {
			buf = appendCpt(buf, r)
		}
		start += n
		out = append(out, encodeWord(buf, byteEncode))
	}
	return out
}

func encodeWord(b []byte, byteEncode bool) string {
	if !byteEncode {
		return string(b)
	}
	var sb strings.Builder
	sb.Grow(2 * len(b))
	for _, c := range b {
		sb.WriteRune(byteToRune[c])
	}
	return sb.String()
}

// collapsedText maps every code point >= 128 to one stand-in character per
// category (whitespace to \v), as llama.cpp does before running a regex
// that uses \p{..} classes through std::regex.
func (in *splitText) collapsedText() []rune {
	if in.collapsed != nil {
		return in.collapsed
	}
	in.collapsed = make([]rune, len(in.cpts))
	for i, r := range in.cpts {
		in.collapsed[i] = collapseRune(r)
	}
	return in.collapsed
}

func collapseRune(r rune) rune {
	if r < 128 {
		return r
	}
	f := flagsOf(r)
	if f&fWhitespace != 0 {
		return 0x0B
	}
	if c, ok := categoryStandIn[f&fCategories]; ok {
		return c
	}
	return 0xD0
}

// wideText is the code points with non-ASCII whitespace replaced by \v,
// because std::wregex's \s (C locale) only knows ASCII whitespace.
func (in *splitText) wideText() []rune {
	if in.wide != nil {
		return in.wide
	}
	in.wide = make([]rune, len(in.cpts))
	for i, r := range in.cpts {
		if r > 0x7F && flagsOf(r)&fWhitespace != 0 {
			r = 0x0B
		}
		in.wide[i] = r
	}
	return in.wide
}

type customStep func(cpts []rune, offsets []int) []int

func (c customStep) split(in *splitText, offsets []int) []int { return c(in.cpts, offsets) }
