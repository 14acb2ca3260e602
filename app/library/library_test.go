package library

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"flowchat/app/hub"
	"flowchat/engine/fixtures"
)

const (
	f32Fixture  = "models/stories260K/stories260K-F32.gguf"
	q8Fixture   = "models/stories260K/stories260K-Q8_0mix.gguf"
	tinyFixture = "models/tinystories-656K/TinyStories-656K-Q4_0.gguf"
	gqaFixture  = "arch/rand-llama-gqa-Q8_0.gguf" // has general.file_type
)

func put(t *testing.T, dst string, data []byte) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dst
}

func fixture(t *testing.T, rel string) []byte {
	b, err := os.ReadFile(fixtures.Path(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// hfCache builds a Hugging Face cache entry: blobs by sha256, snapshot
// links, refs/main.
func hfCache(t *testing.T, cache, repo, rev string, files map[string][]byte, main bool) {
	t.Helper()
	dir := filepath.Join(cache, "models--"+strings.ReplaceAll(repo, "/", "--"))
	for name, data := range files {
		blob := filepath.Join(dir, "blobs", hub.ParseFileName(name).Base+"-"+rev[:4])
		put(t, blob, data)
		link := filepath.Join(dir, "snapshots", rev, name)
		os.MkdirAll(filepath.Dir(link), 0o755)
		target, _ := filepath.Rel(filepath.Dir(link), blob)
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	if main {
		put(t, filepath.Join(dir, "refs", "main"), []byte(rev))
	}
}

type setup struct {
	lib                  *Library
	data, cache, folder  string
	f32, q8, tiny, split []byte
}

func newSetup(t *testing.T) *setup {
	root := t.TempDir()
	s := &setup{data: filepath.Join(root, "models"), cache: filepath.Join(root, "hf", "hub"), folder: filepath.Join(root, "mine")}
	s.f32, s.q8, s.tiny = fixture(t, f32Fixture), fixture(t, q8Fixture), fixture(t, tinyFixture)
	put(t, filepath.Join(s.data, "stories260K-demo.gguf"), s.f32)
	put(t, filepath.Join(s.data, "o", "tiny-GGUF", "TinyStories-656K-Q4_0.gguf"), s.tiny)
	put(t, filepath.Join(s.data, "o", "split-GGUF", "S-Q8_0-00001-of-00002.gguf"), s.q8)
	put(t, filepath.Join(s.data, "o", "split-GGUF", "S-Q8_0-00002-of-00002.gguf"), s.q8)
	put(t, filepath.Join(s.data, "o", "busy-GGUF", "B-Q4_K_M.gguf.part"), []byte("partial"))
	put(t, filepath.Join(s.data, "o", "busy-GGUF", ".abc.download.json"), []byte("{}"))
	hfCache(t, s.cache, "hf/cached-GGUF", "1111111111111111111111111111111111111111", map[string][]byte{"C-Q8_0.gguf": s.q8}, false)
	hfCache(t, s.cache, "hf/cached-GGUF", "2222222222222222222222222222222222222222", map[string][]byte{"C-Q8_0.gguf": s.q8, "sub/D-F32.gguf": s.f32}, true)
	hfCache(t, s.cache, "hf/st", "3333333333333333333333333333333333333333", map[string][]byte{
		"model.safetensors": []byte("weights"), "config.json": []byte(`{"model_type":"llama","num_hidden_layers":5,"hidden_size":64,"num_attention_heads":4,"max_position_embeddings":128}`)}, true)
	put(t, filepath.Join(s.folder, "deep", "mine-F32.gguf"), s.f32)
	put(t, filepath.Join(s.folder, "plain.gguf"), fixture(t, gqaFixture))
	s.lib = &Library{DataDir: s.data, HFCache: s.cache, Folders: []string{s.folder}}
	return s
}

func names(ms []Model) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Source.String()+":"+m.Repo+":"+m.Name)
	}
	return out
}

func TestScan(t *testing.T) {
	s := newSetup(t)
	ms, err := s.lib.Scan()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"huggingface cache:hf/cached-GGUF:C-Q8_0", "huggingface cache:hf/cached-GGUF:D-F32", "folder::mine-F32", "folder::plain",
		"downloaded:o/split-GGUF:S-Q8_0", "huggingface cache:hf/st:st", "downloaded::stories260K-demo", "downloaded:o/tiny-GGUF:TinyStories-656K-Q4_0"}
	if !reflect.DeepEqual(names(ms), want) {
		t.Fatalf("models\n got %v\nwant %v", names(ms), want)
	}
	byName := map[string]Model{}
	for _, m := range ms {
		byName[m.Name] = m
	}
	checkInfo(t, byName["TinyStories-656K-Q4_0"], fixtures.Path(t, tinyFixture), 1)
	checkInfo(t, byName["S-Q8_0"], fixtures.Path(t, q8Fixture), 2)
	if c := byName["C-Q8_0"]; c.Revision != strings.Repeat("2", 40) || c.Size != int64(len(s.q8)) {
		t.Errorf("cached model from the wrong snapshot or size: %+v", c)
	}
	if st := byName["st"]; st.Kind != hub.KindSafetensors || st.Info == nil || st.Info.BlockCount != 5 || st.Info.KeyLength != 16 || len(st.Files) != 2 {
		t.Errorf("safetensors model %+v %+v", st, st.Info)
	}
	if sp := byName["S-Q8_0"]; sp.Quant != "Q8_0" || !strings.HasSuffix(sp.Path, "00001-of-00002.gguf") || sp.Problem != "" {
		t.Errorf("split model %+v", sp)
	}
	if d := byName["plain"]; d.Quant != "Q8_0" {
		t.Errorf("quant from general.file_type: %q", d.Quant)
	}
}

