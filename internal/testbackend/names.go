package testbackend

// Name is the backend's name (and its registry name after Register).
const Name = "Test"

// Stats are the process-wide counters of the Test backend (struct testbackend_stats).
type Stats struct {
	Sets, Gets, Copies                int64 // set/get/cpy_tensor calls on Test buffers
	SetsAsync, GetsAsync, CopiesAsync int64 // the asynchronous variants
	GraphComputes                     int64 // graph_compute calls
	Nodes                             int64 // nodes computed (views excluded)
	Buffers                           int64 // Test buffers alive
	BufferResets                      int64 // reset calls on Test buffers
}
