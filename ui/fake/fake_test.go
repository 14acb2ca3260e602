package fake

import (
	"context"
	"errors"
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
	st, err := e.Generate(context.Background(), msgs, func(p string) { got = append(got, p) })
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []string{"one", " two"}) || st.GenTokens != 2 || st.PromptTokens != 2 {
		t.Errorf("pieces %q, stats %+v; want [one  two], 2 generated, 2 prompt", got, st)
	}
	if calls := e.Calls(); len(calls) != 1 || !reflect.DeepEqual(calls[0], msgs) {
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
		_, err := e.Generate(ctx, nil, func(p string) { got = append(got, p) })
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
