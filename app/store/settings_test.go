package store

import (
	"os"
	"path/filepath"
	"reflect"
	"sync/atomic"
	"testing"

	"flowchat/app/presets"
)

func TestSettingsRoundTripAndPerModel(t *testing.T) {
	f := SettingsFile{Path: filepath.Join(t.TempDir(), "cfg", "settings.json")}
	s, err := f.Load()
	if err != nil || s.Models != nil {
		t.Fatalf("missing file: %+v, %v", s, err)
	}
	if m, ok := s.Model("/x/a.gguf"); ok || m.Sampling.TopK != presets.Default().TopK {
		t.Errorf("unknown model settings = %+v, %v", m, ok)
	}
	p := presets.Default()
	p.Temperature = 0.3
	s.SetModel("/models/a.gguf", ModelSettings{Preset: "Precise", Sampling: p, Load: LoadSettings{Context: 2048, Threads: 2}})
	s.UserPresets = []presets.Preset{{Name: "mine", Params: p}}
	s.LastModel = "/models/a.gguf"
	if err := f.Save(s); err != nil {
		t.Fatal(err)
	}
	got, err := f.Load()
	if err != nil {
		t.Fatal(err)
	}
	s.Version = 1
	if !reflect.DeepEqual(got, s) {
		t.Errorf("settings round trip\n got %+v\nwant %+v", got, s)
	}
	// Settings follow the file name, not its directory.
	if m, ok := got.Model("/elsewhere/a.gguf"); !ok || m.Sampling.Temperature != 0.3 || m.Load.Context != 2048 {
		t.Errorf("moved model lost its settings: %+v", m)
	}
}

func TestSaverCoalescesAndRunsThenAfterWrite(t *testing.T) {
	d := openTemp(t)
	sf := SettingsFile{Path: filepath.Join(t.TempDir(), "s.json")}
	var errs atomic.Int32
	s := NewSaver(d, sf, func(error) { errs.Add(1) })
	c, _ := chat(t)
	var ran atomic.Int32
	for i := range 20 {
		c.Title = string(rune('a' + i))
		s.Save(c, func() {
			if got, err := d.Load(c.ID); err != nil || got.Title == "" {
				t.Errorf("then ran before the file was written: %v", err)
			}
			ran.Add(1)
		})
	}
	s.SaveSettings(Settings{LastModel: "m"})
	s.Flush()
	got, err := d.Load(c.ID)
	if err != nil || got.Title != "t" || ran.Load() != 20 || errs.Load() != 0 {
		t.Fatalf("after flush: title %q, %d thens, %d errors, %v", got.Title, ran.Load(), errs.Load(), err)
	}
	if st, _ := sf.Load(); st.LastModel != "m" {
		t.Errorf("settings not saved: %+v", st)
	}
	s.Delete(c.ID)
	s.Close()
	if all, _ := d.LoadAll(); len(all) != 0 {
		t.Error("Delete did not reach the disk")
	}
}

// TestLoadSettingsGPUSplit: the load dialog's device choice, shares and
// partition survive a save and a load; a settings file written before
// they existed still loads, with none of them set; Clone copies them.
func TestLoadSettingsGPUSplit(t *testing.T) {
	f := SettingsFile{Path: filepath.Join(t.TempDir(), "settings.json")}
	var s Settings
	want := LoadSettings{GPULayers: 20, Devices: []string{"cuda:0", "hip:0"}, Split: []float64{3, 1}, SplitMode: "hybrid", TensorGroup: 2}
	s.SetModel("/m/a.gguf", ModelSettings{Load: want})
	if err := f.Save(s); err != nil {
		t.Fatal(err)
	}
	got, err := f.Load()
	if err != nil {
		t.Fatal(err)
	}
	if m, _ := got.Model("/m/a.gguf"); !reflect.DeepEqual(m.Load, want) {
		t.Errorf("load settings round trip: got %+v, want %+v", m.Load, want)
	}
	c := got.Clone()
	c.Models["a.gguf"].Load.Split[0] = 9
	if m, _ := got.Model("/m/a.gguf"); m.Load.Split[0] != 3 {
		t.Error("Clone shares the split shares with the original")
	}

	old := `{"version":1,"models":{"b.gguf":{"preset":"Balanced","load":{"context":2048,"gpu_layers":12,"gpu_auto":true}}}}`
	if err := os.WriteFile(f.Path, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err = f.Load()
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := got.Model("/m/b.gguf"); !ok || m.Load.GPULayers != 12 || !m.Load.GPUAuto || m.Load.Devices != nil || m.Load.Split != nil || m.Load.SplitMode != "" {
		t.Errorf("old settings file: %+v, %v", m.Load, ok)
	}
}
