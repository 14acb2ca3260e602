package main

import (
	"flag"
	"fmt"
	"io"
	"path/filepath"

	"flowchat/engine"
	"flowchat/engine/quant"
	"flowchat/engine/sample"
	"flowchat/ui"
)

// specFlags choose speculative decoding (engine/speculate.go) for every
// command that generates: run, chat, serve and the GUI.
type specFlags struct {
	draftModel string  // --draft-model: a GGUF of the same vocabulary
	draftQuant string  // --draft-quant: a lower-bit copy of the target made at load
	draft      string  // --draft ngram
	layers     int     // --draft-layers: early exit after this many layers
	n          int     // --draft-n: the draft length (adaptive within 1…2N)
	fixed      bool    // --draft-fixed: no adaptation, no plain fallback
	accept     string  // --spec-accept
	topK       int     // --spec-top-k
	topP       float64 // --spec-top-p
}

func (f *specFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.draftModel, "draft-model", "", "speculative decoding with a draft model: a smaller GGUF with the same vocabulary")
	fs.StringVar(&f.draftQuant, "draft-quant", "", "speculative decoding with a lower-bit copy of the model made at load (self-speculation), e.g. Q4_0 or Q2_K; Inferflow levels (Q3H, Q2, …) run simulated in F32 here and are slower than the model, so they do not pay")
	fs.StringVar(&f.draft, "draft", "", "speculative decoding without a model: \"ngram\" drafts what followed the latest match of the text's last tokens (prompt lookup: good for edits, code and quotes)")
	fs.IntVar(&f.layers, "draft-layers", 0, "speculative decoding with the model's own first N layers and its output head (early exit: no second copy of the weights)")
	fs.IntVar(&f.n, "draft-n", 5, "draft length N: the adaptive length ranges over 1…2N (at most 16), starting small; with --draft-fixed exactly N")
	fs.BoolVar(&f.fixed, "draft-fixed", false, "draft exactly --draft-n tokens every step (no adaptation, no plain fallback; for measurements)")
	fs.StringVar(&f.accept, "spec-accept", "strict", "acceptance of drafted tokens: strict (keeps the model's distribution exactly; greedy text is unchanged), top-k or top-p (Inferflow's flexible accept: more accepted, no longer exact)")
	fs.IntVar(&f.topK, "spec-top-k", 5, "top-k acceptance: keep a drafted token when it is among the model's k most probable")
	fs.Float64Var(&f.topP, "spec-top-p", 0.9, "top-p acceptance: keep a drafted token when it lies in the model's top-p pool")
}

func (f *specFlags) on() bool {
	return f.draftModel != "" || f.draftQuant != "" || f.draft != "" || f.layers != 0
}

// check validates the flags before anything loads.
func (f *specFlags) check() error {
	if !f.on() {
		return nil
	}
	n := 0
	for _, s := range []string{f.draftModel, f.draftQuant, f.draft} {
		if s != "" {
			n++
		}
	}
	if f.layers != 0 {
		n++
	}
	switch {
	case n > 1:
		return fmt.Errorf("%w: choose one drafter: --draft-model, --draft-quant, --draft-layers or --draft ngram", errUsage)
	case f.layers < 0:
		return fmt.Errorf("%w: --draft-layers %d: want a positive number of layers", errUsage, f.layers)
	case f.draft != "" && f.draft != "ngram":
		return fmt.Errorf("%w: --draft %q: the drafter without a model is \"ngram\" (use --draft-model FILE for a draft model)", errUsage, f.draft)
	case f.n < 1 || f.n > 16:
		return fmt.Errorf("%w: --draft-n %d: want 1 to 16", errUsage, f.n)
	}
	if f.draftQuant != "" {
		if _, err := quant.ParseType(f.draftQuant); err != nil {
			return fmt.Errorf("%w: --draft-quant: %v", errUsage, err)
		}
	}
	a := f.acceptance()
	if err := a.Check(); err != nil {
		return fmt.Errorf("%w: --spec-accept: %v", errUsage, err)
	}
	return nil
}

func (f *specFlags) acceptance() sample.Acceptance {
	return sample.Acceptance{Rule: f.accept, TopK: f.topK, TopP: float32(f.topP)}
}

