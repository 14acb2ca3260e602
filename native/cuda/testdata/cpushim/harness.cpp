// harness runs one kernel of ../../kernels on the CPU through shim.h.
//
//   harness KERNEL GX GY BX BY ARG... < buffers > buffers
//   harness --list
//
// ARG is i:<int>, f:<float32 bits>, n (a null pointer) or b (the next
// buffer on stdin). Buffers are a uint64 byte count and the bytes
// (little-endian); after the launch every buffer goes to stdout in the
// same order. Blocks run one after another, threads of a block at once.
#include "shim.h"

#include "act.cu"
#include "attn.cu"
#include "matmul.cu"
#include "matmul_tiled.cu"
#include "norm.cu"
#include "rope.cu"
#include "launch.h"
#include "kernels.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>


struct Arg {
	char kind;
	long long i;
	float f;
	void* p;
};
static std::vector<Arg> args;

// Take converts argument i to the kernel parameter's type.
struct Take {
	size_t i;
	operator int() const { return (int)args[i].i; }
	operator float() const { return args[i].f; }
	template <typename T> operator T*() const { return (T*)args[i].p; }
};

template <typename... P, size_t... I> static void callWith(void (*k)(P...), std::index_sequence<I...>) {
	k(Take{I}...);
}
template <typename... P> static void call(void (*k)(P...)) { callWith(k, std::index_sequence_for<P...>{}); }

#define KERNEL(name) {#name, [] { call(name); }}
static const std::map<std::string, void (*)()> kernels = {
	FC_SHIM_KERNELS,
	FC_SHIM_KERNELS_TILED,
};

int main(int argc, char** argv) {
	if (argc == 2 && std::string(argv[1]) == "--list") {
		for (auto& k : kernels) printf("%s\n", k.first.c_str());
		return 0;
	}
	if (argc < 6) return 2;
	auto k = kernels.find(argv[1]);
	if (k == kernels.end()) {
		fprintf(stderr, "harness: unknown kernel %s\n", argv[1]);
		return 4;
	}
	gridDim.x = atoi(argv[2]), gridDim.y = atoi(argv[3]);
	blockDim.x = atoi(argv[4]), blockDim.y = atoi(argv[5]);
	std::vector<std::vector<char>> bufs;
	bufs.reserve(argc);
	for (int i = 6; i < argc; i++) {
		Arg a{argv[i][0], 0, 0, nullptr};
		if (a.kind == 'i') a.i = atoll(argv[i] + 2);
		if (a.kind == 'f') {
			unsigned u = (unsigned)strtoul(argv[i] + 2, nullptr, 10);
			memcpy(&a.f, &u, 4);
		}
		if (a.kind == 'b') {
			unsigned long long n;
			if (fread(&n, 8, 1, stdin) != 1) return 3;
			bufs.emplace_back(n);
			if (n && fread(bufs.back().data(), 1, n, stdin) != n) return 3;
			a.p = bufs.back().data();
		}
		args.push_back(a);
	}
	launch(k->second);
	for (auto& b : bufs) {
		unsigned long long n = b.size();
		fwrite(&n, 8, 1, stdout);
		fwrite(b.data(), 1, n, stdout);
	}
	return 0;
}
