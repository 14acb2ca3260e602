package presets

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"

	"flowchat/engine/sample"
)

// jsonKeys lists the JSON names of t's fields.
func jsonKeys(t reflect.Type) []string {
	var keys []string
	for i := range t.NumField() {
		keys = append(keys, t.Field(i).Tag.Get("json"))
	}
	slices.Sort(keys)
	return keys
}

// TestMirrorsSampleParams guards the mirror: every field of sample.Params
// has a twin here with the same JSON name and Go type, and only MaxTokens
// is extra.
func TestMirrorsSampleParams(t *testing.T) {
	st, pt := reflect.TypeOf(sample.Params{}), reflect.TypeOf(Params{})
	want := append(jsonKeys(st), "max_tokens")
	slices.Sort(want)
	if got := jsonKeys(pt); !slices.Equal(got, want) {
		t.Fatalf("presets.Params JSON fields\n got %v\nwant %v", got, want)
	}
	for i := range st.NumField() {
		sf := st.Field(i)
		pf, ok := pt.FieldByName(sf.Name)
		if !ok || pf.Type != sf.Type {
			t.Errorf("field %s: sample has %v, presets has %v (found %v)", sf.Name, sf.Type, pf.Type, ok)
		}
	}
}

func toSample(t *testing.T, p Params) sample.Params {
	t.Helper()
	p.LogitBias = nil // encoded differently (see MarshalJSON); no preset has one
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var s sample.Params
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDefaultIsSampleDefault(t *testing.T) {
	if got, want := toSample(t, Default()), sample.DefaultParams(); !reflect.DeepEqual(got, want) {
		t.Errorf("Default() as sample.Params\n got %+v\nwant %+v", got, want)
	}
}

func TestBuiltinsAreValidAndDistinct(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range Builtin() {
		if err := toSample(t, p.Params).Validate(); err != nil {
			t.Errorf("preset %q: %v", p.Name, err)
		}
		if seen[p.Name] || p.Description == "" || !p.Builtin {
			t.Errorf("preset %q: duplicate, undescribed or not marked built-in", p.Name)
		}
		seen[p.Name] = true
	}
	if _, ok := Find(Builtin(), "Balanced"); !ok {
		t.Error("no Balanced preset")
	}
}

func TestCloneSharesNothing(t *testing.T) {
	a := Default()
	a.LogitBias = map[int32]float32{5: -1}
	a.Order = []string{"top_k"}
	b := a.Clone()
	b.LogitBias[5] = 2
	b.DRYSequenceBreakers[0] = "x"
	b.Order[0] = "min_p"
	if a.LogitBias[5] != -1 || a.DRYSequenceBreakers[0] != "\n" || a.Order[0] != "top_k" {
		t.Errorf("Clone shares memory with the original: %+v", a)
	}
}

func TestLogitBiasBansSurviveJSON(t *testing.T) {
	p := Default()
	p.LogitBias = map[int32]float32{7: float32(math.Inf(-1)), 15: 1.5}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var q Params
	if err := json.Unmarshal(b, &q); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(p, q) {
		t.Errorf("round trip\n got %+v\nwant %+v", q, p)
	}
	if !strings.Contains(string(b), `"7":"-inf"`) {
		t.Errorf("ban encoded as %s", b)
	}
}

// TestFitContext: the default reply length, or one the context cannot hold,
// becomes a quarter of the context (at most the default); a choice that
// fits, and 0 (no limit), are kept.
func TestFitContext(t *testing.T) {
	for _, c := range []struct{ max, ctx, want int }{
		{DefaultMaxTokens, 512, 128},
		{DefaultMaxTokens, 4096, DefaultMaxTokens},
		{DefaultMaxTokens, 32768, DefaultMaxTokens},
		{600, 512, 128},
		{300, 512, 300},
		{0, 512, 0},
		{2000, 8192, 2000},
		{DefaultMaxTokens, 0, DefaultMaxTokens}, // no model: nothing to fit
	} {
		p := Default()
		p.MaxTokens = c.max
		if got := p.FitContext(c.ctx).MaxTokens; got != c.want {
			t.Errorf("MaxTokens %d on %d: %d, want %d", c.max, c.ctx, got, c.want)
		}
	}
}
