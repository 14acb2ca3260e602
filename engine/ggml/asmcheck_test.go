package ggml

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// legacySSE matches vector instructions without the VEX "V" prefix that
// touch X registers (MOVSS, ADDPS, PXOR, CVTSI2SS, …): one of them inside
// an AVX loop costs ~120 ns per transition on the dev machines.
var legacySSE = regexp.MustCompile(`^\s*([A-Z][A-Z0-9]*)\s.*\b[XY]\d+\b`)

// TestAssemblyIsVEXOnly reads the kernel sources and fails on any
// instruction using an X or Y register that is not VEX-encoded, and on a
// function that returns without VZEROUPPER.
func TestAssemblyIsVEXOnly(t *testing.T) {
	files, err := filepath.Glob("*_amd64.s")
	if err != nil || len(files) == 0 {
		t.Fatal("no assembly sources found", err)
	}
	for _, f := range files {
		checkVEXOnly(t, f)
	}
}

func checkVEXOnly(t *testing.T, file string) {
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(src), "\n")
	for i, line := range lines {
		code := strings.TrimSuffix(strings.SplitN(line, "//", 2)[0], "\\")
		if strings.HasPrefix(strings.TrimSpace(code), "#define") {
			continue
		}
		if m := legacySSE.FindStringSubmatch(code); m != nil && !strings.HasPrefix(m[1], "V") {
			t.Errorf("%s:%d: non-VEX vector instruction %s", file, i+1, m[1])
		}
	}
	text := string(src)
	// Macros that end a kernel (VZEROUPPER; RET) count as VZEROUPPER, and
	// so do macros that expand to one of them (FLAT → FLATP).
	closers := []string{"VZEROUPPER"}
	defs := map[string]string{}
	for _, def := range strings.Split(text, "#define ")[1:] {
		name := strings.FieldsFunc(def, func(r rune) bool { return r == ' ' || r == '(' || r == '\\' || r == '\n' })[0]
		defs[name] = strings.SplitN(def, "\n\n", 2)[0]
	}
	for grew := true; grew; {
		grew = false
		for name, body := range defs {
			for _, c := range closers {
				if strings.Contains(body, c) {
					closers = append(closers, name)
					delete(defs, name)
					grew = true
					break
				}
			}
		}
	}
	for _, fn := range strings.Split(text, "\nTEXT ")[1:] {
		body := strings.SplitN(fn, "\nTEXT ", 2)[0]
		ok := false
		for _, c := range closers {
			ok = ok || strings.Contains(body, c)
		}
		if !ok {
			t.Errorf("%s: %s returns without VZEROUPPER", file, strings.SplitN(body, "(", 2)[0])
		}
	}
}
