//go:build cgo

package ggml

import (
	"io"
	"net"
	"os"
	"sync"
	"syscall"
)

// rpcFD is a descriptor for the C core and what keeps it fed.
type rpcFD struct {
	fd   int
	done func() // stops the pump (after the C side closed fd or will not use it)
}

// descriptorOf returns a descriptor the C core can own for conn: a duplicate of a TCP socket
// (conn is closed), or one end of a socket pair pumped to and from conn (TLS) by goroutines
// that end when either side closes.
func descriptorOf(conn net.Conn) (rpcFD, error) {
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetNoDelay(true)
		f, err := tc.File()
		conn.Close()
		if err != nil {
			return rpcFD{}, err
		}
		fd, err := syscall.Dup(int(f.Fd()))
		f.Close()
		if err != nil {
			return rpcFD{}, err
		}
		return rpcFD{fd: fd, done: func() {}}, nil
	}
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		conn.Close()
		return rpcFD{}, err
	}
	f := os.NewFile(uintptr(fds[0]), "rpc-pump")
	local, err := net.FileConn(f)
	f.Close()
	if err != nil {
		syscall.Close(fds[1])
		conn.Close()
		return rpcFD{}, err
	}
	var once sync.Once
	stop := func() {
		once.Do(func() {
			local.Close()
			conn.Close()
		})
	}
	go func() { io.Copy(conn, local); stop() }()
	go func() { io.Copy(local, conn); stop() }()
	return rpcFD{fd: fds[1], done: stop}, nil
}
