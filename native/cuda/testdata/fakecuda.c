// A stand-in for libcuda.so.1 used by the package tests on machines without
// an NVIDIA driver. It implements only the entry points the package binds,
// with the signatures of cuda.h, so the tests check argument passing through
// purego (out-pointers, 64-bit sizes, the name buffer) and the error paths.
//
// Build-time knobs (-D):
//   FAKE_DEVICES=n        number of devices cuDeviceGetCount reports (default 2)
//   FAKE_INIT_RESULT=r    what cuInit returns (default 0, CUDA_SUCCESS)
//   FAKE_OMIT_TOTALMEM    leave out cuDeviceTotalMem_v2 (a required symbol)
//   FAKE_OMIT_CONTEXT     leave out the optional context entry points
//   FAKE_OMIT_COMPUTE     leave out the compute set (memory, streams, modules…)
//   FAKE_MINOR1=m         device 1's compute capability minor (default 9: 9.9)
//   FAKE_NO_PEER          cuDeviceCanAccessPeer says no (copies go through the host)
//   FAKE_KERNELS          also load NVRTC's images (CUBIN or PTX) as modules of
//                         the real kernels, run on the host (fakekernels.cpp,
//                         linked in by g++)
//
// Device memory is capped at the free memory cuMemGetInfo reports (a third
// of the total), which allocations reduce, so out-of-memory paths can be
// tested (cuMemAlloc returns CUDA_ERROR_OUT_OF_MEMORY past the cap).
//
// The compute set runs on the host: device memory is malloc'd, copies are
// memcpy, and the one module ("FAKEMOD" images) has one kernel, axpy(float*
// y, const float* x, float a, int n), executed over the launch's threads,
// so the tests see kernel arguments arrive through cuLaunchKernel's
// kernelParams exactly as a GPU would.
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FAKE_DEVICES
#define FAKE_DEVICES 2
#endif
#ifndef FAKE_INIT_RESULT
#define FAKE_INIT_RESULT 0
#endif
#ifndef FAKE_MINOR1
#define FAKE_MINOR1 9 /* device 1's compute minor: 9.9 (engine/device builds 9.0, which NVRTC 11.8 compiles for) */
#endif

typedef int CUresult;
typedef int CUdevice;
typedef struct fakectx *CUcontext;

static int initialized;
static int retained[FAKE_DEVICES + 1];
static struct fakectx { int dev; } contexts[FAKE_DEVICES + 1];
static CUcontext stack[16];
static int depth;

CUresult cuInit(unsigned int flags) {
	if (flags != 0) return 1; /* CUDA_ERROR_INVALID_VALUE */
	if (FAKE_INIT_RESULT == 0) initialized = 1;
	return FAKE_INIT_RESULT;
}

CUresult cuDriverGetVersion(int *v) { *v = 12040; return 0; }

CUresult cuDeviceGetCount(int *n) {
	if (!initialized) return 3; /* CUDA_ERROR_NOT_INITIALIZED */
	*n = FAKE_DEVICES;
	return 0;
}

/* Device handles differ from ordinals so that mixing them up shows. */
CUresult cuDeviceGet(CUdevice *d, int ordinal) {
	if (ordinal < 0 || ordinal >= FAKE_DEVICES) return 101;
	*d = 100 + ordinal;
	return 0;
}

static int valid(CUdevice d) { return d >= 100 && d < 100 + FAKE_DEVICES; }

CUresult cuDeviceGetName(char *name, int len, CUdevice d) {
	if (!valid(d)) return 101;
	snprintf(name, (size_t)len, "Fake GPU %d", d - 100);
	return 0;
}

#ifndef FAKE_OMIT_TOTALMEM
/* (ordinal+1) * 24 GiB: above 4 GiB so a 32-bit truncation would show. */
CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d) {
	if (!valid(d)) return 101;
	*bytes = (size_t)(d - 100 + 1) * 24 * ((size_t)1 << 30);
	return 0;
}
#endif

CUresult cuDeviceGetAttribute(int *v, int attr, CUdevice d) {
	if (!valid(d)) return 101;
	switch (attr) {
	case 75: *v = 8 + (d - 100); return 0; /* major */
	case 76: *v = d == 100 ? 9 : FAKE_MINOR1; return 0; /* minor */
	case 10: *v = 32; return 0;            /* warp size */
	case 16: *v = 4 + (d - 100); return 0; /* multiprocessors */
	}
	return 1;
}