// setup loads the drafter for m (path: m's file, for self-speculation) and
// makes it the default of m's sessions. Notes go to stderr.
func (f *specFlags) setup(m *engine.Model, mf *modelFlags, stderr io.Writer) error {
	if !f.on() {
		return nil
	}
	var d engine.Drafter
	switch {
	case f.draft == "ngram":
		d = engine.NGram{}
	case f.layers > 0:
		md, err := engine.NewEarlyExitDraft(m, f.layers)
		if err != nil {
			return fmt.Errorf("%w: --draft-layers: %v", errUsage, err)
		}
		d = md
	case f.draftModel != "":
		md, err := loadDraft(m, mf, f.draftModel, "", filepath.Base(f.draftModel))
		if err != nil {
			return fmt.Errorf("draft model: %w", err)
		}
		d = md
	default:
		md, err := loadDraft(m, mf, m.Path, f.draftQuant, f.draftQuant+" self-draft")
		if err != nil {
			return fmt.Errorf("self-draft (--draft-quant %s): %w", f.draftQuant, err)
		}
		if md.M.Requant.Simulated {
			fmt.Fprintf(stderr, "flowchat: --draft-quant %s runs simulated in F32 (no %s kernels yet): the draft is slower than the model, so speculation will back off; Q4_0, Q2_K or Q3_K draft faster\n", f.draftQuant, f.draftQuant)
		}
		d = md
	}
	m.SetSpeculation(&engine.SpecOptions{Draft: d, K: f.n, FixedK: f.fixed, Accept: f.acceptance()})
	return nil
}

// loadDraft loads path (re-quantized to quant when set) with the target's
// threads and KV type, on the CPU (a draft runs on the target's CPU
// workers), as m's draft model.
func loadDraft(m *engine.Model, mf *modelFlags, path, quant, label string) (*engine.DraftModel, error) {
	dm := *mf
	dm.model, dm.quant, dm.sd, dm.gpu = path, quant, specFlags{}, gpuFlags{}
	if path != m.Path {
		dm.spec = "" // another file: its own architecture's spec
	}
	draft, err := dm.load()
	if err != nil {
		return nil, err
	}
	md, err := engine.NewDraftModel(m, draft, label)
	if err != nil {
		draft.Close()
		return nil, err
	}
	return md, nil
}

// specSummary is the statistics line of a generation that speculated
// ("" when it did not).
func specSummary(m *engine.Model, st engine.Stats) string {
	o := m.Speculation()
	if o == nil {
		return ""
	}
	s := fmt.Sprintf("[speculative, %s, %s accept: drafted %d, kept %d (%.0f%%), mean kept %.2f per drafting step (%d)",
		o.Draft.Name(), o.Accept.Rule, st.Drafted, st.DraftAccepted, 100*st.AcceptRate(), st.MeanAccepted(), st.SpecSteps)
	if st.PlainTPS > 0 && st.GenTPS() > 0 {
		s += fmt.Sprintf(" | %.1f tok/s against %.1f measured plain: %.2f×", st.GenTPS(), st.PlainTPS, st.GenTPS()/st.PlainTPS)
	}
	if k, td, tt, ok := specTerms(st); ok {
		s += fmt.Sprintf(" | K %.2f, t_draft %.3f ms, t_target %.3f ms", k, 1e3*td, 1e3*tt)
		if st.PlainTPS > 0 {
			s += ", formula 9 predicts " + formula9(st)
		}
	}
	if st.SpecNote != "" {
		s += " | " + st.SpecNote
	}
	return s + "]"
}

// guiSpeculation sets up the load dialog's speculative decoding on m.
func guiSpeculation(m *engine.Model, o ui.LoadOptions, threads int) error {
	f := specFlags{n: o.DraftN, accept: o.SpecAccept, topK: 5, topP: 0.9}
	if f.n == 0 {
		f.n = 5
	}
	if f.accept == "" {
		f.accept = sample.AcceptStrict
	}
	switch o.Draft {
	case "":
		return nil
	case "ngram":
		f.draft = "ngram"
	case "self":
		f.draftQuant = o.DraftQuant
		if f.draftQuant == "" {
			f.draftQuant = "Q4_0"
		}
	case "model":
		if o.DraftModel == "" {
			return fmt.Errorf("speculative decoding: choose a draft model")
		}
		f.draftModel = o.DraftModel
	default:
		return fmt.Errorf("speculative decoding: unknown drafter %q", o.Draft)
	}
	if err := f.check(); err != nil {
		return err
	}
	mf := modelFlags{threads: threads, mmap: o.Mmap, kvType: o.KVType}
	return f.setup(m, &mf, io.Discard)
}
