package serve

// fim is a completion's fill-in-the-middle layout: the prompt is the text
// before the hole, suffix the text after it, and the model writes the
// middle. Prompts are laid out prefix-suffix-middle, as llama-server's
// /infill does by default:
//
//	[BOS] FIM_PRE prompt FIM_SUF suffix FIM_MID
//
// BOS only where the vocabulary adds it. llama-server also puts a
// repository header (FIM_REP "myproject", FIM_SEP "filename") before it
// where the vocabulary has those tokens, standing for /infill's
// input_extra files; OpenAI's suffix has no such files, so none is added.
type fim struct {
	pre, suf, mid int32
	bos           int32   // -1 when the vocabulary adds none
	suffix        []int32 // the suffix's tokens, special tokens not parsed
}

// fimFor is r's layout, nil without a suffix; a 400 naming suffix when the
// model's vocabulary has no FIM tokens or echo is asked for too.
func (s *Server) fimFor(r *completionRequest) (*fim, *apiError) {
	if r.Suffix == nil || *r.Suffix == "" {
		return nil, nil
	}
	tok := s.cfg.Model.Tok
	pre, suf, mid, ok := tok.FIM()
	if !ok {
		return nil, badRequest("suffix", "suffix (fill-in-the-middle) needs a model whose vocabulary has FIM prefix, suffix and middle tokens; %q has none", s.cfg.ModelID)
	}
	if r.Echo {
		return nil, badRequest("suffix", "echo cannot be combined with suffix")
	}
	f := &fim{pre: pre, suf: suf, mid: mid, bos: -1, suffix: tok.Encode(*r.Suffix, false, false)}
	if tok.AddBOS() {
		f.bos = tok.BOS()
	}
	return f, nil
}

// prompt lays out one prompt's tokens (the prefix) around the suffix.
func (f *fim) prompt(prefix []int32) []int32 {
	out := make([]int32, 0, len(prefix)+len(f.suffix)+4)
	if f.bos >= 0 {
		out = append(out, f.bos)
	}
	out = append(append(out, f.pre), prefix...)
	out = append(append(out, f.suf), f.suffix...)
	return append(out, f.mid)
}
