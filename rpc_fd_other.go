//go:build !unix

package ggml

import (
	"errors"
	"net"
)

// rpcFD is a descriptor for the C core and what keeps it fed.
type rpcFD struct {
	fd   int
	done func()
}

// descriptorOf: the RPC core needs Unix descriptors (sockets and socket pairs).
func descriptorOf(conn net.Conn) (rpcFD, error) {
	conn.Close()
	return rpcFD{}, errors.New("RPC needs a Unix-like system (descriptors and socket pairs)")
}
