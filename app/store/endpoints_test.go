package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEndpointsPersistWithoutKeys(t *testing.T) {
	dir := t.TempDir()
	f, err := Open(Locations{Conversations: filepath.Join(dir, "c"), Settings: filepath.Join(dir, "cfg", "settings.json")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var s Settings
	e, err := s.SetEndpoint(Endpoint{Name: "cluster", BaseURL: "https://gpu.example:8000/v1", Dialect: "vllm"})
	if err != nil || e.ID == "" {
		t.Fatalf("%+v, %v", e, err)
	}
	if _, err := s.SetEndpoint(Endpoint{Name: "cluster", BaseURL: "http://other"}); err == nil {
		t.Error("a second endpoint with the same name was accepted")
	}
	const secret = "sk-do-not-leak-0123456789"
	if err := f.Keys().Save(e.ID, secret); err != nil {
		t.Fatal(err)
	}
	f.SaveSettingsAsync(s)
	f.Flush()

	b, err := os.ReadFile(filepath.Join(dir, "cfg", "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), secret) || !strings.Contains(string(b), "gpu.example") {
		t.Errorf("settings file:\n%s", b)
	}
	got, err := f.LoadSettings()
	if err != nil {
		t.Fatal(err)
	}
	back, ok := got.Endpoint("cluster")
	if !ok || back != e {
		t.Fatalf("endpoint read back %+v, want %+v", back, e)
	}
	key, err := f.Keys().Load(back.ID)
	if err != nil || key != secret {
		t.Fatalf("key %q, %v", key, err)
	}
	kf := filepath.Join(dir, "cfg", "keys", e.ID+".key")
	for path, want := range map[string]os.FileMode{kf: 0o600, filepath.Dir(kf): 0o700} {
		st, err := os.Stat(path)
		if err != nil || st.Mode().Perm() != want {
			t.Errorf("%s: mode %v, %v; want %v", path, st.Mode().Perm(), err, want)
		}
	}

	// Renaming keeps the ID, so the key follows.
	back.Name = "big cluster"
	if _, err := got.SetEndpoint(back); err != nil || len(got.Endpoints) != 1 || got.Endpoints[0].Name != "big cluster" {
		t.Errorf("rename: %v, %+v", err, got.Endpoints)
	}
	got.RemoveEndpoint(back.ID)
	if err := f.Keys().Delete(back.ID); err != nil || len(got.Endpoints) != 0 {
		t.Fatalf("remove: %v, %+v", err, got.Endpoints)
	}
	if key, err := f.Keys().Load(back.ID); key != "" || err != nil {
		t.Errorf("deleted key reads %q, %v", key, err)
	}
}

func TestKeyReadableByOthersIsRefused(t *testing.T) {
	k := Keys{Dir: t.TempDir()}
	if err := k.Save("abc", "secret"); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Join(k.Dir, "abc.key"), 0o644)
	if _, err := k.Load("abc"); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("world-readable key: %v", err)
	}
	if err := k.Save("../x", "s"); err == nil {
		t.Error("an id naming another directory was accepted")
	}
}
