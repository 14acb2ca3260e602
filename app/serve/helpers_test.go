package serve

import (
	"context"
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"flowchat/engine"
	"flowchat/engine/chat"
	"flowchat/engine/fixtures"
	"flowchat/engine/sample"
)

// The tests share one loaded model: loading is the slow part, and the
// model is read-only. Requests never overlap with the reference runs,
// because the forward pass is not reentrant.
var (
	loadOnce  sync.Once
	testModel *engine.Model
	loadErr   error
)

const storiesPath = "models/stories260K/stories260K-F32.gguf"

func TestMain(m *testing.M) {
	code := m.Run()
	if testModel != nil {
		testModel.Close()
	}
	os.Exit(code)
}

func model(t testing.TB) *engine.Model {
	t.Helper()
	path := fixtures.Path(t, storiesPath)
	loadOnce.Do(func() { testModel, loadErr = engine.Load(path, engine.LoadOptions{Threads: 1}) })
	if loadErr != nil {
		t.Fatal(loadErr)
	}
	return testModel
}

// testCtx is each slot's context: small, so that slots are cheap.
const testCtx = 256

// newTestServer serves m over loopback with parallel slots; cfg's Model,
// Backend and ModelID are filled in when empty.
func newTestServer(t *testing.T, m *engine.Model, parallel int, cfg Config) (*httptest.Server, *ModelBackend) {
	t.Helper()
	b := NewModelBackend(m, parallel, testCtx, 64)
	cfg.Model = m
	if cfg.Backend == nil {
		cfg.Backend = b
	}
	if cfg.ModelID == "" {
		cfg.ModelID = "stories"
	}
	ts := httptest.NewServer(New(cfg))
	t.Cleanup(ts.Close)
	return ts, b
}

func client(ts *httptest.Server, key string) openai.Client {
	if key == "" {
		key = "unused"
	}
	return openai.NewClient(option.WithBaseURL(ts.URL+"/v1"), option.WithAPIKey(key), option.WithMaxRetries(0))
}

// reference is what engine.Session.Generate produces, greedy, on a fresh
// session: the ground truth the server must reproduce.
type reference struct {
	ids    []int32
	text   string
	pieces []string
	stats  engine.Stats
}

func generateRef(t *testing.T, m *engine.Model, prompt []int32, maxTokens int, ignoreEOS bool) reference {
	t.Helper()
	var r reference
	p := sample.DefaultParams()
	p.Decoding = sample.DecodingGreedy
	opt := engine.GenerateOptions{MaxTokens: maxTokens, Sampling: p, IgnoreEOG: ignoreEOS, OnToken: func(id int32) {
		r.ids = append(r.ids, id)
	}, OnPiece: func(s string) bool {
		r.text += s
		r.pieces = append(r.pieces, s)
		return true
	}}
	var err error
	if r.stats, err = m.NewSession(testCtx).Generate(context.Background(), prompt, opt); err != nil {
		t.Fatal(err)
	}
	return r
}

// chatTokens renders one user message as `flowchat run --chat` does.
func chatTokens(t *testing.T, m *engine.Model, user string) []int32 {
	t.Helper()
	text, err := m.RenderChat([]chat.Message{{Role: "user", Content: user}}, true)
	if err != nil {
		t.Fatal(err)
	}
	bos := m.Tok.Token(m.Tok.BOS())
	addBOS := !(bos != "" && len(text) >= len(bos) && text[:len(bos)] == bos)
	return m.Tok.Encode(text, addBOS, true)
}

func userMsg(text string) []openai.ChatCompletionMessageParamUnion {
	return []openai.ChatCompletionMessageParamUnion{openai.UserMessage(text)}
}
