package engine

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"flowchat/engine/chat"
	"flowchat/engine/hf"
	"flowchat/engine/llama2c"
	"flowchat/engine/model"
	"flowchat/engine/spec"
	"flowchat/engine/tokenizer"
)

// loadOther opens the formats other than GGUF: a Hugging Face model folder
// (or a safetensors / PyTorch checkpoint inside one) and llama2.c
// checkpoints. ok is false when path is a GGUF file (or unrecognised, which
// the GGUF reader then reports).
func loadOther(path string, opt LoadOptions) (m *Model, ok bool, err error) {
	kind, err := Detect(path)
	if err != nil || kind == FormatGGUF {
		return nil, err != nil, err
	}
	var sp *spec.Spec
	if opt.SpecPath != "" {
		if sp, err = spec.ParseFile(opt.SpecPath); err != nil {
			return nil, true, err
		}
	}
	switch kind {
	case FormatHF:
		m, err = loadHF(path, sp, opt)
	case FormatLlama2c:
		m, err = loadLlama2c(path, sp, opt)
	}
	return m, true, err
}

// Model file formats Detect tells apart.
const (
	FormatGGUF    = "gguf"
	FormatHF      = "hf"      // config.json + safetensors or PyTorch weights
	FormatLlama2c = "llama2c" // llama2.c .bin + tokenizer.bin
)

// Detect names the format of a model path.
func Detect(path string) (string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return "", fmt.Errorf("model file: %w", err)
	}
	if hf.IsFolder(path) && (st.IsDir() || !isGGUF(path)) {
		return FormatHF, nil
	}
	if st.IsDir() {
		return "", fmt.Errorf("%s: a folder without config.json is not a model folder", path)
	}
	if isGGUF(path) {
		return FormatGGUF, nil
	}
	if head := readHead(path, 28); len(head) == 28 && llama2c.Sniff(head, st.Size()) {
		return FormatLlama2c, nil
	}
	switch filepath.Ext(path) {
	case ".safetensors", ".json":
		return "", fmt.Errorf("%s: safetensors weights need the config.json of their model folder beside them", path)
	}
	return FormatGGUF, nil // let the GGUF reader say what is wrong
}

func isGGUF(path string) bool { return bytes.Equal(readHead(path, 4), []byte("GGUF")) }

func readHead(path string, n int) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	b := make([]byte, n)
	k, _ := f.Read(b)
	return b[:k]
}

func threads(opt LoadOptions) int {
	if opt.Threads > 0 {
		return opt.Threads
	}
	return runtime.NumCPU()
}

func loadHF(path string, sp *spec.Spec, opt LoadOptions) (*Model, error) {
	f, err := hf.Open(path, sp)
	if err != nil {
		return nil, err
	}
	net, err := f.Build(model.Options{Threads: threads(opt)})
	if err != nil {
		f.Close()
		return nil, err
	}
	tok, err := f.Tokenizer()
	if err != nil {
		net.Close()
		f.Close()
		return nil, err
	}
	m := &Model{Path: path, Net: net, Tok: tok, release: f.Close}
	m.Template = parseTemplate(path, f.ChatTemplate())
	m.Info = describeNet(f.Name(), net, f.Weights.Size, m.Template != nil)
	return m, nil
}

func loadLlama2c(path string, sp *spec.Spec, opt LoadOptions) (*Model, error) {
	c, err := llama2c.Open(path)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*Model, error) { c.Close(); return nil, err }
	if sp == nil {
		if sp, err = spec.ForArchitecture("llama2.c", "llama2.c"); err != nil {
			return fail(err)
		}
	}
	net, err := model.Build(sp, c.Config(), c, model.Options{Threads: threads(opt)})
	if err != nil {
		return fail(err)
	}
	tok, err := llama2cTokenizer(path, net.NVocab)
	if err != nil {
		net.Close()
		return fail(err)
	}
	m := &Model{Path: path, Net: net, Tok: tok, release: c.Close}
	m.Info = describeNet(baseName(path), net, c.Size, false)
	return m, nil
}

func llama2cTokenizer(path string, vocab int) (*tokenizer.Tokenizer, error) {
	p, err := llama2c.FindTokenizer(path)
	if err != nil {
		return nil, err
	}
	return llama2c.ReadTokenizer(p, vocab)
}

// parseTemplate parses a chat template; a broken one only warns.
func parseTemplate(path, src string) *chat.Template {
	if src == "" {
		return nil
	}
	t, err := chat.Parse(src)
	if err != nil {
		fmt.Fprintf(os.Stderr, "warning: %s: chat template does not parse (%v); using the fallback\n", path, err)
		return nil
	}
	return t
}

func describeNet(name string, net *model.Model, size int64, tmpl bool) Info {
	params, types := net.Describe()
	return Info{
		Name: name, Arch: net.Arch, Family: net.Spec.Family, Params: params, FileSize: size,
		Quant: quantSummary(types), ContextTrain: net.NCtxTrain, Layers: net.NLayer,
		Embedding: net.NEmbd, Vocab: net.NVocab, HasTemplate: tmpl,
	}
}
