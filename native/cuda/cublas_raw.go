package cuda

import (
	"fmt"
	"unsafe"
)

// cublasHandle is cublasHandle_t, an opaque pointer.
type cublasHandle uintptr

// cublasAPI holds the cuBLAS entry points the prefill path uses, named
// exactly as in cublas_api.h (the _v2 names are what cublas_v2.h's macros
// expand to). alpha and beta point to host float32 values (the default
// CUBLAS_POINTER_MODE_HOST); matrices are device addresses.
type cublasAPI struct {
	cublasCreate_v2     func(handle *cublasHandle) CUBLASStatus
	cublasDestroy_v2    func(handle cublasHandle) CUBLASStatus
	cublasSetStream_v2  func(handle cublasHandle, s cuStream) CUBLASStatus
	cublasGetVersion_v2 func(handle cublasHandle, version *int32) CUBLASStatus
	cublasGemmEx        func(handle cublasHandle, transa, transb int32, m, n, k int32,
		alpha unsafe.Pointer, a DevicePtr, atype int32, lda int32, b DevicePtr, btype int32, ldb int32,
		beta unsafe.Pointer, c DevicePtr, ctype int32, ldc int32, computeType int32, algo int32) CUBLASStatus
}

// Constants of cublas_api.h and library_types.h (stable since CUDA 11).
const (
	cublasOpN          = 0  // CUBLAS_OP_N
	cublasOpT          = 1  // CUBLAS_OP_T
	cudaR32F           = 0  // CUDA_R_32F
	cudaR16F           = 2  // CUDA_R_16F
	cublasCompute32F   = 68 // CUBLAS_COMPUTE_32F (cublasComputeType_t, CUDA 11+)
	cublasGemmDefault  = -1 // CUBLAS_GEMM_DEFAULT
	cublasStatusNotSup = 15 // CUBLAS_STATUS_NOT_SUPPORTED
)

func (a *cublasAPI) required() []symbol {
	return []symbol{
		{"cublasCreate_v2", &a.cublasCreate_v2},
		{"cublasDestroy_v2", &a.cublasDestroy_v2},
		{"cublasSetStream_v2", &a.cublasSetStream_v2},
		{"cublasGemmEx", &a.cublasGemmEx},
	}
}

func (a *cublasAPI) optional() []symbol {
	return []symbol{{"cublasGetVersion_v2", &a.cublasGetVersion_v2}}
}

func (a *cublasAPI) bind(handle uintptr) error {
	return bindSymbols(handle, a.required(), a.optional())
}

// CUBLASStatus is a cublasStatus_t; success (0) is never an error.
type CUBLASStatus int32

var cublasStatusNames = map[CUBLASStatus]string{
	0: "CUBLAS_STATUS_SUCCESS", 1: "CUBLAS_STATUS_NOT_INITIALIZED", 3: "CUBLAS_STATUS_ALLOC_FAILED",
	7: "CUBLAS_STATUS_INVALID_VALUE", 8: "CUBLAS_STATUS_ARCH_MISMATCH", 11: "CUBLAS_STATUS_MAPPING_ERROR",
	13: "CUBLAS_STATUS_EXECUTION_FAILED", 14: "CUBLAS_STATUS_INTERNAL_ERROR", 15: "CUBLAS_STATUS_NOT_SUPPORTED",
	16: "CUBLAS_STATUS_LICENSE_ERROR",
}

func (s CUBLASStatus) Error() string {
	if n, ok := cublasStatusNames[s]; ok {
		return n
	}
	return fmt.Sprintf("cublasStatus_t %d", int32(s))
}

// checkCUBLAS turns a status into an error naming the call.
func checkCUBLAS(call string, s CUBLASStatus) error {
	if s == 0 {
		return nil
	}
	return fmt.Errorf("%s: %w", call, s)
}
