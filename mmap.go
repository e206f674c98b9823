//go:build cgo

package ggml

/*
#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

// maps a whole file copy-on-write (the file itself is never written); NULL and *err = errno on failure (EINVAL for an empty file)
static void * ggo_map_file(const char * path, size_t * size, int * err) {
    *err = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        *err = errno;
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        *err = errno;
        close(fd);
        return NULL;
    }
    if (st.st_size <= 0) {
        *err = EINVAL;
        close(fd);
        return NULL;
    }
    void * p = mmap(NULL, (size_t) st.st_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    int e = errno;
    close(fd);
    if (p == MAP_FAILED) {
        *err = e;
        return NULL;
    }
    *size = (size_t) st.st_size;
    return p;
}
// an anonymous read-write mapping of size bytes (at least one page)
static void * ggo_map_anon(size_t size) {
    void * p = mmap(NULL, size > 0 ? size : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}
static void ggo_unmap(void * p, size_t size) {
    munmap(p, size > 0 ? size : 1);
}
static const char * ggo_strerror(int e) { return strerror(e); }
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// MmapBufferType is a host buffer type whose memory comes from memory mappings: MapFile maps a
// file read-only, the zero-copy way to use model weights stored in a file (place each tensor
// at its file offset with Buffer.PlaceTensor); buffers allocated from the type (by allocators,
// AllocContextTensorsFromBufferType, a Scheduler) are anonymous read-write mappings. CPU
// backends compute on the memory directly. Pass the embedded *BufferType wherever a buffer
// type is expected.
type MmapBufferType struct {
	*BufferType
}

// mmapImpl is the BufferTypeImpl of MmapBufferType.
type mmapImpl struct{}

func (mmapImpl) Name() string                    { return "Mmap" }
func (mmapImpl) Alignment() uint64               { return 64 }
func (mmapImpl) AllocSize(t *Tensor) uint64      { return t.Nbytes() }
func (mmapImpl) SupportsBackend(b *Backend) bool { return b.IsCPU() }
func (mmapImpl) IsHost() bool                    { return true }

func (mmapImpl) Alloc(size uint64) (BufferImpl, error) {
	p := C.ggo_map_anon(C.size_t(size))
	if p == nil {
		return nil, fmt.Errorf("cannot map %d bytes", size)
	}
	return &HostBuffer{base: p, size: size, free: func(p unsafe.Pointer, n uint64) { C.ggo_unmap(p, C.size_t(n)) }}, nil
}

// NewMmapBufferType creates a memory-mapping buffer type. Close it when done (its buffers stay
// valid until they are closed).
func NewMmapBufferType() (*MmapBufferType, error) {
	bt, err := NewBufferType(mmapImpl{})
	if err != nil {
		return nil, err
	}
	return &MmapBufferType{BufferType: bt}, nil
}

// MapFile maps the whole file at path and returns it as a read-only buffer of the type, with
// usage BufferUsageWeights. Tensors placed in it (Buffer.PlaceTensor at their file offsets)
// read the file's bytes without copying. Writes through the API (SetFloat32, SetBytes, Clear)
// are errors. The mapping is private: the file is never modified, and the pages stay shared
// with the page cache unless an in-place op computed on a mapped tensor writes to them (it
// then gets private copies). Close the buffer to unmap the file.
func (m *MmapBufferType) MapFile(path string) (*Buffer, error) {
	const op = "MapFile"
	st := goBufTypeOf(m.BufferType)
	if st == nil || m.ref.released() {
		return nil, &Error{Op: op, Msg: "buffer type used after Close", Err: ErrClosed}
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var size C.size_t
	var errno C.int
	p := C.ggo_map_file(cpath, &size, &errno)
	if p == nil {
		msg := C.GoString(C.ggo_strerror(errno))
		if errno == C.EINVAL {
			msg = "empty file or not mappable"
		}
		return nil, &Error{Op: op, Shapes: fmt.Sprintf("%q", path), Msg: msg}
	}
	impl := &HostBuffer{base: p, size: uint64(size), readOnly: true, free: func(p unsafe.Pointer, n uint64) { C.ggo_unmap(p, C.size_t(n)) }}
	buf, err := st.newBuffer(op, impl, uint64(size))
	if err != nil {
		return nil, err
	}
	buf.SetUsage(BufferUsageWeights)
	return buf, nil
}

// MapFile maps the whole file at path read-only as a buffer of a private memory-mapping buffer
// type (see MmapBufferType.MapFile); closing the buffer unmaps the file and releases the type.
func MapFile(path string) (*Buffer, error) {
	m, err := NewMmapBufferType()
	if err != nil {
		return nil, err
	}
	defer m.Close()
	return m.MapFile(path)
}
