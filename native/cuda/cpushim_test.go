//go:build linux && (amd64 || arm64)

package cuda

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// The kernel sources themselves, run on the CPU: g++ compiles every .cu
// unchanged with testdata/cpushim (threads for CUDA threads, barriers for
// __syncthreads and the warp shuffles) into a harness program, which these
// tests run on the twins' random data. Every result must equal the Go twin
// bit for bit, except the double-precision cos/sin/exp of RoPE and SiLU,
// where glibc and Go's math package may differ by an ulp. This checks the
// .cu arithmetic, indexing and reductions; not the PTX, the inline
// assembly (the shim widens halves in C) or the GPU's memory model.

var shimBuild sync.Map // warp size → path or error

// shimHarness builds the harness for a warp size once per test binary.
func shimHarness(t *testing.T, warp int) string {
	t.Helper()
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("skipping: g++ not found; cannot build the CPU shim")
	}
	v, _ := shimBuild.LoadOrStore(warp, sync.OnceValues(func() (string, error) {
		dir, err := makeTempDir()
		if err != nil {
			return "", err
		}
		out := filepath.Join(dir, fmt.Sprintf("harness%d", warp))
		cmd := exec.Command("g++", "-std=c++17", "-O1", "-ffp-contract=off", "-Wall", "-Werror", "-Wno-unknown-pragmas",
			"-pthread", fmt.Sprintf("-DFC_WARP_SIZE=%d", warp), "-Ikernels", "-Itestdata/cpushim",
			"-o", out, "testdata/cpushim/harness.cpp")
		if msg, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("g++: %v\n%s", err, msg)
		}
		return out, nil
	}))
	path, err := v.(func() (string, error))()
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// runShim launches kernel on grid × block with args (int, float32, []byte
// for a buffer, nil for a null pointer) and returns the buffers after it.
func runShim(t *testing.T, harness, kernel string, grid, block Dim3, args ...any) [][]byte {
	t.Helper()
	cmdArgs := []string{kernel, fmt.Sprint(max(grid.X, 1)), fmt.Sprint(max(grid.Y, 1)), fmt.Sprint(block.X), fmt.Sprint(max(block.Y, 1))}
	var in bytes.Buffer
	for _, a := range args {
		switch v := a.(type) {
		case int:
			cmdArgs = append(cmdArgs, fmt.Sprintf("i:%d", v))
		case float32:
			cmdArgs = append(cmdArgs, fmt.Sprintf("f:%d", math.Float32bits(v)))
		case []byte:
			cmdArgs = append(cmdArgs, "b")
			binary.Write(&in, binary.LittleEndian, uint64(len(v)))
			in.Write(v)
		case nil:
			cmdArgs = append(cmdArgs, "n")
		default:
			t.Fatalf("runShim: argument of type %T", a)
		}
	}
	cmd := exec.Command(harness, cmdArgs...)
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("harness %s: %v", strings.Join(cmdArgs, " "), err)
	}
	var bufs [][]byte
	for len(out) > 0 {
		n := binary.LittleEndian.Uint64(out)
		bufs = append(bufs, out[8:8+n])
		out = out[8+n:]
	}
	return bufs
}

