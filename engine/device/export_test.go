package device

// FakeLibraries are the fake libcuda and libamdhip64 TestMain built (and
// pointed the loaders at), "" where one could not be built, with why.
func FakeLibraries() (cuda, cudaSkip, hip, hipSkip string) {
	return fakePath, fakeSkip, fakeHIPPath, fakeHIPSkip
}