// checkInfo compares the listed metadata with the hub package's header
// reader on the fixture, shards' tensors summed.
func checkInfo(t *testing.T, m Model, fixture string, shards uint64) {
	t.Helper()
	h, err := hub.ReadHeaderFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	want := h.Info()
	want.ParamCount *= shards
	want.WeightBytes *= shards
	if m.Info == nil || *m.Info != want {
		t.Errorf("%s: info %+v, want %+v (%s)", m.Name, m.Info, want, m.Problem)
	}
}

func TestScanFlagsMissingShard(t *testing.T) {
	s := newSetup(t)
	os.Remove(filepath.Join(s.data, "o", "split-GGUF", "S-Q8_0-00002-of-00002.gguf"))
	ms, _ := s.lib.Scan()
	m, ok := Find(ms, "o/split-GGUF:q8_0")
	if !ok || !strings.Contains(m.Problem, "1 of 2 parts") {
		t.Errorf("%+v %v", m, ok)
	}
}

// TestIndexCachesHeaders: a second scan takes metadata from the index
// until the file changes.
func TestIndexCachesHeaders(t *testing.T) {
	s := newSetup(t)
	if _, err := s.lib.Scan(); err != nil {
		t.Fatal(err)
	}
	idxPath := filepath.Join(s.data, indexName)
	var idx index
	b, _ := os.ReadFile(idxPath)
	if err := json.Unmarshal(b, &idx); err != nil || len(idx.Entries) != 8 {
		t.Fatalf("index: %v, %d entries", err, len(idx.Entries))
	}
	demo := filepath.Join(s.data, "stories260K-demo.gguf")
	e := idx.Entries[demo]
	e.Info.Name = "from the index"
	idx.Entries[demo] = e
	b, _ = json.Marshal(&idx)
	os.WriteFile(idxPath, b, 0o644)
	ms, _ := s.lib.Scan()
	if m, _ := Find(ms, demo); m.Info == nil || m.Info.Name != "from the index" {
		t.Fatalf("index not used: %+v", m.Info)
	}
	later := time.Now().Add(time.Hour)
	os.Chtimes(demo, later, later)
	ms, _ = s.lib.Scan()
	if m, _ := Find(ms, demo); m.Info == nil || m.Info.Name == "from the index" {
		t.Errorf("stale index entry used after the file changed")
	}
}

