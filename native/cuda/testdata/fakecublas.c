/* A fake libcublas for the tests of cublas.go: the entry points the
   prefill path binds, computing GemmEx on the host over the fake driver's
   "device" memory (host memory, see fakecuda.c). Products are summed in
   double, so a test can bound the result tightly against the F16 inputs
   it expects. A test tool, built with gcc by the test; the package stays
   cgo-free. -DFAKE_OMIT_GEMM leaves cublasGemmEx out (an unusable library). */
#include <stdint.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef int cublasStatus_t;
struct handle { void *stream; };

static int handles, gemms, streamSets;

cublasStatus_t cublasCreate_v2(struct handle **h) {
	*h = calloc(1, sizeof **h);
	handles++;
	return 0;
}
cublasStatus_t cublasDestroy_v2(struct handle *h) {
	if (!h) return 1;
	free(h);
	handles--;
	return 0;
}
cublasStatus_t cublasSetStream_v2(struct handle *h, void *s) {
	h->stream = s;
	streamSets++;
	return 0;
}
cublasStatus_t cublasGetVersion_v2(struct handle *h, int *v) {
	*v = 120401;
	return 0;
}

static double half(uint16_t h) {
	int e = (h >> 10) & 0x1f, m = h & 0x3ff;
	double v = e == 0 ? m / 16777216.0 : e == 31 ? (m ? NAN : INFINITY) : (1024 + m) * (double)(1 << e) / 33554432.0;
	return h >> 15 ? -v : v;
}

static double elem(const void *p, int type, long i) {
	return type == 2 ? half(((const uint16_t *)p)[i]) : ((const float *)p)[i];
}

#ifndef FAKE_OMIT_GEMM
/* Column-major, as cuBLAS: op(A) is m × k, op(B) k × n, C m × n. */
cublasStatus_t cublasGemmEx(struct handle *h, int transa, int transb, int m, int n, int k, const float *alpha,
	const void *A, int Atype, int lda, const void *B, int Btype, int ldb, const float *beta, void *C, int Ctype,
	int ldc, int computeType, int algo) {
	if (!h || Ctype != 0 || computeType != 68 || Atype != Btype || (Atype != 0 && Atype != 2)) return 15;
	if (lda < (transa ? k : m) || ldb < (transb ? n : k) || ldc < m) return 7;
	float *c = C;
	for (int j = 0; j < n; j++)
		for (int i = 0; i < m; i++) {
			double s = 0;
			for (int l = 0; l < k; l++) {
				double a = transa ? elem(A, Atype, l + (long)i * lda) : elem(A, Atype, i + (long)l * lda);
				double b = transb ? elem(B, Btype, j + (long)l * ldb) : elem(B, Btype, l + (long)j * ldb);
				s += a * b;
			}
			double prev = *beta != 0 ? *beta * c[i + (long)j * ldc] : 0;
			c[i + (long)j * ldc] = (float)(*alpha * s + prev);
		}
	gemms++;
	return 0;
}
#endif

/* Test hooks. */
int fakeCublasHandles(void) { return handles; }
int fakeCublasGemms(void) { return gemms; }
