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

// withAMX installs the AMX tier over tile above the VNNI tier for the
// rest of the test (whatever FLOWCHAT_AMX says), and the previous kernels
// after it.
func withAMX(t *testing.T, tile func(*amxCall)) {
	saved, saved4, savedMin, savedOn, savedState := gemmImpl, gemmRows4, amxMin, amxOn, amxState
	t.Cleanup(func() { gemmImpl, gemmRows4, amxMin, amxOn, amxState = saved, saved4, savedMin, savedOn, savedState })
	useAMX(vnniTiles, tile)
}

// TestAMXTiles (AMX CPUs only) runs the assembly kernel through the tier's
// walk against the model and the block twin bit for bit, on the shapes of
// TestAMXModel with random and extreme operands, and re-runs the start-up
// self-check.
func TestAMXTiles(t *testing.T) {
	t.Logf("AMX: %s", AMXStatus())
	needAMX(t)
	if err := amxSelfCheck(amxAsmTile); err != nil {
		t.Fatal(err)
	}
	withAMX(t, amxAsmTile)
	eachAMXCase(rand.New(rand.NewPCG(18, 4)), func(tp Type, g gemmCase, name string) {
		n, rows, cols := g.n, g.rows, g.cols
		var a Act
		a.Prepare(tp, n, g.x, cols)
		ldd := rows + 2
		got, model := nanSlice(cols*ldd), nanSlice(cols*ldd)
		MatMulAct(tp, n, g.w, rows, &a, got, ldd)
		amxGemm(tp, n, g.w, rows, &a, model, ldd, false, amxModelTile)
		checkGemm(t, name+" amx (model)", got, model, rows, ldd)
		checkGemm(t, name+" amx", got, g.want(tp, amxTwin[tp], ldd), rows, ldd)
	})
}

// amxScaleTile is amxTile with the tile half emulated: the C tiles of
// every block from the emulator, then the assembly's AVX-512 half
// (amxScaleOnly) over them.
func amxScaleTile(k *amxCall) {
	k.bounds()
	var e amxEmu
	e.ldtilecfg(&k.cfg)
	cb := make([]byte, 1024*k.nb)
	for b := 0; b < k.nb; b++ {
		e.tilezero(0)
		e.tileloadd(1, k.a, k.aoff+b*k.ablk, k.astride)
		e.tileloadd(2, k.b, k.boff+512*b, 64)
		e.tdpbssd(0, 1, 2)
		e.tilestored(0, cb, 1024*b, 64)
	}
	c := make([]int32, 256*k.nb)
	for i := range c {
		c[i] = int32(le32(cb[4*i:]))
	}
	_ = k.dst[k.dstoff+int(k.idx[k.nc-1])+k.mr-1]
	amxScaleOnly(&k.dw[0], &k.dx[k.dxoff], k.nb, &c[0], &k.dst[k.dstoff], &k.idx[0], k.nc, k.mr)
}

// TestAMXScaleHalf runs the assembly kernel's AVX-512 half (the same
// macros as amxTile) over emulated tiles through the tier's walk and
// holds it to the model bit for bit: what of the kernel can run without
// AMX.
func TestAMXScaleHalf(t *testing.T) {
	if !hasVNNI {
		t.Skip("no AVX-512: the kernel's scaling half does not run here")
	}
	eachAMXCase(rand.New(rand.NewPCG(18, 7)), func(tp Type, g gemmCase, name string) {
		n, rows, cols := g.n, g.rows, g.cols
		var a Act
		a.begin(tp, n, g.x, cols, prepKindQ8, 0, amxGroup)
		a.Fill(0, cols)
		ldd := rows + 2
		got, want := nanSlice(cols*ldd), nanSlice(cols*ldd)
		amxGemm(tp, n, g.w, rows, &a, got, ldd, false, amxScaleTile)
		amxGemm(tp, n, g.w, rows, &a, want, ldd, false, amxModelTile)
		checkGemm(t, name+" scale half", got, want, rows, ldd)
	})
	if err := amxSelfCheck(amxScaleTile); err != nil {
		t.Fatalf("self-check of the scaling half: %v", err)
	}
}

