//go:build asan || msan

package sampling

// instrumented is true in builds with the address or memory sanitizer, whose instrumentation
// makes values escape to the heap: allocation counts are only asserted in plain builds.
const instrumented = true
