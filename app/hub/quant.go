package hub

import (
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// FileName is what a model file's name says about it.
type FileName struct {
	Base  string // the name without directory, split suffix and extension
	Quant string // "Q4_K_M", "IQ4_XS", "F16", "BF16", …; "" when the name has none
	Part  int    // 1-based shard index of a split file, 0 if not split
	Parts int    // number of shards, 0 if not split
	Ext   string // "gguf", "safetensors", … (lower case, no dot)
}

// quantRE finds a quantization type between separators. Longest
// alternatives come first so Q4_K_M is not read as Q4_K. It covers the
// llama.cpp ftype names (IQ1_S … IQ4_NL, Q2_K … Q8_0, Q4_0_4_4, TQ1_0,
// F16, BF16, F32, MXFP4) plus the _L/_XL variants that some uploaders make
// (Q4_K_L: Q4_K_M with Q8_0 embeddings) and unsloth's "UD-" prefix.
var quantRE = regexp.MustCompile(`(?i)(?:^|[-_.])((?:UD-)?(?:IQ[1-4]_(?:XXS|XS|NL|S|M)|Q[2-8]_K(?:_(?:XL|L|M|S))?|Q[4-8]_[01](?:_[48]_[48])?|TQ[12]_0|MXFP4(?:_MOE)?|BF16|FP16|FP32|F16|F32))(?:[-_.]|$)`)

// splitRE matches llama.cpp's split names: name-00001-of-00003.gguf.
var splitRE = regexp.MustCompile(`^(.*)-(\d{5})-of-(\d{5})$`)

// ParseFileName reads the quant type and split position from a file name
// (a path is fine; only the last element is used).
func ParseFileName(name string) FileName {
	base := path.Base(strings.ReplaceAll(name, "\\", "/"))
	var fn FileName
	if i := strings.LastIndexByte(base, '.'); i > 0 {
		fn.Ext = strings.ToLower(base[i+1:])
		base = base[:i]
	}
	if m := splitRE.FindStringSubmatch(base); m != nil {
		part, _ := strconv.Atoi(m[2])
		parts, _ := strconv.Atoi(m[3])
		if part >= 1 && part <= parts {
			base, fn.Part, fn.Parts = m[1], part, parts
		}
	}
	fn.Base = base
	fn.Quant = quantOf(base)
	return fn
}

// quantOf returns the last quant token in s, upper-cased, with FP16/FP32
// spelled F16/F32 as llama.cpp does.
func quantOf(s string) string {
	// A match consumes its leading separator, so the scan restarts at the
	// end of the previous quant (not of the whole match) to let
	// "…-Q4_K_M-Q8_0" find both.
	last := ""
	for off := 0; off < len(s); {
		loc := quantRE.FindStringSubmatchIndex(s[off:])
		if loc == nil {
			break
		}
		last = s[off+loc[2] : off+loc[3]]
		off += loc[3]
	}
	q := strings.ToUpper(last)
	switch q {
	case "FP16":
		return "F16"
	case "FP32":
		return "F32"
	}
	return q
}

// Model kinds.
const (
	KindGGUF        = "gguf"
	KindSafetensors = "safetensors"
	KindProjector   = "mmproj" // a vision projector GGUF, used beside a model
)

// RemoteModel is one downloadable model of a repository: one quant of a
// GGUF (one file, or every shard of a split file), or a safetensors
// checkpoint with its index and configuration files. One RemoteModel is one
// download job.
type RemoteModel struct {
	Name  string     // display name: the base file name, or the repo's for safetensors
	Kind  string     // KindGGUF, KindSafetensors or KindProjector
	Quant string     // from the file name; "" when it says none
	Files []RepoFile // in download order (shard 1 first)
	Size  int64      // bytes, all files
	// Complete is false when a split GGUF misses shards in the listing.
	Complete bool
}

// First is the file a loader opens (shard 1 for a split GGUF).
func (m *RemoteModel) First() RepoFile { return m.Files[0] }

// GroupFiles groups a repository's files into downloadable models, GGUF
// quants first (smallest first), then projectors, then safetensors.
func GroupFiles(files []RepoFile) []RemoteModel {
	groups := map[string]*RemoteModel{}
	var order []string
	var st []RepoFile
	for _, f := range files {
		fn := ParseFileName(f.Path)
		switch fn.Ext {
		case "gguf":
			key := path.Join(path.Dir(f.Path), fn.Base)
			g, ok := groups[key]
			if !ok {
				g = &RemoteModel{Name: fn.Base, Kind: ggufKind(fn.Base), Quant: fn.Quant}
				groups[key] = g
				order = append(order, key)
			}
			g.Files = append(g.Files, f)
		case "safetensors":
			st = append(st, f)
		}
	}
	out := make([]RemoteModel, 0, len(order)+1)
	for _, k := range order {
		out = append(out, finishGGUF(*groups[k]))
	}
	sortModels(out)
	if m, ok := safetensorsModel(files, st); ok {
		out = append(out, m)
	}
	return out
}

func ggufKind(base string) string {
	if strings.Contains(strings.ToLower(base), "mmproj") {
		return KindProjector
	}
	return KindGGUF
}

// finishGGUF orders shards and checks that none is missing.
func finishGGUF(m RemoteModel) RemoteModel {
	sort.SliceStable(m.Files, func(i, j int) bool {
		return ParseFileName(m.Files[i].Path).Part < ParseFileName(m.Files[j].Path).Part
	})
	m.Complete = true
	for i, f := range m.Files {
		m.Size += f.ContentSize()
		fn := ParseFileName(f.Path)
		if fn.Parts != 0 && (fn.Part != i+1 || fn.Parts != len(m.Files)) {
			m.Complete = false
		}
	}
	return m
}

func sortModels(ms []RemoteModel) {
	rank := map[string]int{KindGGUF: 0, KindProjector: 1, KindSafetensors: 2}
	sort.SliceStable(ms, func(i, j int) bool {
		if ri, rj := rank[ms[i].Kind], rank[ms[j].Kind]; ri != rj {
			return ri < rj
		}
		return ms[i].Size < ms[j].Size
	})
}

// safetensorsSupport are the small files a safetensors checkpoint needs.
var safetensorsSupport = map[string]bool{
	"config.json": true, "generation_config.json": true, "tokenizer.json": true,
	"tokenizer_config.json": true, "special_tokens_map.json": true, "tokenizer.model": true,
	"model.safetensors.index.json": true, "vocab.json": true, "merges.txt": true,
}

// safetensorsModel gathers the top-level safetensors weights and their
// support files into one job.
func safetensorsModel(all, weights []RepoFile) (RemoteModel, bool) {
	m := RemoteModel{Kind: KindSafetensors, Complete: true}
	for _, f := range weights {
		if !strings.Contains(f.Path, "/") {
			m.Files = append(m.Files, f)
		}
	}
	if len(m.Files) == 0 {
		return m, false
	}
	sort.Slice(m.Files, func(i, j int) bool { return m.Files[i].Path < m.Files[j].Path })
	for _, f := range all {
		if safetensorsSupport[f.Path] {
			m.Files = append(m.Files, f)
		}
	}
	for _, f := range m.Files {
		m.Size += f.ContentSize()
	}
	m.Name = ParseFileName(m.Files[0].Path).Base
	return m, true
}

// FindModel picks the model a "pull REPO:SELECTOR" means: SELECTOR is a
// quant (case-insensitive, "q4_k_m"), a file path, or empty for the
// recommended default (Q4_K_M, else the smallest of Q4_K_S, Q5_K_M, Q8_0,
// else the smallest complete GGUF).
func FindModel(models []RemoteModel, selector string) (RemoteModel, bool) {
	if selector == "" {
		return defaultModel(models)
	}
	for _, m := range models {
		for _, f := range m.Files {
			if f.Path == selector || path.Base(f.Path) == selector {
				return m, true
			}
		}
	}
	sel := strings.ToUpper(selector)
	for _, m := range models {
		if m.Kind != KindProjector && (m.Quant == sel || strings.TrimPrefix(m.Quant, "UD-") == sel) || strings.EqualFold(m.Kind, selector) {
			return m, true
		}
	}
	return RemoteModel{}, false
}

func defaultModel(models []RemoteModel) (RemoteModel, bool) {
	for _, q := range []string{"Q4_K_M", "Q4_K_S", "Q5_K_M", "Q8_0"} {
		for _, m := range models {
			if m.Kind == KindGGUF && m.Complete && m.Quant == q {
				return m, true
			}
		}
	}
	for _, m := range models { // sorted smallest first
		if m.Kind == KindGGUF && m.Complete {
			return m, true
		}
	}
	return RemoteModel{}, false
}
