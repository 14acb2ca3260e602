package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/adrg/xdg"

	"flowchat/app/presets"
)

// Settings are the user's choices that outlive a session.
type Settings struct {
	Version   int    `json:"version"`
	LastModel string `json:"last_model,omitempty"` // path of the model loaded last
	// ModelFiles are model files the user opened from elsewhere, so the
	// model panel lists them again.
	ModelFiles  []string                 `json:"model_files,omitempty"`
	Models      map[string]ModelSettings `json:"models,omitempty"` // by ModelKey
	UserPresets []presets.Preset         `json:"user_presets,omitempty"`
	// LastConversation is reopened at start.
	LastConversation string `json:"last_conversation,omitempty"`
	// ExplainLive makes the next-token chart follow a reply as it streams
	// (an explanation per token costs decode speed on large vocabularies).
	ExplainLive bool `json:"explain_live,omitempty"`
	// Endpoints are the remote inference servers the user named (their
	// API keys are in Keys, never here).
	Endpoints []Endpoint `json:"endpoints,omitempty"`
	// WelcomeShown: the welcome screen was shown at a first start (Help ▸
	// Welcome opens it again).
	WelcomeShown bool `json:"welcome_shown,omitempty"`
}

// ModelSettings are remembered per model.
type ModelSettings struct {
	Preset   string         `json:"preset,omitempty"` // name of the preset last applied
	Sampling presets.Params `json:"sampling"`
	Load     LoadSettings   `json:"load"`
}

// LoadSettings are the load dialog's choices. Zero means "default". The
// GUI converts them to and from its LoadOptions, so the fields match.
type LoadSettings struct {
	Context   int    `json:"context,omitempty"`    // tokens
	Threads   int    `json:"threads,omitempty"`    // forward-pass goroutines
	GPULayers int    `json:"gpu_layers,omitempty"` // layers offloaded; 0 = CPU only
	GPUAuto   bool   `json:"gpu_auto,omitempty"`   // offload as many layers as fit the free GPU memory
	Quant     string `json:"quant,omitempty"`      // re-quantize at load; "" = as stored
	KVType    string `json:"kv_type,omitempty"`    // KV cache type; "" = default
	Mmap      bool   `json:"mmap,omitempty"`       // decode from the file mapping
	// Speculative decoding: Draft is "", "ngram", "self" (a lower-bit
	// copy, DraftQuant) or "model" (DraftModel, a file of the same
	// vocabulary); DraftN tokens drafted per step at the start; SpecAccept
	// strict, top-k or top-p.
	Draft      string `json:"draft,omitempty"`
	DraftQuant string `json:"draft_quant,omitempty"`
	DraftModel string `json:"draft_model,omitempty"`
	DraftN     int    `json:"draft_n,omitempty"`
	SpecAccept string `json:"spec_accept,omitempty"`
	// Devices offloaded layers go to ("cuda:0", "hip:1", "cpu:1"), in
	// order; none = the default device. Split is a share per device
	// (none = equal), SplitMode "layer" (""), "tensor" or "hybrid", and
	// TensorGroup hybrid's devices per group.
	Devices     []string  `json:"devices,omitempty"`
	Split       []float64 `json:"split,omitempty"`
	SplitMode   string    `json:"split_mode,omitempty"`
	TensorGroup int       `json:"tensor_group,omitempty"`
}

// ModelKey names a model file in Settings.Models: its base name, so that
// moving a file keeps its settings.
func ModelKey(path string) string { return filepath.Base(path) }

// Model returns the settings remembered for the model at path, with the
// default sampling parameters when there are none.
func (s *Settings) Model(path string) (ModelSettings, bool) {
	m, ok := s.Models[ModelKey(path)]
	if !ok {
		return ModelSettings{Preset: "Balanced", Sampling: presets.Default()}, false
	}
	return m, true
}

// SetModel remembers m for the model at path.
func (s *Settings) SetModel(path string, m ModelSettings) {
	if s.Models == nil {
		s.Models = map[string]ModelSettings{}
	}
	s.Models[ModelKey(path)] = m
}

// Clone returns a deep copy, safe to hand to the saving goroutine.
func (s Settings) Clone() Settings {
	s.ModelFiles = append([]string(nil), s.ModelFiles...)
	s.Endpoints = append([]Endpoint(nil), s.Endpoints...)
	models := make(map[string]ModelSettings, len(s.Models))
	for k, m := range s.Models {
		m.Sampling = m.Sampling.Clone()
		m.Load.Devices = append([]string(nil), m.Load.Devices...)
		m.Load.Split = append([]float64(nil), m.Load.Split...)
		models[k] = m
	}
	s.Models = models
	ups := make([]presets.Preset, len(s.UserPresets))
	for i, p := range s.UserPresets {
		p.Params = p.Params.Clone()
		ups[i] = p
	}
	s.UserPresets = ups
	return s
}

// SettingsFile is the settings file at a path.
type SettingsFile struct{ Path string }

// Load reads the settings; a missing file gives the zero Settings.
func (f SettingsFile) Load() (Settings, error) {
	var s Settings
	b, err := os.ReadFile(f.Path)
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("settings: %w", err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return Settings{}, fmt.Errorf("settings %s: %w", f.Path, err)
	}
	for i := range s.UserPresets {
		s.UserPresets[i].Builtin = false
	}
	return s, nil
}

// Save writes the settings atomically.
func (f SettingsFile) Save(s Settings) error {
	s.Version = 1
	b, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(f.Path), 0o755); err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	if err := WriteFileAtomic(f.Path, b); err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	return nil
}

// Locations are where flowchat keeps its files.
type Locations struct {
	Conversations string // directory
	Settings      string // file
	Keys          string // directory of API keys, 0700
}

// DefaultLocations follow the XDG base directory spec (and its macOS and
// Windows equivalents through adrg/xdg): conversations under the data
// directory, settings under the config directory.
func DefaultLocations() Locations {
	return Locations{
		Conversations: filepath.Join(xdg.DataHome, "flowchat", "conversations"),
		Settings:      filepath.Join(xdg.ConfigHome, "flowchat", "settings.json"),
		Keys:          filepath.Join(xdg.ConfigHome, "flowchat", "keys"),
	}
}
