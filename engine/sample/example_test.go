package sample

import (
	"fmt"
	"math"
)

func ExampleSampler_Explain() {
	p := DefaultParams()
	p.Seed, p.TopK = 1, 3
	s, _ := New(p, 5)
	logits := make([]float32, 5)
	for i, pr := range []float64{0.4, 0.3, 0.2, 0.06, 0.04} {
		logits[i] = float32(math.Log(pr))
	}
	e := s.Explain(logits)
	for _, st := range e.Stages {
		fmt.Printf("%s: %d -> %d\n", st.Stage, st.In, st.Out)
	}
	for _, c := range e.Stages[0].Candidates {
		fmt.Printf("  token %d p %.4f -> %.4f kept %v\n", c.Token, c.PBefore, c.P, c.Kept)
	}
	fmt.Println(e.Chosen == s.Sample(logits), e.RemovedBy(4))
	// Output:
	// top_k: 5 -> 3
	// top_p: 3 -> 3
	// min_p: 3 -> 3
	// temperature: 3 -> 3
	// dist: 3 -> 3
	//   token 0 p 0.4000 -> 0.4444 kept true
	//   token 1 p 0.3000 -> 0.3333 kept true
	//   token 2 p 0.2000 -> 0.2222 kept true
	//   token 3 p 0.0600 -> 0.0000 kept false
	//   token 4 p 0.0400 -> 0.0000 kept false
	// true top_k
}