func TestDeleteDownloaded(t *testing.T) {
	s := newSetup(t)
	ms, _ := s.lib.Scan()
	m, _ := Find(ms, "o/split-GGUF")
	var asked []string
	if err := s.lib.Delete(m, func(_ Model, p []string) bool { asked = p; return false }); !errors.Is(err, ErrDeclined) {
		t.Fatalf("declined: %v", err)
	}
	if !reflect.DeepEqual(asked, m.Files) || fileMissing(m.Files[0]) {
		t.Fatalf("asked about %v; files must stay after a no", asked)
	}
	if err := s.lib.Delete(m, func(Model, []string) bool { return true }); err != nil {
		t.Fatal(err)
	}
	if !fileMissing(filepath.Join(s.data, "o", "split-GGUF")) || fileMissing(filepath.Join(s.data, "o")) {
		t.Error("the model's empty folder should go, its owner's folder (still used) stay")
	}
	forged := Model{Name: "x", Source: FromData, Files: []string{filepath.Join(s.folder, "deep", "mine-F32.gguf")}}
	if err := s.lib.Delete(forged, func(Model, []string) bool { return true }); err == nil {
		t.Error("deleted a file outside the data dir")
	}
	inFolder, _ := Find(ms, "mine-F32")
	if err := s.lib.Delete(inFolder, func(Model, []string) bool { return true }); !errors.Is(err, ErrInPlace) {
		t.Errorf("folder model: %v", err)
	}
}

func fileMissing(p string) bool {
	_, err := os.Lstat(p)
	return os.IsNotExist(err)
}

// TestDeleteFromHFCache removes the snapshot link and the blob no other
// snapshot uses; a blob another snapshot links stays.
func TestDeleteFromHFCache(t *testing.T) {
	s := newSetup(t)
	repoDir := filepath.Join(s.cache, "models--hf--cached-GGUF")
	// Snapshot 1111 links C's blob too.
	os.Remove(filepath.Join(repoDir, "snapshots", strings.Repeat("1", 40), "C-Q8_0.gguf"))
	os.Symlink("../../blobs/C-Q8_0-2222", filepath.Join(repoDir, "snapshots", strings.Repeat("1", 40), "C-Q8_0.gguf"))
	ms, _ := s.lib.Scan()
	for name, wantBlobGone := range map[string]bool{"D-F32": true, "C-Q8_0": false} {
		m, _ := Find(ms, name)
		var asked []string
		if err := s.lib.Delete(m, func(_ Model, p []string) bool { asked = p; return true }); err != nil {
			t.Fatal(err)
		}
		blob := filepath.Join(repoDir, "blobs", strings.TrimSuffix(name, "")+"-2222")
		if fileMissing(blob) != wantBlobGone || !fileMissing(m.Files[0]) || len(asked) != map[bool]int{true: 2, false: 1}[wantBlobGone] {
			t.Errorf("%s: blob gone %v, asked %v", name, fileMissing(blob), asked)
		}
	}
	if !fileMissing(filepath.Join(repoDir, "snapshots", strings.Repeat("2", 40), "sub")) {
		t.Error("empty snapshot subfolder left")
	}
}

func TestFolders(t *testing.T) {
	s := newSetup(t)
	lib := New(s.data)
	if len(lib.Folders) != 0 {
		t.Fatalf("folders %v", lib.Folders)
	}
	if err := lib.AddFolder(s.folder); err != nil {
		t.Fatal(err)
	}
	if err := lib.AddFolder(filepath.Join(s.folder, "nope")); err == nil {
		t.Error("added a missing folder")
	}
	if got := New(s.data).Folders; !reflect.DeepEqual(got, []string{s.folder}) {
		t.Errorf("saved folders %v", got)
	}
	lib.RemoveFolder(s.folder)
	if got := New(s.data).Folders; len(got) != 0 {
		t.Errorf("after remove %v", got)
	}
}