#ifndef FAKE_OMIT_CONTEXT
CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice d) {
	if (!valid(d)) return 101;
	retained[d - 100]++;
	contexts[d - 100].dev = d;
	*ctx = &contexts[d - 100];
	return 0;
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
	if (!valid(d) || retained[d - 100] == 0) return 201;
	retained[d - 100]--;
	return 0;
}

CUresult cuCtxPushCurrent_v2(CUcontext ctx) {
	if (depth == 16) return 1;
	stack[depth++] = ctx;
	return 0;
}

CUresult cuCtxPopCurrent_v2(CUcontext *ctx) {
	if (depth == 0) return 201;
	*ctx = stack[--depth];
	return 0;
}

static size_t allocated[FAKE_DEVICES + 1]; /* bytes, by device */

/* Free is a third of total (less what is allocated) so free and total
   cannot be swapped unnoticed. */
CUresult cuMemGetInfo_v2(size_t *free, size_t *total) {
	if (depth == 0) return 201; /* CUDA_ERROR_INVALID_CONTEXT */
	CUdevice d = stack[depth - 1]->dev;
	*total = (size_t)(d - 100 + 1) * 24 * ((size_t)1 << 30);
	*free = *total / 3 - allocated[d - 100];
	return 0;
}

/* Test hooks: the references and stack depth left behind. */
int fakeRetained(int ordinal) { return retained[ordinal]; }
int fakeDepth(void) { return depth; }
#endif

#if !defined(FAKE_OMIT_COMPUTE) && !defined(FAKE_OMIT_CONTEXT)
typedef unsigned long long CUdeviceptr;
typedef void *CUstream, *CUevent, *CUmodule, *CUfunction;

static int allocs, streams, events, modules;
static unsigned lastLaunch[9];
static CUstream lastStream;

/* The copy and ordering calls are logged, one line each, for the tests
   (fakeCallLog): "htod s<stream> pinned|pageable", "dtoh s<stream>
   pinned|pageable", "record e<event> s<stream>", "wait s<stream>
   e<event>", "peer d<dst>←d<src> s<stream>", "enable d<cur>→d<peer>".
   Streams and events remember their context's device, and a call on a
   stream must run with that context current (record: the event's too). */
static char callLog[1 << 16];
static size_t callLogLen;
static void logCall(const char *fmt, ...) {
	va_list ap;
	va_start(ap, fmt);
	if (callLogLen + 64 < sizeof callLog) callLogLen += (size_t)vsnprintf(callLog + callLogLen, 64, fmt, ap);
	va_end(ap);
}
const char *fakeCallLog(void) { return callLog; }
void fakeClearLog(void) { callLogLen = 0; callLog[0] = 0; }

static int streamDev[1024], eventDev[1024];
static int curDev(void) { return depth ? stack[depth - 1]->dev - 100 : -1; }
static int streamOK(CUstream s) { /* s is the current context's (0: the null stream) */
	size_t i = (size_t)s;
	return s == 0 || (i > 0x5000 && i < 0x5000 + 1024 && streamDev[i - 0x5000] == curDev());
}
static int streamNo(CUstream s) { return s ? (int)((size_t)s - 0x5000) : 0; }

static struct { char *p; size_t n; } pinnedMem[64];
static int isPinned(const void *p, size_t n) {
	for (int i = 0; i < 64; i++)
		if (pinnedMem[i].p && (const char *)p >= pinnedMem[i].p && (const char *)p + n <= pinnedMem[i].p + pinnedMem[i].n) return 1;
	return 0;
}
static int peerEnabled[FAKE_DEVICES + 1][FAKE_DEVICES + 1];

CUresult cuCtxSetCurrent(CUcontext c) { return 0; }
CUresult cuCtxSynchronize(void) { return depth ? 0 : 201; }

