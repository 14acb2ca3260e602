package sample

import (
	"fmt"
	"strings"
)

// stageID names one stage of the chain; the order of a Sampler is a
// []stageID fixed at New.
type stageID uint8

const (
	stPenalties stageID = iota
	stDRY
	stTopK
	stTFS
	stTypical
	stTopP
	stMinP
	stXTC
	stTemperature
	nStages
)

var stageNames = [nStages]string{StagePenalties, StageDRY, StageTopK, StageTFS, StageTypical, StageTopP, StageMinP, StageXTC, StageTemperature}

func (id stageID) String() string { return stageNames[id] }

// stageAliases maps the spellings users type (llama.cpp's --samplers names,
// dashes for underscores) onto the canonical stage.
var stageAliases = map[string]stageID{
	"penalties": stPenalties, "dry": stDRY,
	"top_k": stTopK, "k": stTopK,
	"tfs_z": stTFS, "tfs": stTFS, "tail_free": stTFS,
	"typical_p": stTypical, "typical": stTypical, "locally_typical": stTypical, "y": stTypical,
	"top_p": stTopP, "p": stTopP, "nucleus": stTopP,
	"min_p": stMinP, "m": stMinP,
	"xtc": stXTC, "x": stXTC,
	"temperature": stTemperature, "temp": stTemperature, "t": stTemperature,
}

// parseOrder turns stage names into ids; nil means DefaultOrder.
func parseOrder(names []string) ([]stageID, error) {
	if names == nil {
		names = DefaultOrder
	}
	ids := make([]stageID, 0, len(names))
	var seen [nStages]bool
	for _, name := range names {
		id, ok := stageAliases[strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), "-", "_")]
		if !ok {
			return nil, fmt.Errorf("%w: unknown sampler stage %q (known: %s)", ErrInvalidParams, name, strings.Join(DefaultOrder, ", "))
		}
		if seen[id] {
			return nil, fmt.Errorf("%w: sampler stage %q listed twice", ErrInvalidParams, name)
		}
		seen[id] = true
		ids = append(ids, id)
	}
	return ids, nil
}
