package pickle

import (
	"bytes"
	"errors"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"flowchat/engine/fixtures"
	"flowchat/engine/safetensors"
)

// TestTorchVariants reads every PyTorch variant of TinyStories-656K and
// compares its tensors with the original safetensors file (cast where the
// variant is bf16).
func TestTorchVariants(t *testing.T) {
	ref, err := safetensors.OpenModel(fixtures.Path(t, "models/tinystories-656K/hf/model.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	for _, v := range []struct {
		dir     string
		tensors int
		tied    bool
	}{
		{"tinystories-656K-torch-zip", 21, true},
		{"tinystories-656K-torch-legacy", 21, true},
		{"tinystories-656K-torch-zip-bf16", 21, true},
		{"tinystories-656K-torch-sharded", 20, false},
	} {
		t.Run(v.dir, func(t *testing.T) {
			c, err := OpenModel(fixtures.Path(t, "pytorch/"+v.dir))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if len(c.Tensors) != v.tensors {
				t.Errorf("%d tensors, want %d", len(c.Tensors), v.tensors)
			}
			for _, tn := range c.Tensors {
				want, ok := ref.Tensor(tn.Name)
				if !ok {
					t.Fatalf("unexpected tensor %s", tn.Name)
				}
				if !sameValues(tn, want) {
					t.Errorf("%s (%s %v) differs from the safetensors original", tn.Name, tn.DType, tn.Shape)
				}
			}
			if v.tied {
				e, _ := c.Tensor("model.embed_tokens.weight")
				h, _ := c.Tensor("lm_head.weight")
				if &e.Data[0] != &h.Data[0] {
					t.Error("tied embed_tokens and lm_head do not share their storage")
				}
			}
		})
	}
}

// sameValues compares a checkpoint tensor with an F32 reference, rounding
// the reference to bf16 (truncation of the low bits after rounding to
// nearest even, as torch casts) when the tensor is bf16.
func sameValues(got Tensor, want *safetensors.Tensor) bool {
	if len(got.Shape) != len(want.Shape) {
		return false
	}
	for i := range got.Shape {
		if got.Shape[i] != want.Shape[i] {
			return false
		}
	}
	switch got.DType {
	case "F32":
		return bytes.Equal(got.Data, want.Data)
	case "BF16":
		for i := 0; i < len(want.Data)/4; i++ {
			u := uint32(want.Data[4*i]) | uint32(want.Data[4*i+1])<<8 | uint32(want.Data[4*i+2])<<16 | uint32(want.Data[4*i+3])<<24
			b := uint16((u + 0x7fff + (u>>16)&1) >> 16)
			if got.Data[2*i] != byte(b) || got.Data[2*i+1] != byte(b>>8) {
				return false
			}
		}
		return true
	}
	return false
}

// TestMalicious: every malicious fixture is refused with an error naming
// its forbidden global, and the command it would run left no trace.
func TestMalicious(t *testing.T) {
	dir := fixtures.Path(t, "pytorch/malicious")
	sentinels := []string{"/tmp/pwned", "/tmp/pwned_eval", "/tmp/pwned_popen", "/tmp/pwned_stack_global", "/tmp/pwned_torch_zip"}
	before := map[string]bool{}
	for _, s := range sentinels {
		before[s] = fileExists(s)
	}
	for file, global := range map[string]string{
		"pickle_os_system.pkl":              "posix.system",
		"pickle_builtins_eval.pkl":          "builtins.eval",
		"pickle_subprocess_popen.pkl":       "subprocess.Popen",
		"pickle_stack_global_os_system.pkl": "os.system",
		"pytorch_model_malicious_zip.bin":   "posix.system",
	} {
		p := filepath.Join(dir, file)
		var err error
		if strings.HasSuffix(file, ".bin") {
			_, err = Open(p)
		} else {
			data, rerr := os.ReadFile(p)
			if rerr != nil {
				t.Fatal(rerr)
			}
			_, _, err = Load(data, resolveTorch, nil)
		}
		if !errors.Is(err, ErrForbidden) || !strings.Contains(err.Error(), global) {
			t.Errorf("%s: err = %v, want a refusal naming %s", file, err, global)
		}
	}
	for _, s := range sentinels {
		if fileExists(s) != before[s] {
			t.Errorf("%s appeared: something ran", s)
		}
	}
}

// TestNoExecutionPaths checks that the package cannot start a process or
// load code: none of its files imports a package that could.
func TestNoExecutionPaths(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	forbidden := map[string]bool{`"os/exec"`: true, `"plugin"`: true, `"syscall"`: true, `"unsafe"`: true, `"reflect"`: true}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			if forbidden[imp.Path.Value] {
				t.Errorf("%s imports %s", f, imp.Path.Value)
			}
		}
	}
}