/* An allocation is preceded by a header with its size and device. */
struct fakeAlloc { size_t n; int dev; int pad; };

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
	if (depth == 0) return 201;
	size_t free, total;
	cuMemGetInfo_v2(&free, &total);
	if (n > free) return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
	struct fakeAlloc *m = malloc(sizeof *m + n);
	if (!m) return 2;
	m->n = n;
	m->dev = stack[depth - 1]->dev - 100;
	allocated[m->dev] += n;
	*p = (CUdeviceptr)(m + 1);
	allocs++;
	return 0;
}
CUresult cuMemFree_v2(CUdeviceptr p) {
	if (!p) return 1;
	struct fakeAlloc *m = (struct fakeAlloc *)p - 1;
	allocated[m->dev] -= m->n;
	free(m);
	allocs--;
	return 0;
}
static void pin(void *p, size_t n) {
	for (int i = 0; i < 64; i++)
		if (!pinnedMem[i].p) { pinnedMem[i].p = p; pinnedMem[i].n = n; return; }
}
CUresult cuMemAllocHost_v2(void **pp, size_t n) {
	CUresult r = cuMemAlloc_v2((CUdeviceptr *)pp, n);
	if (r == 0) pin(*pp, n);
	return r;
}
/* Portable pinned memory is the host's: it does not count against a device. */
CUresult cuMemHostAlloc(void **pp, size_t n, unsigned flags) {
	if (flags != 1) return 1; /* the package asks for CU_MEMHOSTALLOC_PORTABLE */
	struct fakeAlloc *m = malloc(sizeof *m + n);
	if (!m) return 2;
	m->n = 0, m->dev = 0;
	*pp = m + 1;
	pin(*pp, n);
	allocs++;
	return 0;
}
CUresult cuMemFreeHost(void *p) {
	for (int i = 0; i < 64; i++)
		if (pinnedMem[i].p == p) pinnedMem[i].p = NULL;
	return cuMemFree_v2((CUdeviceptr)p);
}

CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n, CUstream s) {
	if (!streamOK(s)) return 400;
	logCall("htod s%d %s\n", streamNo(s), isPinned(src, n) ? "pinned" : "pageable");
	memcpy((void *)dst, src, n);
	return 0;
}
CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n, CUstream s) {
	if (!streamOK(s)) return 400;
	logCall("dtoh s%d %s\n", streamNo(s), isPinned(dst, n) ? "pinned" : "pageable");
	memcpy(dst, (void *)src, n);
	return 0;
}

CUresult cuDeviceCanAccessPeer(int *can, CUdevice d, CUdevice peer) {
	if (!valid(d) || !valid(peer)) return 101;
#ifdef FAKE_NO_PEER
	*can = 0;
#else
	*can = d != peer;
#endif
	return 0;
}
CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned flags) {
	int cur = curDev();
	if (cur < 0) return 201;
	if (flags != 0 || peer == NULL || peer->dev - 100 == cur) return 1;
	if (peerEnabled[cur][peer->dev - 100]) return 704; /* CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED */
	peerEnabled[cur][peer->dev - 100] = 1;
	logCall("enable d%d→d%d\n", cur, peer->dev - 100);
	return 0;
}
/* The copy runs on the destination context's stream, with that context
   current, between allocations of the two contexts' devices, after the
   destination enabled access to the source. */
CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t n, CUstream s) {
	int dd = dctx->dev - 100, sd = sctx->dev - 100;
	if (curDev() != dd || !streamOK(s)) return 400;
	if (((struct fakeAlloc *)dst - 1)->dev != dd || ((struct fakeAlloc *)src - 1)->dev != sd) return 1;
	if (!peerEnabled[dd][sd]) return 217; /* CUDA_ERROR_PEER_ACCESS_UNSUPPORTED */
	logCall("peer d%d←d%d s%d\n", dd, sd, streamNo(s));
	memcpy((void *)dst, (void *)src, n);
	return 0;
}
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s) { memmove((void *)dst, (void *)src, n); return 0; }
CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned v, size_t n, CUstream s) {
	for (size_t i = 0; i < n; i++) ((unsigned *)dst)[i] = v;
	return 0;
}

