package presets

import (
	"encoding/json"
	"fmt"
	"math"
)

// MarshalJSON writes Params with infinite logit biases as the strings
// "-inf" and "inf": a ban (-Inf) is a valid bias that JSON numbers cannot
// hold. Everything else is encoded as usual.
func (p Params) MarshalJSON() ([]byte, error) {
	type plain Params
	return json.Marshal(struct {
		plain
		LogitBias map[int32]bias `json:"logit_bias"`
	}{plain(p), toBias(p.LogitBias)})
}

// UnmarshalJSON reads what MarshalJSON writes (and plain numbers).
func (p *Params) UnmarshalJSON(b []byte) error {
	type plain Params
	v := struct {
		*plain
		LogitBias map[int32]bias `json:"logit_bias"`
	}{plain: (*plain)(p)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	p.LogitBias = nil
	if v.LogitBias != nil {
		p.LogitBias = make(map[int32]float32, len(v.LogitBias))
		for k, x := range v.LogitBias {
			p.LogitBias[k] = float32(x)
		}
	}
	return nil
}

// bias is a float32 that JSON-encodes infinities as strings.
type bias float32

func toBias(m map[int32]float32) map[int32]bias {
	if m == nil {
		return nil
	}
	out := make(map[int32]bias, len(m))
	for k, v := range m {
		out[k] = bias(v)
	}
	return out
}

func (b bias) MarshalJSON() ([]byte, error) {
	switch f := float64(b); {
	case math.IsInf(f, -1):
		return []byte(`"-inf"`), nil
	case math.IsInf(f, 1):
		return []byte(`"inf"`), nil
	}
	return json.Marshal(float32(b))
}

func (b *bias) UnmarshalJSON(data []byte) error {
	switch string(data) {
	case `"-inf"`:
		*b = bias(math.Inf(-1))
		return nil
	case `"inf"`:
		*b = bias(math.Inf(1))
		return nil
	}
	var f float32
	if err := json.Unmarshal(data, &f); err != nil {
		return fmt.Errorf("logit bias: %w", err)
	}
	*b = bias(f)
	return nil
}
