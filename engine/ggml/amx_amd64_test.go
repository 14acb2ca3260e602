//go:build amd64 && !noasm

package ggml

import (
	"bufio"
	"bytes"
	"debug/elf"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// amxByteLine is an instruction spelled as bytes in amx_amd64.s: BYTE
// directives, then the GNU as spelling in a comment.
var amxByteLine = regexp.MustCompile(`^\s*(?:#define \w+\s+)?((?:BYTE \$0x[0-9a-f]{2};?\s*)+)//\s*(.+?)\s*$`)

// TestAMXEncoding assembles the comment of every BYTE-encoded instruction
// in amx_amd64.s with GNU as and compares its bytes with the BYTE ones,
// so that the tile instructions no machine here can execute are at least
// the ones their comments name. Every BYTE line must carry such a comment.
func TestAMXEncoding(t *testing.T) {
	checkByteEncodings(t, "amx_amd64.s", "ldtilecfg", "tilezero", "tileloadd", "tdpbssd", "tilestored", "tilerelease")
}

// TestAVXVNNIEncoding is TestAMXEncoding for the AVX-VNNI tier's
// VEX-encoded vpdpbusd (gemm_amd64.s), which Go's assembler lacks.
func TestAVXVNNIEncoding(t *testing.T) {
	checkByteEncodings(t, "gemm_amd64.s", "{vex}")
}

// checkByteEncodings checks every BYTE line of file against GNU as, and
// that the instructions named by ops (first words) are among them.
func checkByteEncodings(t *testing.T, file string, ops ...string) {
	as, err := exec.LookPath("as")
	if err != nil {
		t.Skipf("skipping: GNU as not found, the BYTE encodings of %s are unchecked", file)
	}
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(src))
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if !strings.Contains(text, "BYTE") {
			continue
		}
		m := amxByteLine.FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("%s:%d: BYTE line without an instruction comment: %q", file, line, text)
		}
		var got []byte
		for _, f := range regexp.MustCompile(`0x([0-9a-f]{2})`).FindAllStringSubmatch(m[1], -1) {
			v, _ := strconv.ParseUint(f[1], 16, 8)
			got = append(got, byte(v))
		}
		want := gnuAssemble(t, as, m[2])
		if !bytes.Equal(got, want) {
			t.Errorf("%s:%d: %s is % x in the file, % x by GNU as", file, line, m[2], got, want)
		}
		seen[strings.Fields(m[2])[0]] = true
	}
	for _, op := range ops {
		if !seen[op] {
			t.Errorf("%s has no BYTE-encoded %s", file, op)
		}
	}
}

