// Package hf loads Hugging Face model folders: config.json selects and
// parameterizes a spec (model_type → specs/*.json with model_file_format
// "safetensors", which serves PyTorch .bin checkpoints too), the weights
// come from safetensors or PyTorch files (sharded or not), tokenizer.json
// and tokenizer_config.json give the tokenizer, special tokens and chat
// template, and generation_config.json the end-of-generation ids.
//
// There is no code per family here: everything family-specific is in the
// spec file (tensor names, layout transforms, blocks) or in config.json.
package hf

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"flowchat/engine/model"
	"flowchat/engine/spec"
	"flowchat/engine/tokenizer"
)

// Folder is an opened model folder.
type Folder struct {
	Dir        string
	Config     Config // config.json
	ModelType  string // config.json model_type
	Spec       *spec.Spec
	Weights    *Weights
	Generation Config // generation_config.json (may be empty)
	TokConfig  Config // tokenizer_config.json (may be empty)
}

// IsFolder reports whether path is a model folder, or a checkpoint file
// inside one (a config.json beside it).
func IsFolder(path string) bool {
	return exists(filepath.Join(folderOf(path), "config.json"))
}

func folderOf(path string) string {
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return path
	}
	return filepath.Dir(path)
}

// Open reads a folder's configuration and maps its weights. path may be
// the folder or one of its checkpoint files (then that file is used). sp
// overrides the builtin spec for the folder's model_type when not nil.
func Open(path string, sp *spec.Spec) (*Folder, error) {
	f := &Folder{Dir: folderOf(path), Generation: Config{}, TokConfig: Config{}}
	if err := readJSON(filepath.Join(f.Dir, "config.json"), &f.Config); err != nil {
		return nil, fmt.Errorf("hf: %w", err)
	}
	if f.ModelType = f.Config.Str("model_type"); f.ModelType == "" {
		return nil, fmt.Errorf("hf: %s/config.json has no model_type", f.Dir)
	}
	for name, dst := range map[string]*Config{"generation_config.json": &f.Generation, "tokenizer_config.json": &f.TokConfig} {
		if p := filepath.Join(f.Dir, name); exists(p) {
			if err := readJSON(p, dst); err != nil {
				return nil, fmt.Errorf("hf: %w", err)
			}
		}
	}
	var err error
	if f.Spec = sp; sp == nil {
		if f.Spec, err = spec.ForArchitecture(f.ModelType, "safetensors"); err != nil {
			return nil, fmt.Errorf("hf: %w", err)
		}
		if f.Spec, err = f.Config.SeqSpec(f.Spec); err != nil {
			return nil, fmt.Errorf("hf: %s: %w", f.Dir, err)
		}
	}
	if f.Weights, err = OpenWeights(path); err != nil {
		return nil, fmt.Errorf("hf: %w", err)
	}
	return f, nil
}

// Close releases the weights.
func (f *Folder) Close() error { return f.Weights.Close() }

// ModelConfig is the interpreter's hyperparameters for this folder.
func (f *Folder) ModelConfig() (model.Config, error) {
	return f.Config.ModelConfig(f.Spec, f.ModelType)
}

// Source maps the weights to canonical names through the spec.
func (f *Folder) Source() (*Source, error) {
	c, err := f.ModelConfig()
	if err != nil {
		return nil, err
	}
	return f.Weights.Source(&f.Spec.Network, c.NHead)
}

// Build binds the weights into the network the spec describes.
func (f *Folder) Build(opt model.Options) (*model.Model, error) {
	c, err := f.ModelConfig()
	if err != nil {
		return nil, fmt.Errorf("hf %s: %w", f.Dir, err)
	}
	src, err := f.Weights.Source(&f.Spec.Network, c.NHead)
	if err != nil {
		return nil, fmt.Errorf("hf %s: %w", f.Dir, err)
	}
	return model.Build(f.Spec, c, src, opt)
}

// ErrNoTokenizer is returned when a folder has no tokenizer.json.
var ErrNoTokenizer = errors.New("hf: the model folder has no tokenizer.json")

// Tokenizer builds the tokenizer from tokenizer.json, with special tokens
// and flags from tokenizer_config.json and end-of-generation ids from
// generation_config.json and config.json.
func (f *Folder) Tokenizer() (*tokenizer.Tokenizer, error) {
	p := filepath.Join(f.Dir, "tokenizer.json")
	if !exists(p) {
		return nil, ErrNoTokenizer
	}
	st, err := os.Stat(p)
	if err != nil || st.Size() > maxJSONSize {
		return nil, fmt.Errorf("hf: tokenizer.json: %v (%d bytes)", err, st.Size())
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("hf: %w", err)
	}
	tok, err := tokenizer.FromHFJSON(data, f.tokenizerConfig())
	if err != nil {
		return nil, fmt.Errorf("hf: %s: %w", p, err)
	}
	return tok, nil
}

func (f *Folder) tokenizerConfig() tokenizer.HFConfig {
	tc := f.TokConfig
	c := tokenizer.HFConfig{
		Name: f.ModelType,
		BOS:  tokenText(tc["bos_token"]), EOS: tokenText(tc["eos_token"]),
		UNK: tokenText(tc["unk_token"]), PAD: tokenText(tc["pad_token"]),
	}
	if b, ok := tc["add_bos_token"].(bool); ok {
		c.AddBOS = tokenizer.Bool(b)
	}
	if b, ok := tc["add_eos_token"].(bool); ok {
		c.AddEOS = tokenizer.Bool(b)
	}
	c.EOG = append(f.Generation.IDs("eos_token_id"), f.Config.IDs("eos_token_id")...)
	return c
}

// tokenText reads a special token given as a string or an AddedToken
// object {"content": …}.
func tokenText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case map[string]any:
		s, _ := x["content"].(string)
		return s
	}
	return ""
}

// ChatTemplate is tokenizer_config.json's chat_template ("" if none); of a
// list of named templates, the one named "default".
func (f *Folder) ChatTemplate() string {
	switch t := f.TokConfig["chat_template"].(type) {
	case string:
		return t
	case []any:
		for _, it := range t {
			if m, ok := it.(map[string]any); ok && m["name"] == "default" {
				s, _ := m["template"].(string)
				return s
			}
		}
	}
	if p := filepath.Join(f.Dir, "chat_template.jinja"); exists(p) {
		if b, err := os.ReadFile(p); err == nil && len(b) < 1<<20 {
			return string(b)
		}
	}
	return ""
}

// Name is the folder's base name.
func (f *Folder) Name() string { return filepath.Base(f.Dir) }
