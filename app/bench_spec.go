package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"

	"flowchat/engine"
	"flowchat/engine/sample"
)

// specBench measures speculative decoding against plain decoding of the
// same loaded model (bench with a drafter flag). One generation of 50 ms
// varies by ±20% from run to run on a shared machine, so a single
// `run --draft…` against a single plain run cannot show a 5% floor:
// rounds alternate plain and speculative generations (the order swapped
// every round), each on a prompt of its own (a number in front of the
// text, so that neither the target's nor the draft's prefix cache serves
// it), and the table gives each round's ratio and their median and
// minimum.
type specBench struct {
	prompt string
	n      int     // tokens generated per generation
	rounds int     // plain + speculative pairs
	temp   float64 // 0: greedy
	seed   uint64
}

// specRound is one generation of a round.
type specRound struct {
	plain, spec engine.Stats
}

func (b specBench) run(m *engine.Model, stdout io.Writer) error {
	o := m.Speculation()
	if o == nil {
		return fmt.Errorf("%w: bench --spec-rounds needs a drafter (--draft ngram, --draft-model, --draft-quant or --draft-layers)", errUsage)
	}
	p := sample.DefaultParams()
	p.Temperature, p.Seed = float32(b.temp), b.seed
	if err := p.SpeculationError(); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	gen := func(i int, spec bool) (engine.Stats, error) {
		text := fmt.Sprintf("%d. %s", i, b.prompt)
		ids := m.Tok.Encode(text, true, true)
		return m.NewSession(0).Generate(context.Background(), ids, engine.GenerateOptions{
			Sampling: p, MaxTokens: b.n, IgnoreEOG: true, NoSpec: !spec})
	}
	// A warm-up pair: the first generation pays page faults and the
	// draft's allocations.
	if _, err := gen(0, false); err != nil {
		return err
	}
	if _, err := gen(1, true); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "speculative decoding: %s, %s accept, %d tokens, %s, %d rounds (plain and speculative alternated)\n\n",
		o.Draft.Name(), o.Accept.Rule, b.n, map[bool]string{true: "greedy", false: fmt.Sprintf("temperature %g", b.temp)}[b.temp == 0], b.rounds)
	fmt.Fprintln(stdout, "| round | plain tok/s | speculative tok/s | ratio | in-run plain tok/s | ratio to in-run | drafted | kept | mean K | formula 9 |")
	fmt.Fprintln(stdout, "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	var ratios, inRun []float64
	var drafted, kept int
	for r := range b.rounds {
		var rd specRound
		var err error
		for j, spec := range []bool{r%2 == 1, r%2 == 0} {
			st, e := gen(2+2*r+j, spec)
			if e != nil {
				err = e
				break
			}
			if spec {
				rd.spec = st
			} else {
				rd.plain = st
			}
		}
		if err != nil {
			return err
		}
		ratio := rd.spec.GenTPS() / rd.plain.GenTPS()
		ratios = append(ratios, ratio)
		drafted += rd.spec.Drafted
		kept += rd.spec.DraftAccepted
		line := fmt.Sprintf("| %d | %.1f | %.1f | %.3f× | ", r+1, rd.plain.GenTPS(), rd.spec.GenTPS(), ratio)
		if rd.spec.PlainTPS > 0 {
			x := rd.spec.GenTPS() / rd.spec.PlainTPS
			inRun = append(inRun, x)
			line += fmt.Sprintf("%.1f | %.3f× | ", rd.spec.PlainTPS, x)
		} else {
			line += "— | — | "
		}
		line += fmt.Sprintf("%d | %d | %s | %s |", rd.spec.Drafted, rd.spec.DraftAccepted, meanK(rd.spec), formula9(rd.spec))
		fmt.Fprintln(stdout, line)
	}
	fmt.Fprintf(stdout, "\nspeculative / plain: median %.3f×, min %.3f×, max %.3f× over %d rounds", median(ratios), slices.Min(ratios), slices.Max(ratios), len(ratios))
	if len(inRun) > 0 {
		fmt.Fprintf(stdout, "; against the in-run plain rate: median %.3f×", median(inRun))
	}
	rate := "—"
	if drafted > 0 {
		rate = fmt.Sprintf("%.1f%%", 100*float64(kept)/float64(drafted))
	}
	fmt.Fprintf(stdout, "; drafted %d, kept %d (%s)\n", drafted, kept, rate)
	return nil
}

func meanK(st engine.Stats) string {
	if st.SpecSteps == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f", float64(st.Drafted)/float64(st.SpecSteps))
}

// specTerms are formula 9's measured terms of a generation: mean drafts
// per drafting step K, seconds per drafted token and per verification
// step (ok false when nothing was drafted).
func specTerms(st engine.Stats) (k, tDraft, tTarget float64, ok bool) {
	if st.SpecSteps == 0 || st.Drafted == 0 {
		return 0, 0, 0, false
	}
	return float64(st.Drafted) / float64(st.SpecSteps), st.DraftTime.Seconds() / float64(st.Drafted),
		st.VerifyTime.Seconds() / float64(st.SpecSteps), true
}

// formula9 is Inferflow's prediction of the speed-up, N/(r(K+1)) ·
// (K·t_draft + t_target) for N tokens against N·t_plain, from a
// generation's own measurements; "—" without them.
func formula9(st engine.Stats) string {
	k, td, tt, ok := specTerms(st)
	if !ok || st.PlainTPS <= 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f×", st.AcceptRate()*(k+1)/st.PlainTPS/(k*td+tt))
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	m, _ := medianStd(xs)
	return m
}

// specBenchPrompt is the default prompt of bench's speculative rounds
// (docs/PERFORMANCE.md's issue 14 runs).
const specBenchPrompt = "Once upon a time there was a little robot. It liked to repeat things."
