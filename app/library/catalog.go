package library

import (
	"encoding/json"
	"fmt"
	"strings"

	"flowchat/app/hub"
)

// Catalog is the curated list of models offered to first-time users
// (assets/catalog.json).
type Catalog struct {
	Version        int            `json:"version"`
	VerifiedOnline bool           `json:"verified_online"` // false: entries written without checking the hub
	Note           string         `json:"note"`
	Models         []CatalogEntry `json:"models"`
}

// CatalogEntry is one recommended model: one GGUF file of a hub repo.
type CatalogEntry struct {
	ID            string `json:"id"`
	Name          string `json:"name"`
	Description   string `json:"description"`
	Repo          string `json:"repo"`
	File          string `json:"file"`
	Quant         string `json:"quant"`
	SizeBytes     int64  `json:"size_bytes"` // approximate; the listing has the exact size
	Params        string `json:"params"`
	ContextLength int64  `json:"context_length"`
	License       string `json:"license"`
	LicenseNote   string `json:"license_note,omitempty"`
	Architecture  string `json:"architecture"` // general.architecture of the GGUF
	Spec          string `json:"spec"`         // specs/<spec>.json
	SpecAvailable bool   `json:"spec_available"`
	SpecNote      string `json:"spec_note,omitempty"`
}

// Ref is what `flowchat pull` takes for the entry: "repo:file".
func (e *CatalogEntry) Ref() string { return e.Repo + ":" + e.File }

// ParseCatalog reads and checks a catalog.
func ParseCatalog(data []byte) (*Catalog, error) {
	var c Catalog
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("library: catalog: %w", err)
	}
	seen := map[string]bool{}
	for _, e := range c.Models {
		if err := e.check(); err != nil {
			return nil, fmt.Errorf("library: catalog entry %q: %w", e.ID, err)
		}
		if seen[e.ID] {
			return nil, fmt.Errorf("library: catalog entry %q appears twice", e.ID)
		}
		seen[e.ID] = true
	}
	return &c, nil
}

func (e *CatalogEntry) check() error {
	fn := hub.ParseFileName(e.File)
	switch {
	case e.ID == "" || e.Name == "":
		return fmt.Errorf("no id or name")
	case !hub.ValidRepoID(e.Repo):
		return fmt.Errorf("repo %q is not owner/name", e.Repo)
	case fn.Ext != "gguf" || strings.Contains(e.File, "/"):
		return fmt.Errorf("file %q is not a top-level .gguf", e.File)
	case !strings.EqualFold(fn.Quant, e.Quant):
		return fmt.Errorf("quant %q, but the file name says %q", e.Quant, fn.Quant)
	case e.SizeBytes <= 0 || e.License == "" || e.Spec == "" || e.Architecture == "":
		return fmt.Errorf("size, licence, architecture and spec are required")
	}
	return nil
}

// Entry finds an entry by id.
func (c *Catalog) Entry(id string) (CatalogEntry, bool) {
	for _, e := range c.Models {
		if e.ID == id {
			return e, true
		}
	}
	return CatalogEntry{}, false
}
