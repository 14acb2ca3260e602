package serve

import (
	"context"
	"encoding/base64"
	"encoding/binary"
	"math"
	"testing"

	"github.com/openai/openai-go/v3"

	"flowchat/engine"
	"flowchat/engine/fixtures"
)

// TestSDKEmbeddings compares the server's vectors with engine.Model.Embed
// normalized here, in both encodings. The BERT fixture lives in the shared
// set only.
func TestSDKEmbeddings(t *testing.T) {
	path := fixtures.Find("arch/rand-bert-F32.gguf")
	if path == "" {
		t.Skip("arch/rand-bert-F32.gguf is not in the fixtures")
	}
	m, err := engine.Load(path, engine.LoadOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	texts := []string{"hello world", "a cat"}
	want := make([][]float32, len(texts))
	for i, s := range texts {
		e, err := m.Embed(s)
		if err != nil {
			t.Fatal(err)
		}
		want[i] = e.Pooled
	}
	ts, _ := newTestServer(t, m, 1, Config{ModelID: "bert"})
	c := client(ts, "")
	resp, err := c.Embeddings.New(context.Background(), openai.EmbeddingNewParams{Model: "bert",
		Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: texts}})
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range resp.Data {
		checkUnitAndParallel(t, d.Embedding, want[i])
	}
	b64, err := c.Embeddings.New(context.Background(), openai.EmbeddingNewParams{Model: "bert",
		Input: openai.EmbeddingNewParamsInputUnion{OfString: openai.String(texts[0])}, EncodingFormat: openai.EmbeddingNewParamsEncodingFormatBase64})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := base64.StdEncoding.DecodeString(b64.Data[0].JSON.Embedding.Raw()[1 : len(b64.Data[0].JSON.Embedding.Raw())-1])
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float64, len(raw)/4)
	for i := range got {
		got[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])))
	}
	checkUnitAndParallel(t, got, want[0])
}

// checkUnitAndParallel: got has unit length and equals want/|want|.
func checkUnitAndParallel(t *testing.T, got []float64, want []float32) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d dimensions, want %d", len(got), len(want))
	}
	var norm float64
	for _, x := range want {
		norm += float64(x) * float64(x)
	}
	norm = math.Sqrt(norm)
	for i := range got {
		if math.Abs(got[i]-float64(want[i])/norm) > 1e-6 {
			t.Fatalf("dim %d: %g, want %g", i, got[i], float64(want[i])/norm)
		}
	}
}