func TestHFCacheDir(t *testing.T) {
	t.Setenv("HF_HUB_CACHE", "")
	t.Setenv("HF_HOME", "/x/hf")
	if HFCacheDir() != "/x/hf/hub" {
		t.Error(HFCacheDir())
	}
	t.Setenv("HF_HUB_CACHE", "/y")
	if HFCacheDir() != "/y" {
		t.Error(HFCacheDir())
	}
	if l := New(t.TempDir()); l.DownloadDir("a/b") != filepath.Join(l.DataDir, "a", "b") {
		t.Error(l.DownloadDir("a/b"))
	}
}

// TestCatalogAsset checks assets/catalog.json: it parses, every entry's
// quant matches its file name, and spec_available says whether
// specs/<spec>.json exists.
func TestCatalogAsset(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(fixtures.Root(), "assets", "catalog.json"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseCatalog(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Models) < 12 || c.VerifiedOnline {
		t.Errorf("%d entries, verified_online %v", len(c.Models), c.VerifiedOnline)
	}
	for _, e := range c.Models {
		_, err := os.Stat(filepath.Join(fixtures.Root(), "specs", e.Spec+".json"))
		if (err == nil) != e.SpecAvailable {
			t.Errorf("%s: spec %s available=%v but the file exists=%v", e.ID, e.Spec, e.SpecAvailable, err == nil)
		}
		if !strings.HasPrefix(e.Ref(), e.Repo+":") {
			t.Error(e.Ref())
		}
	}
	if _, ok := c.Entry("llama-3.2-1b"); !ok {
		t.Error("llama-3.2-1b missing")
	}
	bad := []string{
		`{"models":[{"id":"a","name":"A","repo":"x","file":"a-Q4_K_M.gguf","quant":"Q4_K_M","size_bytes":1,"license":"l","spec":"s","architecture":"a"}]}`,
		`{"models":[{"id":"a","name":"A","repo":"x/y","file":"a-Q4_K_M.gguf","quant":"Q8_0","size_bytes":1,"license":"l","spec":"s","architecture":"a"}]}`,
		`{"models":[{"id":"a","name":"A","repo":"x/y","file":"a-Q4_K_M.gguf","quant":"Q4_K_M","size_bytes":1,"license":"l","spec":"s","architecture":"a"},{"id":"a","name":"A","repo":"x/y","file":"a-Q4_K_M.gguf","quant":"Q4_K_M","size_bytes":1,"license":"l","spec":"s","architecture":"a"}]}`,
	}
	for _, b := range bad {
		if _, err := ParseCatalog([]byte(b)); err == nil {
			t.Errorf("accepted %s", b)
		}
	}
}

func TestPrintModelsAndResolve(t *testing.T) {
	s := newSetup(t)
	ms, _ := s.lib.Scan()
	var out strings.Builder
	PrintModels(&out, ms, filepath.Join(s.data, "stories260K-demo.gguf"))
	for _, want := range []string{"TinyStories-656K-Q4_0", "Q4_0", "llama", "downloaded", "huggingface cache", "folder"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("missing %q in\n%s", want, out.String())
		}
	}
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.HasPrefix(line, "stories260K-demo ") && (!strings.Contains(line, " bundled ") || strings.Contains(line, "downloaded")) {
			t.Errorf("the bundled demo is not labelled bundled: %q", line)
		}
	}
	c := &Catalog{Models: []CatalogEntry{{ID: "x", Repo: "o/m", File: "f.gguf"}}}
	if c.Resolve("x") != "o/m:f.gguf" || c.Resolve("o/n:Q8_0") != "o/n:Q8_0" || c.Resolve("y") != "y" {
		t.Error("resolve")
	}
}
