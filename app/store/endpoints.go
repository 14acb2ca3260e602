package store

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Endpoint is a remote inference server the user named: an
// OpenAI-compatible base URL. Its API key is not here (settings files get
// copied, attached to bug reports, synced): it lives in Keys, under the
// endpoint's ID.
type Endpoint struct {
	ID      string `json:"id"` // names the key file; stable across renames
	Name    string `json:"name"`
	BaseURL string `json:"base_url"`
	// Dialect is the server's flavour chosen by hand (remote.Dialect's
	// names); "" detects it.
	Dialect string `json:"dialect,omitempty"`
	// Model is the model last chosen on this endpoint.
	Model string `json:"model,omitempty"`
}

// Endpoint returns the endpoint called name.
func (s *Settings) Endpoint(name string) (Endpoint, bool) {
	i := slices.IndexFunc(s.Endpoints, func(e Endpoint) bool { return e.Name == name })
	if i < 0 {
		return Endpoint{}, false
	}
	return s.Endpoints[i], true
}

// SetEndpoint adds e, or replaces the endpoint with its ID, and returns
// it with an ID given when it had none. Names are unique.
func (s *Settings) SetEndpoint(e Endpoint) (Endpoint, error) {
	e.Name = strings.TrimSpace(e.Name)
	if e.Name == "" || e.BaseURL == "" {
		return e, errors.New("an endpoint needs a name and a base URL")
	}
	if e.ID == "" {
		e.ID = NewID()
	}
	for i, o := range s.Endpoints {
		if o.Name == e.Name && o.ID != e.ID {
			return e, fmt.Errorf("there is already an endpoint called %q", e.Name)
		}
		if o.ID == e.ID {
			s.Endpoints[i] = e
			return e, nil
		}
	}
	s.Endpoints = append(s.Endpoints, e)
	return e, nil
}

// RemoveEndpoint forgets the endpoint with id (its key is Keys' to
// delete).
func (s *Settings) RemoveEndpoint(id string) {
	s.Endpoints = slices.DeleteFunc(s.Endpoints, func(e Endpoint) bool { return e.ID == id })
}

// Keys keeps endpoints' API keys, one file each (<id>.key), readable by
// the user alone (0600, in a 0700 directory), written atomically. A key
// never goes into the settings, a conversation, an export or a log.
type Keys struct{ Dir string }

func (k Keys) file(id string) (string, error) {
	if !validID(id) {
		return "", fmt.Errorf("api keys: bad endpoint id %q", id)
	}
	return filepath.Join(k.Dir, id+".key"), nil
}

// Save stores key for endpoint id; an empty key deletes it.
func (k Keys) Save(id, key string) error {
	if key == "" {
		return k.Delete(id)
	}
	path, err := k.file(id)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(k.Dir, 0o700); err != nil {
		return fmt.Errorf("api keys: %w", err)
	}
	if err := os.Chmod(k.Dir, 0o700); err != nil {
		return fmt.Errorf("api keys: %w", err)
	}
	// WriteFileAtomic's temporary file is created 0600 and keeps its mode
	// through the rename, so the key is never readable by others.
	if err := WriteFileAtomic(path, []byte(key)); err != nil {
		return fmt.Errorf("api keys: %w", err)
	}
	return os.Chmod(path, 0o600)
}

// Load returns endpoint id's key, or "" when it has none. A key file
// others can read is refused, as ssh refuses such a private key.
func (k Keys) Load(id string) (string, error) {
	path, err := k.file(id)
	if err != nil {
		return "", err
	}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("api keys: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("api keys: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return "", fmt.Errorf("api keys: %s is readable by other users (mode %v); chmod 600 it", path, st.Mode().Perm())
	}
	b, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil {
		return "", fmt.Errorf("api keys: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// Delete removes endpoint id's key.
func (k Keys) Delete(id string) error {
	path, err := k.file(id)
	if err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("api keys: %w", err)
	}
	return nil
}
