//go:build !race

package tokenizer

// raceEnabled is true under the race detector, where the exhaustive loops sample instead
// (the plain test run covers every case).
const raceEnabled = false
