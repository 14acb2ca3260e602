package ui

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"flowchat/app/presets"
)

// textSpec is a sampling setting typed as text: the stage order, logit
// biases, DRY's sequence breakers.
type textSpec struct {
	key, label, help, placeholder string
	format                        func(*presets.Params) string
	parse                         func(*presets.Params, string) error
}

var textSpecs = []textSpec{
	{key: "samplers", label: "Stage order",
		help:        "Comma-separated stages, run in this order; empty = the default order. Stages: penalties, dry, top_k, tfs_z, typical_p, top_p, min_p, xtc, temperature.",
		placeholder: "penalties, dry, top_k, tfs_z, typical_p, top_p, min_p, xtc, temperature",
		format:      func(p *presets.Params) string { return strings.Join(p.Order, ", ") },
		parse: func(p *presets.Params, s string) error {
			p.Order = nil
			for _, f := range strings.Split(s, ",") {
				if f = strings.TrimSpace(f); f != "" {
					p.Order = append(p.Order, f)
				}
			}
			return nil
		}},
	{key: "logit_bias", label: "Logit bias",
		help:        "Token id = bias pairs added to the logits; -inf bans a token. Example: 15043=+1, 29871=-inf",
		placeholder: "15043=+1, 29871=-inf",
		format:      formatBias, parse: parseBias},
	{key: "dry_sequence_breakers", label: "DRY breakers",
		help:        "Texts that end a repeat for DRY, as a JSON list of strings.",
		placeholder: `["\n", ":", "\"", "*"]`,
		format: func(p *presets.Params) string {
			b, _ := json.Marshal(p.DRYSequenceBreakers)
			return string(b)
		},
		parse: func(p *presets.Params, s string) error {
			var v []string
			if strings.TrimSpace(s) == "" {
				p.DRYSequenceBreakers = nil
				return nil
			}
			if err := json.Unmarshal([]byte(s), &v); err != nil {
				return fmt.Errorf("want a JSON list of strings such as %s", `["\n", ":"]`)
			}
			p.DRYSequenceBreakers = v
			return nil
		}},
}

func formatBias(p *presets.Params) string {
	var parts []string
	for _, id := range slices.Sorted(maps.Keys(p.LogitBias)) {
		parts = append(parts, fmt.Sprintf("%d=%s", id, strconv.FormatFloat(float64(p.LogitBias[id]), 'g', -1, 32)))
	}
	return strings.Join(parts, ", ")
}

func parseBias(p *presets.Params, s string) error {
	out := map[int32]float32{}
	for _, kv := range strings.Split(s, ",") {
		if strings.TrimSpace(kv) == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		id, err1 := strconv.ParseInt(strings.TrimSpace(k), 10, 32)
		f, err2 := strconv.ParseFloat(strings.TrimSpace(v), 32)
		if !ok || err1 != nil || err2 != nil || math.IsNaN(f) {
			return fmt.Errorf("%q: want TOKEN=BIAS pairs like 15043=+1", strings.TrimSpace(kv))
		}
		out[int32(id)] = float32(f)
	}
	p.LogitBias = out
	if len(out) == 0 {
		p.LogitBias = nil
	}
	return nil
}
