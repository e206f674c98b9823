package server

import (
	"context"
	"errors"
	"sync/atomic"
)

// errQueueFull is returned by limiter.acquire when every slot is busy and the queue is full.
var errQueueFull = errors.New("queue full")

// limiter admits at most slots requests to the model at once and lets at most queue more
// wait for a slot; the others are refused at once.
type limiter struct {
	slots   chan struct{}
	queue   int64
	waiting atomic.Int64
	active  atomic.Int64
}

func newLimiter(slots, queue int) *limiter {
	return &limiter{slots: make(chan struct{}, slots), queue: int64(queue)}
}

// acquire takes a slot, waiting in the queue if there is room; it returns errQueueFull when
// there is none, or ctx.Err(). Call release after a nil error.
func (l *limiter) acquire(ctx context.Context) error {
	select {
	case l.slots <- struct{}{}:
		l.active.Add(1)
		return nil
	default:
	}
	if l.waiting.Add(1) > l.queue {
		l.waiting.Add(-1)
		return errQueueFull
	}
	defer l.waiting.Add(-1)
	select {
	case l.slots <- struct{}{}:
		l.active.Add(1)
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (l *limiter) release() {
	l.active.Add(-1)
	<-l.slots
}
