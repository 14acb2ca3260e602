// Package hub talks to the Hugging Face hub: it searches models, lists a
// repository's files with their sizes and LFS sha256, reads a GGUF file's
// header through HTTP range requests without downloading the weights,
// estimates the memory a model needs, and downloads files with a manager
// that resumes, retries, verifies and survives restarts.
//
// It is written on net/http rather than on a Go hub library because none of
// the Go libraries for the hub does what a download of a multi-gigabyte file
// over a flaky link needs: resuming a .part file with Range + If-Range (so a
// file that changed on the server is restarted rather than spliced), stall
// detection with backoff, and sha256 verification against the LFS oid before
// the file is moved into place. The official Python client does these; we
// follow its conventions: the base URL comes from HF_ENDPOINT, the token from
// HF_TOKEN or the token file under HF_HOME, and errors use the hub's
// X-Error-Code header (GatedRepo, RepoNotFound, EntryNotFound,
// RevisionNotFound).
//
// Endpoints used (JSON shapes as the hub's public API documents them):
//
//	GET /api/models?search=…&filter=gguf&sort=downloads&direction=-1&limit=…  (Link: <…>; rel="next")
//	GET /api/models/{repo}/tree/{revision}?recursive=true                     (Link pagination too)
//	GET /{repo}/resolve/{revision}/{path}                                     (302 to a CDN host for LFS files)
package hub
