package eval

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"flowchat/engine"
	"flowchat/engine/quant"
	"flowchat/engine/sample"
)

// LabOptions configure a Quantization Lab run over one full-precision model.
type LabOptions struct {
	// Levels are the rows of the report: "F32" (the base as stored), an
	// Inferflow format ("Q3H", "Q4_B64"), a GGML type ("Q4_0", "Q4_K"), or
	// the path of a GGUF file of the same model (e.g. llama-quantize output).
	Levels      []string
	Text        string // evaluation text
	Ctx         int    // tokens per chunk; 0 = 128
	MaxChunks   int    // 0 = the whole text
	OutputType  string // output head's type for re-quantized levels; "" = the level's
	MinElements int    // see quant.Options
	Threads     int    // 0 = all cores
	GenTokens   int    // > 0: time greedy generation of this many tokens
	// Progress, if set, is called from the running goroutine.
	Progress func(LabProgress)
}

// LabProgress reports where a Lab run is.
type LabProgress struct {
	Level  string  // "" while the base is evaluated
	Index  int     // level index, -1 for the base
	Levels int     // number of levels
	Stage  string  // "base", "load", "eval", "generate", "done"
	Frac   float64 // of the current stage, 0…1
}

// LevelResult is one row of the Lab's report; every field is what the
// charts plot.
type LevelResult struct {
	Level         string        `json:"level"`
	Types         string        `json:"types"`           // weight types after conversion, e.g. "Q3H_B64 (+Q8_0)"
	BitsPerWeight float64       `json:"bits_per_weight"` // over the weight matrices
	WeightBytes   int64         `json:"weight_bytes"`    // bytes of the weight matrices
	FileSize      int64         `json:"file_size"`       // GGUF bytes for file levels, else the base file size less the weights' change
	PPL           float64       `json:"ppl"`
	PPLStdErr     float64       `json:"ppl_stderr"`
	KLD           float64       `json:"kld"`
	KLDStdErr     float64       `json:"kld_stderr"`
	KLD99         float64       `json:"kld_p99"`
	Top1          float64       `json:"top1"`
	WeightRMS     float64       `json:"weight_rms"`     // pooled RMS error of the weights
	WeightRelRMS  float64       `json:"weight_rel_rms"` // pooled RMS error / RMS weight
	WeightMax     float64       `json:"weight_max"`
	GenTPS        float64       `json:"gen_tps,omitempty"`
	Simulated     bool          `json:"simulated,omitempty"` // see quant.Report
	Tensors       []WeightError `json:"tensors"`
}

// LabReport is a whole Lab run.
type LabReport struct {
	Model   string        `json:"model"`
	Ctx     int           `json:"ctx"`
	Chunks  int           `json:"chunks"`
	BasePPL float64       `json:"base_ppl"`
	Levels  []LevelResult `json:"levels"`
}

func (o *LabOptions) progress(p LabProgress) {
	if o.Progress != nil {
		p.Levels = len(o.Levels)
		o.Progress(p)
	}
}

// RunLab evaluates every level of opt against the model at basePath. The
// base's log-probabilities go to a temporary file that is removed after.
func RunLab(ctx context.Context, basePath string, opt LabOptions) (*LabReport, error) {
	if opt.Ctx == 0 {
		opt.Ctx = 128
	}
	base, err := engine.Load(basePath, engine.LoadOptions{Threads: opt.Threads})
	if err != nil {
		return nil, err
	}
	defer base.Close()
	tmp, err := os.CreateTemp("", "flowchat-klbase-*")
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	tokens := base.Tok.Encode(opt.Text, true, false)
	copt := ChunkOptions{Ctx: opt.Ctx, BOS: base.Tok.BOS(), MaxChunks: opt.MaxChunks}
	bp, err := WriteBase(tmp, base, tokens, copt, func(i, n int, _ float64) bool {
		opt.progress(LabProgress{Index: -1, Stage: "base", Frac: float64(i+1) / float64(n)})
		return ctx.Err() == nil
	})
	if err != nil {
		return nil, err
	}
	rep := &LabReport{Model: basePath, Ctx: opt.Ctx, Chunks: bp.Chunks, BasePPL: bp.PPL}
	for i, level := range opt.Levels {
		r, err := runLevel(ctx, base, basePath, tmp, i, level, &opt)
		if err != nil {
			return rep, fmt.Errorf("level %s: %w", level, err)
		}
		rep.Levels = append(rep.Levels, r)
	}
	return rep, nil
}

