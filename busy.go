package ggml

import "sync/atomic"

// inUse is the atomic in-use flag of an object that must not be entered by two goroutines at
// once (see ErrBusy). enter sets it or reports that another goroutine holds it; leave clears
// it. It does not queue or wait: the second caller gets an error at once.
type inUse struct {
	flag atomic.Bool
}

// enter marks the object in use by op; it returns a *Error wrapping ErrBusy when another
// goroutine is inside one of the object's entry points. what names the object ("scheduler").
func (u *inUse) enter(op, what string) error {
	if u.flag.CompareAndSwap(false, true) {
		return nil
	}
	return &Error{Op: op, Err: ErrBusy,
		Msg: "the " + what + " is in use by another goroutine: use one " + what +
			" per goroutine, or serialise the calls with a sync.Mutex"}
}

// mustEnter is enter for entry points without an error result: it panics with the *Error.
func (u *inUse) mustEnter(op, what string) {
	if err := u.enter(op, what); err != nil {
		panic(err)
	}
}

// leave clears the flag set by enter.
func (u *inUse) leave() {
	u.flag.Store(false)
}
