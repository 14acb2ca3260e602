package main

import (
	"context"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"flowchat/app/hub"
	"flowchat/app/presets"
	"flowchat/engine"
	"flowchat/engine/fixtures"
	"flowchat/engine/gguf"
	"flowchat/ui"
)

func demoLibrary(t *testing.T) (*guiLibrary, string) {
	t.Helper()
	demo, err := demoModelPath()
	if err != nil {
		t.Fatal(err)
	}
	return &guiLibrary{demo: demo, threads: 1}, demo
}

// TestDescribeMatchesLoad: the header-only description the model panel
// lists agrees with what loading the model reports.
func TestDescribeMatchesLoad(t *testing.T) {
	lib, demo := demoLibrary(t)
	got, err := lib.Describe(demo)
	if err != nil {
		t.Fatal(err)
	}
	m, err := engine.Load(demo, engine.LoadOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	i := m.Info
	if got.Name != i.Name || got.Arch != i.Arch || got.Layers != i.Layers || got.ContextTrain != i.ContextTrain || got.FileSize != i.FileSize || !got.Bundled {
		t.Errorf("Describe = %+v\nLoad info = %+v", got, i)
	}
	if !strings.HasPrefix(i.Quant, got.Quant) {
		t.Errorf("quant %q, engine says %q", got.Quant, i.Quant)
	}
	if _, err := lib.Describe(demo + ".missing"); err == nil {
		t.Error("Describe of a missing file succeeded")
	}
	// The model list comes from the library's scan (downloads, the HF
	// cache, added folders; the demo model lives among the downloads).
	t.Setenv("HF_HUB_CACHE", t.TempDir())
	models, err := lib.Models()
	if err != nil || len(models) != 1 || models[0].Path != demo {
		t.Fatalf("Models() = %+v, %v; want the demo model", models, err)
	}
	l := models[0]
	if l.Name != got.Name || l.Arch != got.Arch || l.Params != got.Params || l.Layers != got.Layers || l.ContextTrain != got.ContextTrain || !l.Bundled {
		t.Errorf("library lists %+v\nheader says %+v", l, got)
	}
}

func TestEstimateGrowsWithContextAndMovesToGPU(t *testing.T) {
	lib, demo := demoLibrary(t)
	info, _ := lib.Describe(demo)
	small := lib.Estimate(info, ui.LoadOptions{Context: 128})
	big := lib.Estimate(info, ui.LoadOptions{Context: 256})
	half := lib.Estimate(info, ui.LoadOptions{Context: 256, GPULayers: info.Layers / 2})
	if small.RAM < uint64(info.FileSize)/2 || big.RAM <= small.RAM || small.VRAM != 0 {
		t.Errorf("CPU estimates %+v (ctx 128) %+v (ctx 256) for a %d-byte file", small, big, info.FileSize)
	}
	// The weights and KV cache of the offloaded blocks move; the GPU side
	// is the Discover screen's estimate, with its buffers and overhead.
	h, err := readHeader(demo)
	if err != nil {
		t.Fatal(err)
	}
	hubEst := hub.EstimateMemory(h, hub.EstimateOptions{Context: 256, GPULayers: info.Layers / 2})
	if len(half.Devices) != 1 || half.RAM+half.Devices[0].Weights+half.Devices[0].KV != big.RAM || half.VRAM != hubEst.VRAM {
		t.Errorf("half offloaded %+v vs CPU %+v: bytes should move, not appear; hub's VRAM %d", half, big, hubEst.VRAM)
	}
}

func TestValidateSamplingUsesEngineRanges(t *testing.T) {
	lib := &guiLibrary{}
	for _, p := range presets.Builtin() {
		if err := lib.ValidateSampling(p.Params); err != nil {
			t.Errorf("preset %s: %v", p.Name, err)
		}
	}
	p := presets.Default()
	p.MinP = 2
	if err := lib.ValidateSampling(p); err == nil || !strings.Contains(err.Error(), "min_p") {
		t.Errorf("min_p 2 gave %v", err)
	}
}

// TestExplainPredictsGreedyReply: under greedy decoding the explanation's
// chosen token is the first piece of the reply that Generate then streams.
func TestExplainPredictsGreedyReply(t *testing.T) {
	lib, demo := demoLibrary(t)
	e, err := lib.Load(context.Background(), demo, ui.LoadOptions{Context: 256, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	p := presets.Default()
	p.Decoding, p.MaxTokens = presets.DecodingGreedy, 8
	// Long enough for whole blocks of 16 tokens, which the prefix cache shares.
	req := ui.Request{Messages: []ui.Message{{Role: ui.RoleUser, Content: "Once upon a time, there was a little girl named Lily who loved to play"}}, Sampling: p}
	exp, err := e.Explain(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(exp.Stages) == 0 || exp.Stages[len(exp.Stages)-1].Stage != "greedy" || exp.Chosen == "" {
		t.Fatalf("explanation %+v", exp)
	}
	var pieces []string
	var steps int
	req.OnExplain = func(ui.Explanation) { steps++ }
	st, err := e.Generate(context.Background(), req, func(s string) { pieces = append(pieces, s) })
	if err != nil {
		t.Fatal(err)
	}
	// The reply's first piece loses its leading space (the detokenizer
	// drops it at the start of a text); the explanation shows the token.
	if len(pieces) == 0 || !strings.HasPrefix(strings.Join(pieces, ""), strings.TrimLeft(exp.Chosen, " ")) {
		t.Errorf("explain chose %q, the reply is %q", exp.Chosen, strings.Join(pieces, ""))
	}
	if st.GenTokens == 0 || st.GenTokens > 8 || steps < st.GenTokens || st.CachedTokens < 16 {
		t.Errorf("stats %+v after %d explained steps; want ≤ 8 tokens and the prompt reused from Explain's cache", st, steps)
	}
	n, err := e.CountTokens(req.Messages)
	if err != nil || n != st.PromptTokens+st.CachedTokens {
		t.Errorf("CountTokens = %d, %v; Generate evaluated %d + %d cached", n, err, st.PromptTokens, st.CachedTokens)
	}
}

func TestGenerateReportsContextFull(t *testing.T) {
	lib, demo := demoLibrary(t)
	e, err := lib.Load(context.Background(), demo, ui.LoadOptions{Context: 32, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	long := strings.Repeat("the little dog ran home. ", 20)
	_, err = e.Generate(context.Background(), ui.Request{Messages: []ui.Message{{Role: ui.RoleUser, Content: long}}, Sampling: presets.Default()}, func(string) {})
	if !errors.Is(err, ui.ErrContextFull) {
		t.Errorf("a prompt longer than the context gave %v, want ui.ErrContextFull", err)
	}
}

func TestToSampleParamsKeepsEveryField(t *testing.T) {
	p := presets.Default()
	p.Temperature, p.TopK, p.Decoding, p.Order = 0.3, 5, presets.DecodingFSD, []string{"min_p"}
	p.LogitBias = map[int32]float32{3: float32(math.Inf(-1))}
	sp, err := toSampleParams(p)
	if err != nil {
		t.Fatal(err)
	}
	if sp.Temperature != 0.3 || sp.TopK != 5 || sp.Decoding != "fsd" || sp.Order[0] != "min_p" || !math.IsInf(float64(sp.LogitBias[3]), -1) {
		t.Errorf("converted %+v", sp)
	}
	if err := sp.Validate(); err != nil {
		t.Error(err)
	}
}

// TestLoadOptionsReachEngine loads the demo model (F32 weights) re-quantized
// to Q8 with an F16 KV cache: the engine reports the new weight type, the
// estimate shrinks about fourfold, and the model still answers.
func TestLoadOptionsReachEngine(t *testing.T) {
	lib, demo := demoLibrary(t)
	info, _ := lib.Describe(demo)
	f32 := lib.Estimate(info, ui.LoadOptions{Context: 64, Mmap: true})
	q8 := lib.Estimate(info, ui.LoadOptions{Context: 64, Mmap: true, Quant: "Q8_0", KVType: "F16"})
	f, err := gguf.Open(demo)
	if err != nil {
		t.Fatal(err)
	}
	h := describeHeader(f)
	f.Close()
	var mats uint64
	for _, n := range h.layerMats {
		mats += n
	}
	mats += h.otherMats
	// F32 → Q8_0 saves 4 − 34/32 bytes per matrix weight; F32 → F16 KV
	// saves 2 bytes per cached value.
	want := float64(mats)*(4-34.0/32) + float64(64*h.kvPerToken*2)
	if got := float64(f32.RAM) - float64(q8.RAM); math.Abs(got-want) > 0.01*want {
		t.Errorf("estimate F32 %d vs Q8_0+F16 KV %d bytes: saves %.0f, want %.0f", f32.RAM, q8.RAM, got, want)
	}
	e, err := lib.Load(context.Background(), demo, ui.LoadOptions{Context: 64, Threads: 1, Quant: "Q8_0", KVType: "F16"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if q := e.Info().Quant; !strings.HasPrefix(q, "Q8_0") {
		t.Errorf("re-quantized model reports %q", q)
	}
	p := presets.Default()
	p.MaxTokens = 4
	st, err := e.Generate(context.Background(), ui.Request{Messages: []ui.Message{{Role: ui.RoleUser, Content: "Once"}}, Sampling: p}, func(string) {})
	if err != nil || st.GenTokens == 0 {
		t.Errorf("generate after load-time quantization: %+v, %v", st, err)
	}
	if _, err := lib.Load(context.Background(), demo, ui.LoadOptions{KVType: "Q5_K"}); err == nil {
		t.Error("an unsupported KV type loaded")
	}
	if c := lib.Choices(); len(c.Quants) < 8 || c.Quants[0].Value != "" || c.KVTypes[0].Value != "F32" {
		t.Errorf("choices %+v", c)
	}
}

// TestExplainIsGenerateFirstStep: the next-token view from the session's
// Explain is exactly the first step Generate then explains (same stages,
// candidates and probabilities), under the default sampler chain; asking
// twice gives the same answer (no token was drawn).
func TestExplainIsGenerateFirstStep(t *testing.T) {
	lib, demo := demoLibrary(t)
	e, err := lib.Load(context.Background(), demo, ui.LoadOptions{Context: 256, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	p := presets.Default()
	p.MaxTokens, p.Seed = 3, 7
	req := ui.Request{Messages: []ui.Message{{Role: ui.RoleUser, Content: "The little dog"}}, Sampling: p}
	exp, err := e.Explain(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	again, err := e.Explain(context.Background(), req)
	if err != nil || !reflect.DeepEqual(again, exp) {
		t.Fatalf("a second Explain differs: %v", err)
	}
	var first *ui.Explanation
	req.OnExplain = func(x ui.Explanation) {
		if first == nil {
			first = &x
		}
	}
	if _, err := e.Generate(context.Background(), req, func(string) {}); err != nil {
		t.Fatal(err)
	}
	if first == nil || !reflect.DeepEqual(*first, exp) {
		t.Errorf("Explain:\n%+v\nGenerate's first step:\n%+v", exp, first)
	}
}

// TestGeneratePrefillProgress: a prompt evaluated in chunks reports its
// progress, growing to the tokens evaluated; a cached prompt reports only
// what is new.
func TestGeneratePrefillProgress(t *testing.T) {
	lib, demo := demoLibrary(t)
	e, err := lib.Load(context.Background(), demo, ui.LoadOptions{Context: 512, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	p := presets.Default()
	p.MaxTokens = 1
	var seen [][2]int
	req := ui.Request{Messages: []ui.Message{{Role: ui.RoleUser, Content: strings.Repeat("Lily and her mom went to the park to play. ", 30)}},
		Sampling: p, OnPrefill: func(done, total int) { seen = append(seen, [2]int{done, total}) }}
	st, err := e.Generate(context.Background(), req, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) < 2 || seen[len(seen)-1] != [2]int{st.PromptTokens, st.PromptTokens} {
		t.Fatalf("prefill reports %v for %d prompt tokens", seen, st.PromptTokens)
	}
	for i := 1; i < len(seen); i++ {
		if seen[i][0] <= seen[i-1][0] || seen[i][1] != st.PromptTokens {
			t.Errorf("reports %v do not grow toward %d", seen, st.PromptTokens)
		}
	}
	seen = nil
	req.Messages = append(req.Messages, ui.Message{Role: ui.RoleAssistant, Content: "ok"}, ui.Message{Role: ui.RoleUser, Content: "More"})
	st, err = e.Generate(context.Background(), req, func(string) {})
	if err != nil || st.CachedTokens == 0 || len(seen) == 0 || seen[len(seen)-1][1] != st.PromptTokens {
		t.Errorf("after the cache: %+v, reports %v, %v", st, seen, err)
	}
}

// TestGUISpeculation: the load dialog's speculative decoding reaches the
// engine: a greedy reply with a lower-bit self-draft is the plain greedy
// reply, and its stats count what was drafted and kept; a draft model of
// another vocabulary fails the load with the reason.
func TestGUISpeculation(t *testing.T) {
	lib, demo := demoLibrary(t)
	p := presets.Default()
	p.Decoding, p.MaxTokens = presets.DecodingGreedy, 48
	req := ui.Request{Messages: []ui.Message{{Role: ui.RoleUser, Content: "Lily and Tom went to the park."}}, Sampling: p}
	reply := func(o ui.LoadOptions) (string, ui.Stats) {
		e, err := lib.Load(context.Background(), demo, o)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		var text string
		st, err := e.Generate(context.Background(), req, func(s string) { text += s })
		if err != nil {
			t.Fatal(err)
		}
		return text, st
	}
	plain, st0 := reply(ui.LoadOptions{Context: 256, Threads: 1})
	spec, st := reply(ui.LoadOptions{Context: 256, Threads: 1, Draft: "self", DraftQuant: "Q4_0", DraftN: 4})
	if spec != plain || st.Drafted == 0 || st.DraftAccepted > st.Drafted || st0.Drafted != 0 {
		t.Errorf("self-draft: %q (drafted %d, kept %d); plain %q (drafted %d)", spec, st.Drafted, st.DraftAccepted, plain, st0.Drafted)
	}
	other := fixtures.Path(t, "models/tinystories-656K/TinyStories-656K-F32.gguf")
	if _, err := lib.Load(context.Background(), demo, ui.LoadOptions{Context: 256, Threads: 1, Draft: "model", DraftModel: other}); err == nil || !strings.Contains(err.Error(), "vocabulary") {
		t.Errorf("a draft model of another vocabulary: %v", err)
	}
}
