package grammar

import (
	"math/rand/v2"
	"sync"
	"testing"
)

// One Grammar and one Vocab serve many sequences at once (run with -race).
func TestConcurrentConstraints(t *testing.T) {
	v, _ := fakeVocab(t, 2000, 5)
	g := JSON()
	var wg sync.WaitGroup
	results := make([]string, 4)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(42, 42)) // same seed: same text in every goroutine
			s, _ := generate(t, g, v, r, 40, 0.3)
			results[i] = s
		}()
	}
	wg.Wait()
	for i := range results {
		if results[i] != results[0] {
			t.Fatalf("goroutine %d generated %q, goroutine 0 %q", i, results[i], results[0])
		}
	}
}
