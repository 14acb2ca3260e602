package model

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"flowchat/engine/fixtures"
	"flowchat/engine/gguf"
	"flowchat/engine/sample"
)

// refCase is one llama.cpp reference case (reference/*/*.json).
type refCase struct {
	Model           string  `json:"model"`
	InputIDs        []int32 `json:"input_ids"`
	PromptArgmax    []int32 `json:"prompt_argmax"`
	GeneratedIDs    []int32 `json:"generated_ids"`
	NVocab          int     `json:"n_vocab"`
	PromptLogitFile string  `json:"prompt_logits_file"`
	StepLogitFile   string  `json:"step_logits_file"`
}

func argmax(x []float32) int32 { return sample.Greedy(x) }

// modelPath resolves a case's model path against the shared testdata.
func modelPath(t *testing.T, root, casePath, model string) string {
	model = strings.TrimPrefix(model, "models/")
	for _, p := range []string{
		filepath.Join(root, model),
		filepath.Join(root, "models", model),
	} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	// Trained cases name the file only; find it by name.
	base := filepath.Base(model)
	matches, _ := filepath.Glob(filepath.Join(root, "models", "*", base))
	if len(matches) == 1 {
		return matches[0]
	}
	t.Fatalf("%s: model %s not found", casePath, model)
	return ""
}

type tolerance struct {
	rel       float64 // per-position relative RMS error
	argmaxPct float64 // share of positions whose argmax must agree
}

func isFloatType(dir string) bool {
	return dir == "F32" || dir == "F16" || dir == "BF16"
}

// checkCase compares one case's prompt logits and greedy continuation and
// returns how many positions' argmax agree with the reference, of how many.
func checkCase(t *testing.T, root, casePath string, tol tolerance) (agree, total int) {
	var c refCase
	data, err := os.ReadFile(casePath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	if c.PromptLogitFile == "" {
		t.Skip("no prompt logits")
	}
	total = len(c.InputIDs)
	f, err := gguf.Open(modelPath(t, root, casePath, c.Model))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := FromGGUF(f, nil, Options{Threads: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ref := fixtures.ReadF32(t, filepath.Join(filepath.Dir(casePath), c.PromptLogitFile))
	s := m.NewState(256, 64)
	got, err := s.Forward(c.InputIDs, true)
	if err != nil {
		t.Fatal(err)
	}
	V := m.NVocab
	if len(got) != len(ref) {
		t.Fatalf("logits %d values, reference %d", len(got), len(ref))
	}
	worst := 0.0
	for p := 0; p < len(c.InputIDs); p++ {
		e := fixtures.RelRMS(got[p*V:(p+1)*V], ref[p*V:(p+1)*V])
		worst = max(worst, e)
		if argmax(got[p*V:(p+1)*V]) == argmax(ref[p*V:(p+1)*V]) {
			agree++
		}
	}
	t.Logf("worst rel RMS %.2e, argmax agreement %d/%d", worst, agree, total)
	if !(worst <= tol.rel) { // NaN fails too
		t.Errorf("worst rel RMS %.3e (limit %.0e)", worst, tol.rel)
	}
	// Greedy continuation from the prompt, one token at a time.
	if len(c.GeneratedIDs) > 0 {
		tok := argmax(got[(len(c.InputIDs)-1)*V:])
		for i, want := range c.GeneratedIDs {
			if tok != want {
				if isFloat := tol.rel <= 1e-3; isFloat {
					t.Errorf("greedy token %d = %d, want %d", i, tok, want)
				} else {
					t.Logf("greedy diverges at %d (quantized: informational)", i)
				}
				break
			}
			l, err := s.Forward([]int32{tok}, false)
			if err != nil {
				t.Fatal(err)
			}
			tok = argmax(l)
		}
	}
	return agree, total
}

// runGroup checks every case of one model file and the argmax agreement
// over all their positions together; it returns the group's counts.
func runGroup(t *testing.T, root, name string, cases []string, tol tolerance) (agree, total int) {
	t.Run(name, func(t *testing.T) {
		for _, cp := range cases {
			t.Run(filepath.Base(cp), func(t *testing.T) {
				a, n := checkCase(t, root, cp, tol)
				agree, total = agree+a, total+n
			})
		}
		// Per file a quantized model may lose a near-tie or two; over all
		// quantized positions the 95% must hold (checked by the caller).
		perFile := tol.argmaxPct
		if perFile < 1 {
			perFile = 0.9
		}
		if total > 0 && float64(agree) < perFile*float64(total) {
			t.Errorf("argmax agrees at %d of %d positions (need %.0f%%)", agree, total, 100*perFile)
		}
	})
	return agree, total
}

// quantTally sums argmax agreement over all quantized files.
type quantTally struct{ agree, total int }

func (q *quantTally) add(a, n int) { q.agree += a; q.total += n }

func (q *quantTally) check(t *testing.T) {
	t.Logf("quantized files: argmax agrees at %d of %d positions", q.agree, q.total)
	if q.total > 0 && float64(q.agree) < 0.95*float64(q.total) {
		t.Errorf("quantized argmax agreement %d/%d is below 95%%", q.agree, q.total)
	}
}

// groupCases maps a model directory to its case files.
func groupCases(paths []string) (names []string, groups map[string][]string) {
	groups = map[string][]string{}
	for _, p := range paths {
		d := filepath.Dir(p)
		if groups[d] == nil {
			names = append(names, d)
		}
		groups[d] = append(groups[d], p)
	}
	return names, groups
}

func TestArchReference(t *testing.T) {
	root := fixtures.Shared(t)
	base := filepath.Join(root, "reference", "arch")
	paths, _ := filepath.Glob(filepath.Join(base, "*", "s*.json"))
	qp, _ := filepath.Glob(filepath.Join(base, "llama-gqa", "*", "s*.json"))
	names, groups := groupCases(append(paths, qp...))
	var q quantTally
	for _, d := range names {
		name := strings.TrimPrefix(d, base+"/")
		if name == "bert" || name == "t5" {
			continue // encoder networks: the formats issue
		}
		tol := tolerance{1e-3, 1}
		if strings.HasPrefix(name, "llama-gqa/") && name != "llama-gqa/F32" {
			tol = tolerance{3e-2, 0.95}
			q.add(runGroup(t, root, name, groups[d], tol))
			continue
		}
		runGroup(t, root, name, groups[d], tol)
	}
	q.check(t)
}

func TestTrainedReference(t *testing.T) {
	root := fixtures.Shared(t)
	base := filepath.Join(root, "reference", "trained")
	paths, _ := filepath.Glob(filepath.Join(base, "*", "*", "p*.json"))
	names, groups := groupCases(paths)
	var q quantTally
	for _, d := range names {
		name := strings.TrimPrefix(d, base+"/")
		if !isFloatType(filepath.Base(d)) {
			q.add(runGroup(t, root, name, groups[d], tolerance{3e-2, 0.95}))
			continue
		}
		runGroup(t, root, name, groups[d], tolerance{1e-3, 1})
	}
	q.check(t)
}
