package quant

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// legacySSE matches vector instructions without the VEX "V" prefix that
// touch X or Y registers: one of them inside an AVX loop costs ~120 ns per
// transition on the dev machines (PERF-NOTES).
var legacySSE = regexp.MustCompile(`^\s*([A-Z][A-Z0-9]*)\s.*\b[XY]\d+\b`)

// TestAssemblyIsVEXOnly fails on a non-VEX vector instruction in the kernel
// source and on a function that returns without VZEROUPPER.
func TestAssemblyIsVEXOnly(t *testing.T) {
	src, err := os.ReadFile("kernels_amd64.s")
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(string(src), "\n") {
		code := strings.TrimSuffix(strings.SplitN(line, "//", 2)[0], "\\")
		if strings.HasPrefix(strings.TrimSpace(code), "#define") {
			continue
		}
		if m := legacySSE.FindStringSubmatch(code); m != nil && !strings.HasPrefix(m[1], "V") {
			t.Errorf("kernels_amd64.s:%d: non-VEX vector instruction %s", i+1, m[1])
		}
	}
	for _, fn := range strings.Split(string(src), "\nTEXT ")[1:] {
		body := strings.SplitN(fn, "\nTEXT ", 2)[0]
		if strings.Count(body, "RET") != strings.Count(body, "VZEROUPPER\n\tRET") {
			t.Errorf("%s returns without VZEROUPPER", strings.SplitN(body, "(", 2)[0])
		}
	}
}