// runLevel loads one level and measures it against the base file.
func runLevel(ctx context.Context, base *engine.Model, basePath string, baseFile *os.File, i int, level string, opt *LabOptions) (LevelResult, error) {
	opt.progress(LabProgress{Level: level, Index: i, Stage: "load"})
	m, qr, err := LoadLevel(basePath, level, *opt)
	if err != nil {
		return LevelResult{}, err
	}
	defer m.Close()
	r := LevelResult{Level: level, Types: typeSummary(&qr), BitsPerWeight: qr.BitsPerWeight(), WeightBytes: qr.Bytes(), Simulated: qr.Simulated}
	r.FileSize = base.Info.FileSize + qr.Bytes() - baseWeightBytes(base)
	if isFile(level) {
		r.FileSize = m.Info.FileSize
	}
	if _, err := baseFile.Seek(0, 0); err != nil {
		return r, fmt.Errorf("eval: %w", err)
	}
	kl, err := CompareBase(baseFile, m, func(c, n int, _ float64) bool {
		opt.progress(LabProgress{Level: level, Index: i, Stage: "eval", Frac: float64(c+1) / float64(n)})
		return ctx.Err() == nil
	})
	if err != nil {
		return r, err
	}
	r.PPL, r.PPLStdErr, r.KLD, r.KLDStdErr, r.KLD99, r.Top1 = kl.PPL, kl.StdErr, kl.KLD, kl.KLDStdErr, kl.KLD99, kl.Top1
	if r.Tensors, err = CompareWeights(base.Net, m.Net); err != nil {
		return r, err
	}
	t := Totals(r.Tensors)
	r.WeightRMS, r.WeightRelRMS, r.WeightMax = t.RMS, t.RelRMS, t.Max
	if opt.GenTokens > 0 {
		opt.progress(LabProgress{Level: level, Index: i, Stage: "generate"})
		if r.GenTPS, err = GenerationSpeed(ctx, m, opt.GenTokens); err != nil {
			return r, err
		}
	}
	opt.progress(LabProgress{Level: level, Index: i, Stage: "done", Frac: 1})
	return r, nil
}

// isFile reports whether a level names a GGUF file rather than a type.
func isFile(level string) bool {
	return strings.HasSuffix(strings.ToLower(level), ".gguf") || strings.ContainsRune(level, filepath.Separator)
}

// LoadLevel loads the model at basePath as one Lab level: a GGUF file path
// is loaded as stored; a type name re-quantizes the base's weight matrices
// ((*model.Model).Requantize); "F32" (or the base's own type) keeps them.
func LoadLevel(basePath, level string, opt LabOptions) (*engine.Model, quant.Report, error) {
	path := basePath
	if isFile(level) {
		path = level
	}
	m, err := engine.Load(path, engine.LoadOptions{Threads: opt.Threads})
	if err != nil {
		return nil, quant.Report{}, err
	}
	qopt, keep, err := levelOptions(level, opt)
	if err == nil && !keep {
		var qr quant.Report
		qr, err = m.Net.Requantize(qopt)
		if err == nil {
			return m, qr, nil
		}
	}
	if err != nil {
		m.Close()
		return nil, quant.Report{}, err
	}
	return m, asStored(m), nil
}

// levelOptions turns a level name into re-quantization options; keep is
// true for file levels and "F32".
func levelOptions(level string, opt LabOptions) (quant.Options, bool, error) {
	if isFile(level) || strings.EqualFold(level, "F32") {
		return quant.Options{}, true, nil
	}
	t, err := quant.ParseType(level)
	if err != nil {
		return quant.Options{}, false, err
	}
	q := quant.Options{Type: t, MinElements: opt.MinElements, Threads: opt.Threads}
	if opt.OutputType != "" {
		if q.OutputType, err = quant.ParseType(opt.OutputType); err != nil {
			return q, false, err
		}
		q.SetOutput = true
	}
	return q, false, nil
}

// asStored reports a model's weight matrices as they are.
func asStored(m *engine.Model) quant.Report {
	var r quant.Report
	for _, w := range m.Net.Weights() {
		r.Tensors = append(r.Tensors, quant.TensorChange{Name: w.Name, From: w.Type, To: w.Type,
			Elements: w.Cols * w.Rows, Bytes: int64(len(w.Data)), Kept: "as stored"})
	}
	return r
}

func baseWeightBytes(m *engine.Model) int64 {
	var n int64
	for _, w := range m.Net.Weights() {
		n += int64(len(w.Data))
	}
	return n
}

// GenerationSpeed times greedy generation of n tokens after a BOS prompt
// and returns tokens per second.
func GenerationSpeed(ctx context.Context, m *engine.Model, n int) (float64, error) {
	bos := m.Tok.BOS()
	if bos < 0 {
		return 0, errors.New("eval: the model has no BOS token to start generation from")
	}
	p := sample.DefaultParams()
	p.Temperature, p.Seed = 0, 1
	s := m.NewSession(n + 2)
	st, err := s.Generate(ctx, []int32{bos}, engine.GenerateOptions{MaxTokens: n, Sampling: p, IgnoreEOG: true})
	if err != nil {
		return 0, err
	}
	return st.GenTPS(), nil
}

// typeSummary names the weight types after conversion, the most common
// first: "Q3H_B64 (+F32)".
func typeSummary(r *quant.Report) string {
	count := map[string]int{}
	var names []string
	for _, t := range r.Tensors {
		n := quant.TypeName(t.To)
		if count[n] == 0 {
			names = append(names, n)
		}
		count[n]++
	}
	sort.SliceStable(names, func(i, j int) bool { return count[names[i]] > count[names[j]] })
	if len(names) == 0 {
		return "?"
	}
	if len(names) == 1 {
		return names[0]
	}
	return names[0] + " (+" + strings.Join(names[1:], ", ") + ")"
}