static int streamsMade, eventsMade;
CUresult cuStreamCreate(CUstream *s, unsigned flags) {
	if (flags != 1) return 1; /* the package asks for CU_STREAM_NON_BLOCKING */
	if (++streamsMade >= 1024) return 2;
	streamDev[streamsMade] = curDev();
	streams++;
	*s = (CUstream)(size_t)(0x5000 + streamsMade);
	return 0;
}
CUresult cuStreamDestroy_v2(CUstream s) { streams--; return 0; }
CUresult cuStreamSynchronize(CUstream s) { return 0; }
static int eventNo(CUevent e) { return (int)((size_t)e - 0x6000); }
CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned flags) {
	if (!e || !streamOK(s) || flags != 0) return 400;
	logCall("wait s%d e%d\n", streamNo(s), eventNo(e));
	return 0;
}

CUresult cuEventCreate(CUevent *e, unsigned flags) {
	if (++eventsMade >= 1024) return 2;
	eventDev[eventsMade] = curDev();
	events++;
	*e = (CUevent)(size_t)(0x6000 + eventsMade);
	return 0;
}
CUresult cuEventDestroy_v2(CUevent e) { events--; return 0; }
CUresult cuEventRecord(CUevent e, CUstream s) {
	if (!e || !streamOK(s) || eventDev[eventNo(e)] != curDev()) return 400; /* the event is this context's */
	logCall("record e%d s%d\n", eventNo(e), streamNo(s));
	return 0;
}
CUresult cuEventSynchronize(CUevent e) { return e ? 0 : 400; }
CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b) { *ms = 1.5f; return 0; }

#ifdef FAKE_KERNELS
const void *fakeKernelFind(const char *name);
int fakeKernelLaunch(const void *f, unsigned gx, unsigned gy, unsigned bx, unsigned by, void **params);
static int kernelModule;
/* What NVRTC emits: an ELF CUBIN, or PTX text (its header comment, or a
   .version directive first). */
static int nvrtcImage(const void *image) {
	return memcmp(image, "\x7f" "ELF", 4) == 0 || memcmp(image, "//", 2) == 0 || memcmp(image, ".version", 8) == 0;
}
#endif

static int fakeModule;
CUresult cuModuleLoadData(CUmodule *m, const void *image) {
#ifdef FAKE_KERNELS
	if (nvrtcImage(image)) {
		*m = &kernelModule;
		modules++;
		return 0;
	}
#endif
	if (memcmp(image, "FAKEMOD", 8) != 0) return 200; /* CUDA_ERROR_INVALID_IMAGE */
	*m = &fakeModule;
	modules++;
	return 0;
}
CUresult cuModuleUnload(CUmodule m) { modules--; return 0; }

static int axpyFunction;
CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name) {
#ifdef FAKE_KERNELS
	if (m == &kernelModule) {
		*f = (CUfunction)fakeKernelFind(name);
		return *f ? 0 : 500;
	}
#endif
	if (m != &fakeModule) return 400;
	if (strcmp(name, "axpy") != 0) return 500; /* CUDA_ERROR_NOT_FOUND */
	*f = &axpyFunction;
	return 0;
}

CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
	unsigned bz, unsigned shared, CUstream s, void **params, void **extra) {
	if (extra != NULL || gz != 1 || bz != 1) return 1;
	unsigned dims[9] = {gx, gy, gz, bx, by, bz, shared};
	memcpy(lastLaunch, dims, sizeof dims);
	lastStream = s;
#ifdef FAKE_KERNELS
	if (f != &axpyFunction) return fakeKernelLaunch(f, gx, gy, bx, by, params) ? 0 : 400;
#endif
	if (f != &axpyFunction) return 1;
	float *y = *(float **)params[0];
	const float *x = *(const float **)params[1];
	float a = *(float *)params[2];
	int n = *(int *)params[3];
	for (unsigned i = 0; i < gx * bx; i++)
		if ((int)i < n) y[i] += a * x[i];
	return 0;
}

CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, CUfunction f, int blockSize, size_t dyn) {
	*n = (int)((65536 - dyn) / (size_t)blockSize / 32);
	return 0;
}

int fakeAllocs(void) { return allocs; }
int fakeObjects(void) { return streams + events + modules; }
unsigned fakeLastLaunch(int i) { return lastLaunch[i]; }
size_t fakeLastStream(void) { return (size_t)lastStream; }
#endif
