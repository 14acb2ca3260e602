package fake

import (
	"math"

	"context"
	"errors"
	"flowchat/app/presets"
	"reflect"
	"strings"
	"testing"

	"flowchat/ui"
)

func TestPieces(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"Hello, world!", []string{"Hello", ",", " world", "!"}},
		{"  two  spaces\n", []string{"  two", "  spaces", "\n"}},
		{"**x1** é", []string{"*", "*", "x1", "*", "*", " é"}},
	}
	for _, tt := range tests {
		if got := Pieces(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Pieces(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzPiecesRoundTrip(f *testing.F) {
	for _, s := range []string{"Hello, world!", " a\tb\n", "\xff\xfe x", "日本語 text"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ps := Pieces(s)
		if got := strings.Join(ps, ""); got != s {
			t.Fatalf("join(Pieces(%q)) = %q", s, got)
		}
		for _, p := range ps {
			if p == "" {
				t.Fatalf("Pieces(%q) has an empty piece", s)
			}
		}
	})
}

func TestGenerateStreamsAndCounts(t *testing.T) {
	e := &Engine{Reply: func([]ui.Message) string { return "one two" }}
	msgs := []ui.Message{{Role: ui.RoleUser, Content: "hi there"}}
	var got []string
	st, err := e.Generate(context.Background(), ui.Request{Messages: msgs}, func(p string) { got = append(got, p) })
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []string{"one", " two"}) || st.GenTokens != 2 || st.PromptTokens != 2+PerMessageTokens {
		t.Errorf("pieces %q, stats %+v; want [one  two], 2 generated, 2 prompt", got, st)
	}
	if calls := e.Calls(); len(calls) != 1 || !reflect.DeepEqual(calls[0].Messages, msgs) {
		t.Errorf("Calls() = %v", calls)
	}
}

func TestGenerateStopsOnCancel(t *testing.T) {
	gate := make(chan struct{})
	e := &Engine{Reply: func([]ui.Message) string { return "a b c" }, Gate: gate}
	ctx, cancel := context.WithCancel(context.Background())
	var got []string
	done := make(chan error)
	go func() {
		_, err := e.Generate(ctx, ui.Request{}, func(p string) { got = append(got, p) })
		done <- err
	}()
	gate <- struct{}{}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Generate after cancel = %v, want context.Canceled", err)
	}
	if !reflect.DeepEqual(got, []string{"a"}) {
		t.Errorf("pieces before cancel = %q, want [a]", got)
	}
}

func TestGenerateHonoursMaxTokens(t *testing.T) {
	e := &Engine{Reply: func([]ui.Message) string { return "a b c d" }}
	req := ui.Request{Sampling: presets.Default()}
	req.Sampling.MaxTokens = 2
	var got []string
	st, _ := e.Generate(context.Background(), req, func(p string) { got = append(got, p) })
	if len(got) != 2 || st.StopReason != ui.StopLength {
		t.Errorf("pieces %q, stop %q; want 2 pieces, length", got, st.StopReason)
	}
}

// TestDistributionStages checks the fake chain against hand-computed
// values: top-k 2 keeps 0.40 and 0.25, renormalised to 8/13 and 5/13.
func TestDistributionStages(t *testing.T) {
	p := presets.Default()
	p.TopK, p.Temperature = 2, 1
	exp := Distribution(p)
	if len(exp.Stages) != 2 || exp.Stages[0].Stage != "top_k" || exp.Stages[0].Out != 2 {
		t.Fatalf("stages %+v", exp.Stages)
	}
	c := exp.Stages[0].Candidates
	if math.Abs(float64(c[0].P)-8.0/13) > 1e-6 || math.Abs(float64(c[1].P)-5.0/13) > 1e-6 || c[2].Kept {
		t.Errorf("top_k candidates %+v", c)
	}
}
