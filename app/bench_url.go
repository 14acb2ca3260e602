package main

import (
	"context"
	"fmt"
	"io"

	"flowchat/app/serve"
)

// urlBenchPrompts are the prompts of bench --url, sent in turn: 8 to 40
// words, so that prefill varies a little between requests.
var urlBenchPrompts = []string{
	"Once upon a time, there was a little girl named Lily.",
	"The dog ran to the park and saw a big red ball under the tree. He wanted to play with it, but",
	"Tom and his mom went to the store to buy some apples, milk and bread for the picnic on Sunday. On the way they met an old man with a hat who asked them",
	"One day",
}

// runURLBench drives a load against a running OpenAI-compatible server
// (serve.RunLoad) and prints its figures; the same command measures
// flowchat serve and llama-server side by side.
func runURLBench(url, key string, clients, requests, maxTokens int, w io.Writer) error {
	if clients < 1 || requests < 1 || maxTokens < 1 {
		return fmt.Errorf("%w: --clients, --requests and -n must be at least 1", errUsage)
	}
	rep := serve.RunLoad(context.Background(), serve.LoadSpec{URL: url, APIKey: key, Clients: clients,
		Requests: requests, MaxTokens: maxTokens, Prompts: urlBenchPrompts})
	fmt.Fprintf(w, "%s: %d clients, %d requests, %d tokens each\n%v\n", url, clients, requests, maxTokens, rep)
	if len(rep.Errors) > 0 {
		return fmt.Errorf("%d requests failed, the first: %w", len(rep.Errors), rep.Errors[0])
	}
	return nil
}