// TestAMXWeightsAsm: the assembly row-tile preparation (gathered fp16
// scales, the Q4_0 unpack) equals the plain-Go one for every row count of
// a tile and for all 65536 fp16 scale values (bit for bit; NaNs as NaNs),
// and for Q4_0 interleaved (Rows4) it equals the row-major preparation of
// the same rows.
func TestAMXWeightsAsm(t *testing.T) {
	if !hasVNNI {
		t.Skip("no AVX-512: the assembly preparation does not run here")
	}
	r := rand.New(rand.NewPCG(18, 8))
	for _, tp := range []Type{Q4_0, Q8_0} {
		for _, n := range []int{32, 96, 4096, 32 * 4096} {
			for mr := 1; mr <= 16; mr++ {
				if n == 32*4096 && mr != 16 {
					continue // 16 rows of 4096 blocks: every fp16 value once
				}
				nb, rs := n/32, tp.RowSize(n)
				w := randomRow(r, tp, n*mr)
				for b := 0; b < nb*mr; b++ {
					v := uint16(r.Uint32())
					if n == 32*4096 {
						v = uint16(b)
					}
					put16(w[b*tp.TypeSize():], v)
				}
				var sg, sa amxScratch
				for _, s := range []*amxScratch{&sg, &sa} {
					s.grow(tp, nb)
					for i := range s.dw {
						s.dw[i] = -1
					}
					for i := range s.a {
						s.a[i] = 0xa5
					}
				}
				sg.weightsGo(tp, nb, w, rs, amxRowAddr(tp, rs, 0, mr, mr, false))
				if tp == Q4_0 && n != 32*4096 {
					w4 := append([]byte(nil), w...)
					interleaveRows4Unpaired(tp, n, w4, mr)
					w = w4
				}
				sa.weightsAsm(tp, nb, w, rs, amxRowAddr(tp, rs, 0, mr, mr, tp == Q4_0 && n != 32*4096))
				for i := range sg.dw {
					g, a := sg.dw[i], sa.dw[i]
					if math.Float32bits(g) != math.Float32bits(a) && !(g != g && a != a) {
						t.Fatalf("%v n=%d mr=%d: d_w %d is %v, Go %v", tp, n, mr, i, a, g)
					}
				}
				if tp == Q4_0 {
					for b := 0; b < nb; b++ {
						if !bytes.Equal(sg.a[512*b:512*b+32*mr], sa.a[512*b:512*b+32*mr]) {
							t.Fatalf("Q4_0 n=%d mr=%d: block %d unpacked differently", n, mr, b)
						}
					}
				}
				if sg.call.aoff != sa.call.aoff || sg.call.astride != sa.call.astride || sg.call.ablk != sa.call.ablk {
					t.Fatalf("%v: A tiles described differently", tp)
				}
			}
		}
	}
}

// TestAMXRepack: Q5_0 and IQ4_NL batches through the Q8_0 rewrite and the
// AMX walk (the model kernel here, the installed one where AMX runs) equal
// the block twin of the rewritten rows bit for bit, across the rewrite's
// 16-row strips.
func TestAMXRepack(t *testing.T) {
	r := rand.New(rand.NewPCG(18, 5))
	tiles := map[string]func(*amxCall){"model": amxModelTile}
	if amxHW == nil {
		tiles["asm"] = amxAsmTile
	} else {
		t.Log("the Q5_0/IQ4_NL rewrite runs on the model kernel only: " + amxHW.Error())
	}
	for name, tile := range tiles {
		set := &amxSet{Q8_0, vnniTiles[Q8_0], tile, false}
		for _, tp := range []Type{Q5_0, IQ4_NL} {
			run := repackRun(tp, set.run)
			for _, sh := range [][3]int{{288, 17, 16}, {64, 40, 23}, {32, 3, 16}} {
				n, rows, cols := sh[0], sh[1], sh[2]
				g := newGemmCase(r, tp, n, rows, cols)
				var a Act
				a.begin(tp, n, g.x, cols, prepKindQ8, 0, amxGroup)
				a.Fill(0, cols)
				ldd := rows + 1
				got := nanSlice(cols * ldd)
				run(n, g.w, rows, &a, got, ldd)
				want := g.want(tp, func(n int, w, x []byte) float32 {
					w8 := make([]byte, Q8_0.RowSize(n))
					toQ8_0Ref(tp, n/32, w, w8)
					return dotQ8_0Blocks(n, w8, x)
				}, ldd)
				checkGemm(t, fmt.Sprintf("%v via Q8_0 %s n=%d %dx%d", tp, name, n, rows, cols), got, want, rows, ldd)
			}
		}
	}
}

