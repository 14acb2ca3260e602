package remoteui

import (
	"context"
	"errors"
	"strings"
	"testing"

	"flowchat/app/presets"
	"flowchat/app/remote"
	"flowchat/app/remote/remotetest"
	"flowchat/app/store"
	"flowchat/ui"
)

func connect(t *testing.T, s *remotetest.Server, model string) (ui.RemoteEngine, error) {
	keys := store.Keys{Dir: t.TempDir()}
	return New(keys).Connect(context.Background(), store.Endpoint{ID: "e1", Name: "lab", BaseURL: s.URL}, model)
}

func TestEngineExplainsFromLogprobs(t *testing.T) {
	s := remotetest.New(remotetest.LlamaCpp, "m.gguf")
	defer s.Close()
	s.Logprobs = true
	e, err := connect(t, s, "m.gguf")
	if err != nil {
		t.Fatal(err)
	}
	if e.Endpoint() != "lab" || !strings.Contains(e.Device(), "llama.cpp") || e.Info().Name != "m.gguf" {
		t.Errorf("%s %s %+v", e.Endpoint(), e.Device(), e.Info())
	}
	var text strings.Builder
	var steps []ui.Explanation
	req := ui.Request{Messages: []ui.Message{{Role: "user", Content: "hi"}}, Sampling: presets.Default(),
		OnExplain: func(x ui.Explanation) { steps = append(steps, x) }}
	st, err := e.Generate(context.Background(), req, func(p string) { text.WriteString(p) })
	if err != nil || text.String() != "Hello, world!" || st.StopReason != ui.StopEOG || st.GenTokens != 4 {
		t.Fatalf("%q %+v %v", text.String(), st, err)
	}
	if len(steps) != 4 || steps[0].Chosen != "Hello" || len(steps[0].Stages[0].Candidates) != 10 || !steps[0].Stages[0].Candidates[0].Chosen {
		t.Fatalf("steps %+v", steps)
	}
	var sum float32
	for _, c := range steps[0].Stages[0].Candidates {
		sum += c.P
	}
	if sum < 0.999 || sum > 1.001 {
		t.Errorf("probabilities sum to %v", sum)
	}
	if _, err := e.Explain(context.Background(), req); err == nil || !strings.Contains(err.Error(), "top_logprobs") {
		t.Errorf("Explain: %v", err)
	}
	// llama-server honours everything but tail-free sampling and FSD.
	un := e.Unsupported()
	if un["tfs_z"] == "" || un["fsd_k"] == "" || un["top_k"] != "" || un["dry_base"] != "" {
		t.Errorf("unsupported %v", un)
	}
}

func TestEngineFailures(t *testing.T) {
	s := remotetest.New(remotetest.Ollama, "llama3.2")
	defer s.Close()
	if _, err := connect(t, s, "nope"); !errors.Is(err, remote.ErrUnknownModel) {
		t.Errorf("unknown model: %v", err)
	}
	e, err := connect(t, s, "llama3.2")
	if err != nil {
		t.Fatal(err)
	}
	if un := e.Unsupported(); un["mirostat_tau"] != "" || un["xtc_threshold"] == "" || un["logit_bias"] == "" {
		t.Errorf("ollama unsupported %v", un)
	}
	s.CutAfter = 1
	var text strings.Builder
	st, err := e.Generate(context.Background(), ui.Request{Messages: []ui.Message{{Role: "user", Content: "hi"}}, Sampling: presets.Default()},
		func(p string) { text.WriteString(p) })
	if !errors.Is(err, remote.ErrDisconnected) || text.String() != "Hello" || st.StopReason != ui.StopCancelled {
		t.Errorf("cut: %q %+v %v", text.String(), st, err)
	}
}
