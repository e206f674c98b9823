//go:build cgo

package train

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Checkpoint file names inside a checkpoint directory.
const (
	CheckpointModel     = "checkpoint.gguf" // the model, F32, loadable by llama.Load
	CheckpointOptimizer = "optimizer.bin"   // the Adam state (ggml.Optimizer.MarshalBinary)
	CheckpointState     = "state.json"      // step, options, loss history
)

// checkpointState is the contents of state.json.
type checkpointState struct {
	Step    int         `json:"step"`
	Options Options     `json:"options"`
	Losses  []float32   `json:"losses"`
	Evals   []EvalPoint `json:"evals,omitempty"`
}

// AddEval records a held-out loss at the current step (saved with the checkpoints and drawn
// on the loss curve).
func (t *Trainer) AddEval(loss float64) {
	t.evals = append(t.evals, EvalPoint{Step: t.step, Loss: loss})
}

// Evals returns the held-out losses recorded with AddEval.
func (t *Trainer) Evals() []EvalPoint { return append([]EvalPoint(nil), t.evals...) }

// SaveCheckpoint writes the model, the optimizer state and the training state into dir
// (created if needed), each file first under a temporary name and then renamed, the state
// last, so that an interrupted save leaves the previous checkpoint loadable.
func (t *Trainer) SaveCheckpoint(dir string) error {
	if err := t.checkOpen("Trainer.SaveCheckpoint"); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("train: %w", err)
	}
	optState, err := t.optim.MarshalBinary()
	if err != nil {
		return fmt.Errorf("train: saving the optimizer: %w", err)
	}
	st := checkpointState{Step: t.step, Options: t.opt, Losses: t.losses, Evals: t.evals}
	st.Options.Progress = nil
	js, err := json.Marshal(st)
	if err != nil {
		return err
	}
	write := func(name string, data []byte) error {
		tmp := filepath.Join(dir, "."+name+".tmp")
		if data == nil {
			if err := t.m.Save(tmp, SaveOptions{Name: "ggml-go-train checkpoint"}); err != nil {
				return err
			}
		} else if err := os.WriteFile(tmp, data, 0o644); err != nil {
			return err
		}
		return os.Rename(tmp, filepath.Join(dir, name))
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{CheckpointModel, nil}, {CheckpointOptimizer, optState}, {CheckpointState, js}} {
		if err := write(f.name, f.data); err != nil {
			return fmt.Errorf("train: writing the checkpoint: %w", err)
		}
	}
	return nil
}

// HasCheckpoint reports whether dir holds a checkpoint.
func HasCheckpoint(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, CheckpointState))
	return err == nil
}

// Resume loads the checkpoint in dir and returns a Trainer that continues it exactly where
// it stopped: same weights, optimizer state, step, options and loss history. data must be
// the token stream of the original run. progress, when set, replaces the options' callback.
// The Trainer owns the loaded model (Close closes it).
func Resume(dir string, data []int32, progress func(Progress)) (*Trainer, error) {
	js, err := os.ReadFile(filepath.Join(dir, CheckpointState))
	if err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	var st checkpointState
	if err := json.Unmarshal(js, &st); err != nil {
		return nil, fmt.Errorf("train: %s: %w", CheckpointState, err)
	}
	if st.Step != len(st.Losses) {
		return nil, fmt.Errorf("train: %s is inconsistent (step %d, %d losses)", CheckpointState, st.Step, len(st.Losses))
	}
	optState, err := os.ReadFile(filepath.Join(dir, CheckpointOptimizer))
	if err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	m, err := LoadModel(filepath.Join(dir, CheckpointModel))
	if err != nil {
		return nil, err
	}
	st.Options.Progress = progress
	t, err := NewTrainer(m, data, st.Options)
	if err != nil {
		m.Close()
		return nil, err
	}
	t.ownModel = true
	if err := t.optim.UnmarshalBinary(optState); err != nil {
		t.Close()
		return nil, fmt.Errorf("train: %s: %w", CheckpointOptimizer, err)
	}
	if t.optim.Iter() != st.Step {
		t.Close()
		return nil, errors.New("train: the optimizer state and the training state are from different steps")
	}
	t.step, t.losses, t.evals = st.Step, st.Losses, st.Evals
	return t, nil
}
