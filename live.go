package ggml

import (
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// live counts the native objects (C contexts, backends, buffers, allocators, ...) currently
// owned by Go handles, per kind.
var live struct {
	mu    sync.Mutex
	kinds map[string]*atomic.Int64
	total atomic.Int64
}

func liveCounter(kind string) *atomic.Int64 {
	live.mu.Lock()
	defer live.mu.Unlock()
	if live.kinds == nil {
		live.kinds = map[string]*atomic.Int64{}
	}
	c := live.kinds[kind]
	if c == nil {
		c = new(atomic.Int64)
		live.kinds[kind] = c
	}
	return c
}

// liveInc records one more live native object of the given kind.
func liveInc(kind string) {
	liveCounter(kind).Add(1)
	live.total.Add(1)
}

// liveDec records that a native object of the given kind was freed.
func liveDec(kind string) {
	liveCounter(kind).Add(-1)
	live.total.Add(-1)
}

// LiveObjects returns the number of native objects (contexts, backends, buffers, allocators,
// schedulers, ...) currently owned by Go handles that have been neither closed nor collected.
// Tests record it at the start and assert that it returns to that value.
func LiveObjects() int {
	return int(live.total.Load())
}

// LiveObjectsByKind returns the live native objects per kind ("context", "backend", "buffer",
// ...); kinds whose count is zero are omitted.
func LiveObjectsByKind() map[string]int {
	live.mu.Lock()
	defer live.mu.Unlock()
	out := map[string]int{}
	for k, c := range live.kinds {
		if n := c.Load(); n != 0 {
			out[k] = int(n)
		}
	}
	return out
}

// liveSummary formats LiveObjectsByKind for messages, e.g. "buffer=1 context=2".
func liveSummary() string {
	m := LiveObjectsByKind()
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	return strings.Join(parts, " ")
}

// nativeRef is the ownership record of one native object. The Go handle points to it and so
// does the runtime.AddCleanup safety net; it does not point back to the handle, so the handle
// can be collected. release frees the object exactly once, whichever comes first: Close or the
// cleanup.
type nativeRef struct {
	kind string
	free func()
	done atomic.Bool
}

// newNativeRef counts a new live object of the given kind owned by owner and registers free to
// run when owner becomes unreachable without having been closed. free must not reference owner.
func newNativeRef[T any](owner *T, kind string, free func()) *nativeRef {
	r := &nativeRef{kind: kind, free: free}
	liveInc(kind)
	runtime.AddCleanup(owner, func(r *nativeRef) { r.release() }, r)
	return r
}

// release frees the native object unless that already happened; it reports whether it did.
func (r *nativeRef) release() bool {
	if r == nil || !r.done.CompareAndSwap(false, true) {
		return false
	}
	if r.free != nil {
		r.free()
	}
	liveDec(r.kind)
	return true
}

// released reports whether the object was freed (true for a nil ref).
func (r *nativeRef) released() bool {
	return r == nil || r.done.Load()
}