// gnuAssemble returns the bytes `as --64` makes of one instruction (the
// .text section of its object file).
func gnuAssemble(t *testing.T, as, insn string) []byte {
	t.Helper()
	dir := t.TempDir()
	s, o := filepath.Join(dir, "i.s"), filepath.Join(dir, "i.o")
	if err := os.WriteFile(s, []byte(insn+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(as, "--64", "-o", o, s).CombinedOutput(); err != nil {
		t.Fatalf("as %q: %v\n%s", insn, err, out)
	}
	f, err := elf.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	text, err := f.Section(".text").Data()
	if err != nil {
		t.Fatal(err)
	}
	return text
}

// needAMX skips where the CPU or the OS cannot run the AMX kernel, saying
// why.
func needAMX(t *testing.T) {
	t.Helper()
	if amxHW != nil {
		t.Skip("no AMX on this CPU: " + amxHW.Error())
	}
}

// withAMX installs the AMX tier over kernels k for the rest of the test
// (whatever this CPU and FLOWCHAT_AMX say), and the previous state after
// it.
func withAMX(t *testing.T, k b16Kernels) {
	saved4, savedPairs, saved16, savedOn16, savedOn, savedState := gemmRows4, rows4Pairs, tileRows16, b16On, amxOn, amxState
	t.Cleanup(func() {
		gemmRows4, rows4Pairs, tileRows16, b16On, amxOn, amxState = saved4, savedPairs, saved16, savedOn16, savedOn, savedState
	})
	useAMX(k)
}

// TestAMXTiles (AMX CPUs only) runs the assembly kernels through the
// tier's walk against the plain-Go kernels and the block twin bit for
// bit, on the shapes of TestAMXModel with random and extreme operands,
// with the tiles from 1, 4 and 17 columns (so that the tiles take decode
// batches and the decode kernel takes wide ones), and re-runs the
// start-up self-check.
func TestAMXTiles(t *testing.T) {
	t.Logf("AMX: %s", AMXStatus())
	needAMX(t)
	if err := amxSelfCheck(amxAsm); err != nil {
		t.Fatal(err)
	}
	defer func(c [32]int) { amxCols = c }(amxCols)
	for _, c := range []int{1, 4, 17} {
		amxCols[Q4_0], amxCols[Q8_0] = c, c
		eachAMXCase(rand.New(rand.NewPCG(18, 4)), func(tp Type, g gemmCase, name string) {
			w, a := b16Case(tp, g)
			ldd := g.rows + 2
			got, model := nanSlice(g.cols*ldd), nanSlice(g.cols*ldd)
			b16Gemm(tp, g.n, w, g.rows, a, got, ldd, &amxAsm)
			b16Gemm(tp, g.n, w, g.rows, a, model, ldd, &amxModel)
			name = fmt.Sprintf("%s, tiles from %d columns", name, c)
			checkGemm(t, name+" amx (model)", got, model, g.rows, ldd)
			checkGemm(t, name+" amx", got, g.want(tp, amxTwin[tp], ldd), g.rows, ldd)
		})
	}
}

// TestB16Decode (AVX-512 VNNI) holds the decode kernels and the Q4_0
// unpack of the tile layout to their plain-Go twins bit for bit, on one
// to 200 blocks with random and extreme operands: the part of the tier
// that runs without AMX.
func TestB16Decode(t *testing.T) {
	if !hasVNNI {
		t.Skip("skipping: no AVX-512 VNNI, which the tile layout's decode kernels use")
	}
	r := rand.New(rand.NewPCG(18, 11))
	for _, tp := range []Type{Q4_0, Q8_0} {
		for _, n := range []int{32, 64, 96, 4096, 6400} {
			for _, extreme := range []bool{false, true} {
				g := newGemmCase(r, tp, n, 16, 3)
				if extreme {
					amxExtreme(r, tp, g)
				}
				w, a := b16Case(tp, g)
				nb := n / 32
				for c := 0; c < 3; c++ {
					got, want := nanSlice(16), nanSlice(16)
					b16AsmDec(tp, nb, w, a.Column(c), a.bdx[c:], a.bcorr[c:], 16, got)
					b16DecGo(tp, nb, w, a.Column(c), a.bdx[c:], a.bcorr[c:], 16, want)
					for m := range got {
						if math.Float32bits(got[m]) != math.Float32bits(want[m]) || math.Float32bits(got[m]) != math.Float32bits(amxTwin[tp](n, g.w[m*tp.RowSize(n):], a.Column(c))) {
							t.Fatalf("%v n=%d extreme %v column %d row %d: kernel %v, Go %v", tp, n, extreme, c, m, got[m], want[m])
						}
					}
				}
				// A lone column (decode's): its operands one apart.
				g1 := newGemmCase(r, tp, n, 16, 1)
				if extreme {
					amxExtreme(r, tp, g1)
				}
				w1, a1 := b16Case(tp, g1)
				if a1.bstep != 1 {
					t.Fatalf("a lone column's operands %d apart, want 1", a1.bstep)
				}
				got, want := nanSlice(16), nanSlice(16)
				b16AsmDec(tp, nb, w1, a1.Column(0), a1.bdx, a1.bcorr, 1, got)
				b16DecGo(tp, nb, w1, a1.Column(0), a1.bdx, a1.bcorr, 1, want)
				for m := range got {
					if math.Float32bits(got[m]) != math.Float32bits(want[m]) || math.Float32bits(got[m]) != math.Float32bits(amxTwin[tp](n, g1.w[m*tp.RowSize(n):], a1.Column(0))) {
						t.Fatalf("%v n=%d extreme %v lone column row %d: kernel %v, Go %v", tp, n, extreme, m, got[m], want[m])
					}
				}
				if tp == Q4_0 {
					got, want := make([]byte, 512*nb), make([]byte, 512*nb)
					b16AsmUnpack(w, nb, got)
					b16UnpackGo(w, nb, want)
					if !bytes.Equal(got, want) {
						t.Fatalf("Q4_0 n=%d: the unpack differs from its twin", n)
					}
				}
			}
		}
	}
}

// TestAMXSelfCheck: the start-up self-check passes the plain-Go kernels
// and catches a tile kernel off by one unit in the last place in one
// value, one that mislays a column, and a decode kernel off by one ulp.
func TestAMXSelfCheck(t *testing.T) {
	if err := amxSelfCheck(amxModel); err != nil {
		t.Fatalf("model against the twin: %v", err)
	}
	ulp := func(v *float32) { *v = math.Nextafter32(*v, float32(math.Inf(1))) }
	bad := map[string]b16Kernels{
		"one ulp": {func(k *amxCall) {
			amxModelTile(k)
			if k.nc > 2 {
				ulp(&k.dst[k.dstoff+2*k.ldd+5])
			}
		}, b16DecGo, b16UnpackGo, nil},
		"columns swapped": {func(k *amxCall) {
			amxModelTile(k)
			for n := 0; n < 16 && k.nc > 1; n++ {
				d := k.dst[k.dstoff:]
				d[n], d[k.ldd+n] = d[k.ldd+n], d[n]
			}
		}, b16DecGo, b16UnpackGo, nil},
		"decode one ulp": {amxModelTile, func(t Type, nb int, w, x []byte, dx []float32, corr []int32, step int, dst []float32) {
			b16DecGo(t, nb, w, x, dx, corr, step, dst)
			ulp(&dst[7])
		}, b16UnpackGo, nil},
		"narrow batch one ulp": {amxModelTile, b16DecGo, b16UnpackGo, func(t Type, n int, w []byte, rows int, a *Act, dst []float32, ldd int) {
			b16Twin(t, n, w, rows, 0, rows, a, dst, ldd)
			ulp(&dst[ldd+3])
		}},
	}
	for name, k := range bad {
		if err := amxSelfCheck(k); err == nil {
			t.Errorf("self-check passed kernels with %s", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}

// TestAMXDispatch installs the AMX tier over the plain-Go kernels (the
// assembly tiles need AMX) and checks what the exported entry points then
// do: InterleaveRows4 writes the tile layout, MatMulActRows4 over it
// equals the block twin for every batch width, and a column's values are
// the same alone, in a decode batch and in a prompt batch (batch
// invariance); row-major matrices (MatMulAct) keep the VNNI tier's lanes.
func TestAMXDispatch(t *testing.T) {
	if !hasAVX2 {
		t.Skip("skipping: no AVX2, whose tiers prepare the columns")
	}
	withAMX(t, amxModel)
	r := rand.New(rand.NewPCG(18, 6))
	for _, tp := range []Type{Q4_0, Q8_0} {
		if !Rows4(tp) || InterleaveGroup(tp) != 16 {
			t.Fatalf("%v: the tile layout is not installed", tp)
		}
		const n, rows = 128, 37
		g := newGemmCase(r, tp, n, rows, 33)
		w16 := append([]byte(nil), g.w...)
		InterleaveRows4(tp, n, w16, rows, nil)
		if !bytes.Equal(Rows4Row(tp, n, w16, rows, 20, make([]byte, tp.RowSize(n))), g.w[20*tp.RowSize(n):21*tp.RowSize(n)]) {
			t.Fatalf("%v: Rows4Row does not read the tile layout", tp)
		}
		var alone []float32
		var reused Act // holds the widest batch's columns past the narrower ones'
		reused.Prepare(tp, n, g.x, 33)
		for _, cols := range []int{1, 3, 16, 17, 33} {
			sub := g
			sub.cols, sub.x = cols, g.x[:cols*Q8_0.RowSize(n)]
			var a Act
			a.Prepare(tp, n, sub.x, cols)
			ldd := rows + 1
			got := nanSlice(cols * ldd)
			MatMulActRows4(tp, n, w16, rows, &a, got, ldd)
			checkGemm(t, fmt.Sprintf("%v tile layout, %d columns", tp, cols), got, sub.want(tp, amxTwin[tp], ldd), rows, ldd)
			checkTilesOnly(t, tp, n, w16, g.w, rows, &reused, sub.x, cols, got, ldd)
			if alone == nil {
				alone = got[:rows]
			}
			for i := range alone {
				if math.Float32bits(got[i]) != math.Float32bits(alone[i]) {
					t.Fatalf("%v: row %d of column 0 is %v in a batch of %d, %v alone", tp, i, got[i], cols, alone[i])
				}
			}
			flat := nanSlice(cols * ldd)
			MatMulAct(tp, n, g.w, rows, &a, flat, ldd)
			checkGemm(t, fmt.Sprintf("%v row-major, %d columns", tp, cols), flat, sub.want(tp, lanesTwin[tp], ldd), rows, ldd)
		}
	}
}

// TestAMXStatus: the tier's state is named, with a reason when off, and
// Accel agrees with it.
func TestAMXStatus(t *testing.T) {
	s := AMXStatus()
	t.Logf("Accel %s; %s", Accel(), s)
	if amxOn != strings.HasSuffix(Accel(), "+amx") || amxOn == strings.HasPrefix(s, "no amx: ") || len(s) < len("no amx: x") || !strings.Contains(Kernels(), s) {
		t.Fatalf("Accel %q and AMXStatus %q disagree (installed: %v)", Accel(), s, amxOn)
	}
}

// BenchmarkAMX times the tile layout's kernels (amx: as installed, the
// tiles from amxCols[t] columns, the narrow kernels below; tiles: the
// tiles at every width; narrow: the AVX-512 VNNI kernels of r16_amd64.go
// at every width; dec: the decode kernel column by column) against the
// VNNI tier on
// the interleaved layout (vnni) on a 256×2048 matrix that stays in cache,
// at 1 to 256 columns. GMAC/s counts multiply-adds per CPU second.
func BenchmarkAMX(b *testing.B) {
	if !hasVNNI {
		b.Skip("no AVX-512 VNNI")
	}
	tiers := []string{"vnni", "dec", "narrow", "tiles", "amx"}
	if amxHW != nil {
		tiers = tiers[:3]
		b.Logf("no AMX on this CPU: %v", amxHW)
	}
	for _, tp := range []Type{Q4_0, Q8_0} {
		for _, cols := range []int{1, 2, 4, 8, 16, 64, 256} {
			for _, tier := range tiers {
				b.Run(fmt.Sprintf("%v/cols=%d/%s", tp, cols, tier), func(b *testing.B) {
					r := rand.New(rand.NewPCG(1, 1))
					n, rows := 2048, 256
					g := newGemmCase(r, tp, n, rows, cols)
					var run func()
					dst := make([]float32, rows*cols)
					if tier == "vnni" {
						k := vnniRows4[tp]
						w := append([]byte(nil), g.w...)
						interleaveRows4Unpaired(tp, n, w, rows)
						var a Act
						a.prepare(tp, n, g.x, cols, prepKindQ8, k.off, zGroup(k))
						run = func() { k.run(n, w, rows, &a, dst, rows) }
					} else {
						saved := amxCols
						switch tier {
						case "dec", "narrow":
							amxCols[tp] = 1 << 30
						case "tiles":
							amxCols[tp] = 1
						}
						w, a := b16Case(tp, g) // prepared for the tiles or not
						amxCols = saved
						k := amxAsm
						if tier == "dec" {
							k.narrow = nil
						}
						run = func() { b16Gemm(tp, n, w, rows, a, dst, rows, &k) }
					}
					ns := cpuTimed(b, run)
					b.ReportMetric(float64(n*rows*cols)/ns, "GMAC/cpu-s")
				})
			}
		}
	}
}
