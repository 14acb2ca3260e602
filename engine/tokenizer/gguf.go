package tokenizer

import (
	"fmt"

	"flowchat/engine/gguf"
)

// FromGGUF builds the tokenizer described by a GGUF file's tokenizer.ggml.*
// metadata.
func FromGGUF(f *gguf.File) (*Tokenizer, error) {
	v, err := VocabFromGGUF(f)
	if err != nil {
		return nil, err
	}
	return New(v)
}

// VocabFromGGUF reads the tokenizer metadata into a Vocab.
func VocabFromGGUF(f *gguf.File) (Vocab, error) {
	var v Vocab
	var ok bool
	if v.Model, ok = f.String("tokenizer.ggml.model"); !ok {
		return v, fmt.Errorf("%w: no tokenizer.ggml.model", ErrVocab)
	}
	if v.Tokens, ok = f.Strings("tokenizer.ggml.tokens"); !ok {
		return v, fmt.Errorf("%w: no tokenizer.ggml.tokens", ErrVocab)
	}
	v.Pre, _ = f.String("tokenizer.ggml.pre")
	v.Name, _ = f.String("general.name")
	if _, present := f.Get("tokenizer.ggml.scores"); present {
		if v.Scores, ok = f.Float32s("tokenizer.ggml.scores"); !ok {
			return v, fmt.Errorf("%w: tokenizer.ggml.scores is not a float32 array", ErrVocab)
		}
	}
	if _, present := f.Get("tokenizer.ggml.token_type"); present {
		if v.Types, ok = f.Int32s("tokenizer.ggml.token_type"); !ok {
			return v, fmt.Errorf("%w: tokenizer.ggml.token_type is not an int32 array", ErrVocab)
		}
	}
	if _, present := f.Get("tokenizer.ggml.merges"); present {
		if v.Merges, ok = f.Strings("tokenizer.ggml.merges"); !ok {
			return v, fmt.Errorf("%w: tokenizer.ggml.merges is not a string array", ErrVocab)
		}
	} else if v.Model == "gpt2" {
		return v, fmt.Errorf("%w: no tokenizer.ggml.merges", ErrVocab)
	}
	readSpecialIDs(f, &v.Special)
	v.AddBOS = optBool(f, "tokenizer.ggml.add_bos_token")
	v.AddEOS = optBool(f, "tokenizer.ggml.add_eos_token")
	v.AddSep = optBool(f, "tokenizer.ggml.add_sep_token")
	v.AddSpacePrefix = optBool(f, "tokenizer.ggml.add_space_prefix")
	v.RemoveExtraWhitespaces = optBool(f, "tokenizer.ggml.remove_extra_whitespaces")
	cm, err := charsmap(f)
	v.PrecompiledCharsmap = cm
	return v, err
}

func readSpecialIDs(f *gguf.File, s *SpecialIDs) {
	for _, k := range []struct {
		key string
		dst *OptID
	}{
		{"bos_token_id", &s.BOS}, {"eos_token_id", &s.EOS}, {"eot_token_id", &s.EOT},
		{"eom_token_id", &s.EOM}, {"unknown_token_id", &s.UNK}, {"seperator_token_id", &s.SEP},
		{"padding_token_id", &s.PAD}, {"mask_token_id", &s.MASK},
		{"fim_pre_token_id", &s.FIMPre}, {"fim_suf_token_id", &s.FIMSuf}, {"fim_mid_token_id", &s.FIMMid},
		{"fim_pad_token_id", &s.FIMPad}, {"fim_rep_token_id", &s.FIMRep}, {"fim_sep_token_id", &s.FIMSep},
		// deprecated spellings, read last so they win as in llama.cpp
		{"prefix_token_id", &s.FIMPre}, {"suffix_token_id", &s.FIMSuf}, {"middle_token_id", &s.FIMMid},
	} {
		if id, ok := f.Uint("tokenizer.ggml." + k.key); ok {
			*k.dst = ID(id)
		}
	}
}

func optBool(f *gguf.File, key string) OptBool {
	b, ok := f.Bool(key)
	return OptBool{Value: b, Set: ok}
}

// charsmap reads tokenizer.ggml.precompiled_charsmap (a uint8 or int8 array).
func charsmap(f *gguf.File) ([]byte, error) {
	val, ok := f.Get("tokenizer.ggml.precompiled_charsmap")
	if !ok {
		return nil, nil
	}
	switch a := val.V.(type) {
	case []uint8:
		return a, nil
	case []int8:
		b := make([]byte, len(a))
		for i, x := range a {
			b[i] = byte(x)
		}
		return b, nil
	}
	return nil, fmt.Errorf("%w: tokenizer.ggml.precompiled_charsmap is %s", ErrVocab, val.Type)
}

// BOS is the beginning-of-sequence id (-1 if none).
func (t *Tokenizer) BOS() int32 { return t.bos }

// EOS is the end-of-sequence id (-1 if none).
func (t *Tokenizer) EOS() int32 { return t.eos }

// EOT is the end-of-turn id (-1 if none).
func (t *Tokenizer) EOT() int32 { return t.eot }

// FIM is the fill-in-the-middle tokens (prefix, suffix, middle), from
// the GGUF keys or found by their text; ok is false unless the
// vocabulary has all three.
func (t *Tokenizer) FIM() (pre, suf, mid int32, ok bool) {
	return t.fimPre, t.fimSuf, t.fimMid, t.fimPre != noToken && t.fimSuf != noToken && t.fimMid != noToken
}

// IsEOG reports whether id ends generation (EOS, EOT, EOM and the tokens
// llama.cpp recognises by their text).
func (t *Tokenizer) IsEOG(id int32) bool { return t.eog[id] }

// IsControl reports whether id is a control or unknown token, one that
// generated text renders as nothing (Piece still spells it out).
func (t *Tokenizer) IsControl(id int32) bool {
	return id >= 0 && int(id) < len(t.attrs) && t.attrs[id]&(attrControl|attrUnknown) != 0
}

// VocabSize is the number of tokens.
func (t *Tokenizer) VocabSize() int { return len(t.tokens) }

// Token is the token's text as stored ("" for an out-of-range id).
func (t *Tokenizer) Token(id int32) string {
	if id < 0 || int(id) >= len(t.tokens) {
		return ""
	}
	return t.tokens[id]
}

// AddBOS is llama_vocab_get_add_bos: whether the model wants BOS (CLS for
// WordPiece) prepended. llama-tokenize passes it as Encode's addSpecial.
func (t *Tokenizer) AddBOS() bool { return t.bos != noToken && t.addBOS }

// AddEOS reports whether Encode with addSpecial appends EOS.
func (t *Tokenizer) AddEOS() bool { return t.eos != noToken && t.addEOS }

// Model is the tokenizer kind: "spm", "bpe", "wpm" or "ugm".
func (t *Tokenizer) Model() string { return [...]string{"spm", "bpe", "wpm", "ugm"}[t.kind] }
