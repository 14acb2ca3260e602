package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"flowchat/app/presets"
	"flowchat/ui"
)

// TestGUIServerServesLoadedModel: the GUI's local server answers the
// OpenAI API with the model the chat window has loaded, while that model
// also answers the chat, and stops when switched off.
func TestGUIServerServesLoadedModel(t *testing.T) {
	lib, demo := demoLibrary(t)
	e, err := lib.Load(context.Background(), demo, ui.LoadOptions{Context: 256, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	s := &guiServer{port: 0}
	url, err := s.Start(e)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(url + "/models")
	if err != nil {
		t.Fatal(err)
	}
	var models struct {
		Data []struct {
			ID      string `json:"id"`
			OwnedBy string `json:"owned_by"`
		}
	}
	json.NewDecoder(resp.Body).Decode(&models)
	resp.Body.Close()
	if resp.StatusCode != 200 || len(models.Data) != 1 || models.Data[0].OwnedBy != "flowchat" {
		t.Fatalf("/v1/models: %d %+v", resp.StatusCode, models)
	}
	done := make(chan string)
	go func() { // a chat reply at the same time as the API request
		var sb strings.Builder
		e.Generate(context.Background(), ui.Request{Messages: []ui.Message{{Role: ui.RoleUser, Content: "Once upon a time"}},
			Sampling: greedyParams(8)}, func(p string) { sb.WriteString(p) })
		done <- sb.String()
	}()
	body := `{"messages":[{"role":"user","content":"Once upon a time"}],"temperature":0,"max_tokens":8}`
	resp, err = http.Post(url+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	var cc struct {
		Choices []struct{ Message struct{ Content string } }
	}
	json.NewDecoder(resp.Body).Decode(&cc)
	resp.Body.Close()
	chat := <-done
	if resp.StatusCode != 200 || len(cc.Choices) != 1 || cc.Choices[0].Message.Content == "" {
		t.Fatalf("chat completion: %d %+v", resp.StatusCode, cc)
	}
	if strings.TrimSpace(cc.Choices[0].Message.Content) != strings.TrimSpace(chat) {
		t.Errorf("API reply %q, chat window reply %q (both greedy, same prompt)", cc.Choices[0].Message.Content, chat)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := http.Get(url + "/models"); err == nil {
		t.Fatal("the server still answers after Stop")
	}
}

func greedyParams(n int) presets.Params {
	p := presets.Default()
	p.Decoding, p.MaxTokens = presets.DecodingGreedy, n
	return p
}