// TestAMXSelfCheck: the start-up self-check passes the model kernel and
// catches a kernel off by one unit in the last place in one value, or
// one that mislays a column.
func TestAMXSelfCheck(t *testing.T) {
	if err := amxSelfCheck(amxModelTile); err != nil {
		t.Fatalf("model against itself: %v", err)
	}
	bad := map[string]func(*amxCall){
		"one ulp": func(k *amxCall) {
			amxModelTile(k)
			if k.mr > 5 && k.nc > 2 {
				v := &k.dst[k.dstoff+int(k.idx[2])+5]
				*v = math.Nextafter32(*v, float32(math.Inf(1)))
			}
		},
		"columns swapped": func(k *amxCall) {
			amxModelTile(k)
			for m := 0; m < k.mr && k.nc > 1; m++ {
				d := k.dst[k.dstoff:]
				d[m], d[int(k.idx[1])+m] = d[int(k.idx[1])+m], d[m]
			}
		},
	}
	for name, tile := range bad {
		if err := amxSelfCheck(tile); err == nil {
			t.Errorf("self-check passed a kernel with %s", name)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
}

// TestAMXDispatch installs the AMX tier over the model kernel (the
// assembly one cannot run here) and checks what MatMulAct then does: a
// batch of at least amxCols columns is prepared in the AMX layout and
// equals the block twin (Q5_0 and IQ4_NL: of the Q8_0 rewrite), a smaller
// one keeps the VNNI layout and the lane twin; decode is untouched.
func TestAMXDispatch(t *testing.T) {
	if !hasVNNI {
		t.Skip("no AVX-512 VNNI: the tier the AMX one sits above")
	}
	withAMX(t, amxModelTile)
	r := rand.New(rand.NewPCG(18, 6))
	rewrite := func(tp Type, twin dotFunc) dotFunc {
		return func(n int, w, x []byte) float32 {
			w8 := make([]byte, Q8_0.RowSize(n))
			toQ8_0Ref(tp, n/32, w, w8)
			return twin(n, w8, x)
		}
	}
	for _, tp := range []Type{Q4_0, Q8_0, Q5_0, IQ4_NL} {
		for _, cols := range []int{1, 15, 16, 33} {
			const n, rows = 128, 21
			g := newGemmCase(r, tp, n, rows, cols)
			var a Act
			a.Prepare(tp, n, g.x, cols)
			if a.amx != (cols >= amxCols) {
				t.Fatalf("%v %d columns: AMX layout %v", tp, cols, a.amx)
			}
			ldd := rows + 1
			got := nanSlice(cols * ldd)
			MatMulAct(tp, n, g.w, rows, &a, got, ldd)
			var want []float32
			switch {
			case tp == Q5_0 || tp == IQ4_NL:
				if cols < amxCols { // the per-row kernels, column by column
					want = g.want(tp, func(n int, w, x []byte) float32 {
						var o [1]float32
						MatVec(tp, n, w, x, o[:])
						return o[0]
					}, ldd)
					break
				}
				want = g.want(tp, rewrite(tp, dotQ8_0Blocks), ldd)
			default:
				want = g.want(tp, matMulTwin(tp, cols, lanesTwin[tp]), ldd)
			}
			checkGemm(t, fmt.Sprintf("%v %d columns", tp, cols), got, want, rows, ldd)
			if Rows4(tp) { // the same matrix interleaved at load
				w4 := append([]byte(nil), g.w...)
				InterleaveRows4(tp, n, w4, rows, nil)
				got4 := nanSlice(cols * ldd)
				MatMulActRows4(tp, n, w4, rows, &a, got4, ldd)
				checkGemm(t, fmt.Sprintf("%v interleaved %d columns", tp, cols), got4, want, rows, ldd)
			}
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

// BenchmarkAMX times the AMX tier against the VNNI tiles on a 256×2048
// matrix that stays in cache, at 16, 64 and 256 columns, per weight type:
// vnni, amx (AMX CPUs only), and walk, the AMX walk with a kernel that
// does nothing (the row tiles' preparation and the output copy: the
// tier's overhead, measurable without AMX). GMAC/s counts multiply-adds
// per CPU second.
func BenchmarkAMX(b *testing.B) {
	if !hasVNNI {
		b.Skip("no AVX-512 VNNI")
	}
	tiers := []string{"vnni", "walk", "amx"}
	if amxHW != nil {
		tiers = tiers[:2]
		b.Logf("no AMX on this CPU: %v", amxHW)
	}
	for _, tp := range []Type{Q4_0, Q8_0} {
		for _, cols := range []int{16, 64, 256} {
			for _, tier := range tiers {
				b.Run(fmt.Sprintf("%v/cols=%d/%s", tp, cols, tier), func(b *testing.B) {
					r := rand.New(rand.NewPCG(1, 1))
					n, rows := 2048, 256
					g := newGemmCase(r, tp, n, rows, cols)
					k := vnniTiles[tp]
					var a Act
					var run func()
					dst := make([]float32, rows*cols)
					if tier != "vnni" {
						a.begin(tp, n, g.x, cols, prepKindQ8, 0, amxGroup)
						a.Fill(0, cols)
						tile := amxAsmTile
						if tier == "walk" {
							tile = func(*amxCall) {}
						}
						run = func() { amxGemm(tp, n, g.w, rows, &a, dst, rows, false, tile) }
					} else {
						a.prepare(tp, n, g.x, cols, prepKindQ8, k.off, zGroup(k))
						run = func() { k.run(n, g.w, rows, &a, dst, rows) }
					}
					cpuTimed(b, run)
					b.ReportMetric(float64(n*rows*cols)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s-wall")
				})
			}
		}
	}
}