func bytesF32(b []byte) []float32 {
	f := make([]float32, len(b)/4)
	for i := range f {
		f[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return f
}

func clone32(f []float32) []byte { return slices.Clone(f32Bytes(f)) }

// TestShimKnowsEveryKernel: the harness runs every kernel in the sources.
func TestShimKnowsEveryKernel(t *testing.T) {
	out, err := exec.Command(shimHarness(t, 32), "--list").Output()
	if err != nil {
		t.Fatal(err)
	}
	have := strings.Fields(string(out))
	for _, src := range KernelSources() {
		for _, k := range kernelNames(src) {
			if !slices.Contains(have, k) {
				t.Errorf("%s: kernel %s missing from testdata/cpushim/harness.cpp", src.Name, k)
			}
		}
	}
}

func TestShimMatMul(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for _, warp := range warps {
		h := shimHarness(t, warp)
		for _, wt := range WeightTypes() {
			for _, shape := range [][3]int{{1, 1, 1}, {33, 5, 3}, {65, 3, 9}} {
				// n: whole blocks, more blocks or units than lanes; odd for
				// floats but at 2080, where F16 takes its 16-byte chunk loads:
				// 260 chunks: whole batches of MM_UNROLL·32 and a tail.
				n, rows, cols := shape[0]*max(wt.BlockSize(), 32), shape[1], shape[2]
				if wt.BlockSize() == 1 && shape[0] != 65 {
					n += 3
				} else if wt.BlockSize() == 256 {
					n = (shape[0]/4 + 1) * 256
				}
				w, _ := randWeights(r, wt, n, rows)
				x := randFloats(r, cols*n, 2)
				want := make([]float32, rows*cols)
				mmTwin(wt, warp, w, x, want, n, rows, cols)
				// The chunked types' kernels for 1, 2 and 4 rows a warp (rows
				// 1, 5, 3: partial groups) give the twin's bits each.
				for _, R := range []int{1, 2, 4} {
					if R > 1 && MatMulRows(wt, 1<<20) == 1 {
						continue
					}
					out := runShim(t, h, MatMulKernel(wt, R), Dim3{X: ceilDiv(rows, mmWarps*R), Y: ceilDiv(cols, mmMaxCols)}, Dim3{X: warp, Y: mmWarps},
						w, clone32(x), make([]byte, 4*rows*cols), n, rows, cols)
					checkULP(t, fmt.Sprintf("%v R=%d n=%d rows=%d cols=%d warp=%d", wt, R, n, rows, cols, warp), bytesF32(out[2]), want, 0)
				}
			}
		}
	}
}

// TestShimMatMulExtremeScales: the unit kernels on rows of random bytes
// (every code and packed-scale pattern) whose fp16 scales are at fp16's
// extremes equal the twin bit for bit, ±Inf and NaN sums included.
func TestShimMatMulExtremeScales(t *testing.T) {
	r := rand.New(rand.NewPCG(47, 48))
	for _, warp := range warps {
		h := shimHarness(t, warp)
		for _, wt := range WeightTypes() {
			if weightTypes[wt].unit == nil {
				continue
			}
			n, rows, cols := 5*256, 6, 10
			w := randomBlocks(r, wt, rows*n/wt.BlockSize(), true)
			x := randFloats(r, cols*n, 4)
			want := make([]float32, rows*cols)
			mmTwin(wt, warp, w, x, want, n, rows, cols)
			out := runShim(t, h, wt.Kernel(), Dim3{X: ceilDiv(rows, mmWarps), Y: ceilDiv(cols, mmMaxCols)}, Dim3{X: warp, Y: mmWarps},
				w, clone32(x), make([]byte, 4*rows*cols), n, rows, cols)
			for i, got := range bytesF32(out[2]) {
				if !sameBits(got, want[i]) {
					t.Errorf("%v warp=%d: y[%d] = %g, twin %g", wt, warp, i, got, want[i])
					break
				}
			}
		}
	}
}

func TestShimNormActAttn(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	for _, warp := range warps {
		h := shimHarness(t, warp)
		name := func(s string) string { return fmt.Sprintf("%s warp=%d", s, warp) }

		const n, rows = 1001, 2
		x, gain := randFloats(r, rows*n, 3), randFloats(r, n, 1.5)
		want := make([]float32, rows*n)
		rmsNormTwin(warp, x, gain, want, n, 1e-5)
		out := runShim(t, h, "rms_norm_f32", Dim3{X: rows}, Dim3{X: normThreads}, clone32(x), clone32(gain), make([]byte, 4*rows*n), n, float32(1e-5))
		checkULP(t, name("rms_norm"), bytesF32(out[2]), want, 0)
		rmsNormTwin(warp, x, nil, want, n, 1e-5)
		out = runShim(t, h, "rms_norm_f32", Dim3{X: rows}, Dim3{X: normThreads}, clone32(x), nil, make([]byte, 4*rows*n), n, float32(1e-5))
		checkULP(t, name("rms_norm without gain"), bytesF32(out[1]), want, 0)

		g, u := randFloats(r, 3001, 20), randFloats(r, 3001, 3)
		want = make([]float32, len(g))
		siluMulTwin(want, g, u)
		out = runShim(t, h, "silu_mul_f32", Dim3{X: 5}, Dim3{X: actThreads}, make([]byte, 4*len(g)), clone32(g), clone32(u), len(g))
		checkULP(t, name("silu_mul"), bytesF32(out[0]), want, 1)

		ya := randFloats(r, 3001, 5)
		want = slices.Clone(ya)
		addTwin(want, u)
		out = runShim(t, h, "add_f32", Dim3{X: 3}, Dim3{X: actThreads}, clone32(ya), clone32(u), len(u))
		checkULP(t, name("add"), bytesF32(out[0]), want, 0)

		sx := randFloats(r, 3*777, 30)
		want = slices.Clone(sx)
		softmaxTwin(warp, want, 777)
		out = runShim(t, h, "softmax_f32", Dim3{X: 3}, Dim3{X: actThreads}, clone32(sx), 777)
		checkULP(t, name("softmax"), bytesF32(out[0]), want, 0)

		const nKV, hd, nHead, nKVHead = 301, 72, 8, 2
		stride := nKVHead*hd + 5
		q, kc, vc := randFloats(r, nHead*hd, 1), randFloats(r, nKV*stride, 1), randFloats(r, nKV*stride, 1)
		for _, kvt := range []WeightType{WeightF32, WeightF16} {
			kb, vb := make([]byte, kvt.RowBytes(len(kc))), make([]byte, kvt.RowBytes(len(vc)))
			kvStoreTwin(kvt, kb, kc)
			kvStoreTwin(kvt, vb, vc)
			want = make([]float32, nHead*hd)
			attnTwin(warp, kvt, q, kb, vb, want, nKV, hd, nHead, nKVHead, stride, 0.125)
			kernel, _, _ := KVKernels(kvt)
			out = runShim(t, h, kernel, Dim3{X: nHead}, Dim3{X: attnThreads}, clone32(q), kb, vb,
				make([]byte, 4*nHead*nKV), make([]byte, 4*nHead*hd), nKV, hd, nHead, nKVHead, stride, float32(0.125))
			checkULP(t, name(kernel), bytesF32(out[4]), want, 0)
		}
	}
}

// TestShimKVQ8_0: kv_store_q8_0 and attn_decode_q8_0 equal their twins
// bit for bit (GQA, 4 query heads on each of 2 KV heads of 64).
func TestShimKVQ8_0(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	const nKV, hd, nHead, nKVHead = 133, 64, 8, 2
	stride := nKVHead * hd
	q, kc, vc := randFloats(r, nHead*hd, 1), randFloats(r, nKV*stride, 2), randFloats(r, nKV*stride, 2)
	clear(kc[:32])
	kb, vb := make([]byte, WeightQ8_0.RowBytes(len(kc))), make([]byte, WeightQ8_0.RowBytes(len(vc)))
	kvStoreTwin(WeightQ8_0, kb, kc)
	kvStoreTwin(WeightQ8_0, vb, vc)
	want := make([]float32, nHead*hd)
	attnTwin(32, WeightQ8_0, q, kb, vb, want, nKV, hd, nHead, nKVHead, stride, 0.125)
	for _, warp := range warps {
		h := shimHarness(t, warp)
		out := runShim(t, h, "kv_store_q8_0", Dim3{X: 3}, Dim3{X: attnThreads}, clone32(kc), make([]byte, len(kb)), len(kc))
		if !bytes.Equal(out[1], kb) {
			t.Errorf("warp=%d: kv_store_q8_0's blocks differ from the twin's", warp)
		}
		attnTwin(warp, WeightQ8_0, q, kb, vb, want, nKV, hd, nHead, nKVHead, stride, 0.125)
		out = runShim(t, h, "attn_decode_q8_0", Dim3{X: nHead}, Dim3{X: attnThreads}, clone32(q), kb, vb,
			make([]byte, 4*nHead*nKV), make([]byte, 4*nHead*hd), nKV, hd, nHead, nKVHead, stride, float32(0.125))
		checkULP(t, fmt.Sprintf("attn_decode_q8_0 warp=%d", warp), bytesF32(out[4]), want, 0)
	}
}

// TestShimStoreKV: kv_store_f16 rounds every float32 bit pattern class
// (normals, the half-subnormal range, overflow, ties, Inf, NaN) as the
// twin does.
func TestShimStoreKV(t *testing.T) {
	x := halfEdgeFloats(rand.New(rand.NewPCG(49, 50)), 5000)
	want := make([]byte, 2*len(x))
	kvStoreTwin(WeightF16, want, x)
	for _, warp := range warps {
		out := runShim(t, shimHarness(t, warp), "kv_store_f16", Dim3{X: 7}, Dim3{X: attnThreads}, clone32(x), make([]byte, 2*len(x)), len(x))
		if !bytes.Equal(out[1], want) {
			for i := range x {
				if g, w := le16(out[1][2*i:]), le16(want[2*i:]); g != w {
					t.Fatalf("warp=%d: kv_store_f16(%g = %#08x) = %#04x, twin %#04x", warp, x[i], math.Float32bits(x[i]), g, w)
				}
			}
		}
	}
}

func TestShimRoPE(t *testing.T) {
	r := rand.New(rand.NewPCG(45, 46))
	h := shimHarness(t, 32)
	const nHeads, headDim, nRot = 3, 80, 64
	pos := []int32{0, 3, 999, 70000}
	stride := nHeads*headDim + 4
	thetaScale := float32(math.Pow(10000, -2.0/nRot))
	for _, neox := range []bool{false, true} {
		x := randFloats(r, len(pos)*stride, 2)
		want := slices.Clone(x)
		ropeTwin(want, pos, stride, nHeads, headDim, nRot, thetaScale, 0.5, neox)
		neoxArg := 0
		if neox {
			neoxArg = 1
		}
		out := runShim(t, h, "rope_f32", Dim3{X: nHeads, Y: len(pos)}, Dim3{X: ropeThreads},
			clone32(x), slices.Clone(int32Bytes(pos)), stride, headDim, nRot, thetaScale, float32(0.5), neoxArg)
		checkULP(t, fmt.Sprintf("rope neox=%v", neox), bytesF32(out[0]), want, 1)
	}
}

// shimDir holds the harness binaries for the whole test binary (t.TempDir
// ends with its test); TestMain removes it.
var shimDir struct {
	sync.Mutex
	path string
}

func makeTempDir() (string, error) {
	shimDir.Lock()
	defer shimDir.Unlock()
	if shimDir.path == "" {
		p, err := os.MkdirTemp("", "flowchat-cpushim-")
		if err != nil {
			return "", err
		}
		shimDir.path = p
	}
	return shimDir.path, nil
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shimDir.path != "" {
		os.RemoveAll(shimDir.path)
	}
	os.Exit(code)
}
