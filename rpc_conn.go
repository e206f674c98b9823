package ggml

// Connection setup of the RPC backend and server, in Go: dialing with a timeout, the optional
// TLS and shared-token extension, and handing the C core a plain descriptor (the TCP socket
// itself, or one end of a socket pair that a goroutine pumps through TLS).

import (
	"crypto/subtle"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// RPCProtocolVersion is the version of ggml's RPC protocol NewRPC and ServeRPC speak.
const RPCProtocolVersion = "5.1.0"

// RPCOption configures NewRPC.
type RPCOption func(*rpcConfig)

type rpcConfig struct {
	device         int
	timeout        time.Duration
	computeTimeout time.Duration
	dialTimeout    time.Duration
	tls            *tls.Config
	token          string
	upstreamExact  bool
}

func defaultRPCConfig() rpcConfig {
	return rpcConfig{timeout: 30 * time.Second, computeTimeout: 10 * time.Minute, dialTimeout: 10 * time.Second}
}

// WithRPCDevice selects the server's device (default 0).
func WithRPCDevice(i int) RPCOption { return func(c *rpcConfig) { c.device = i } }

// WithRPCTimeout bounds every request and its reply, and the connection setup (default 30 s).
func WithRPCTimeout(d time.Duration) RPCOption {
	return func(c *rpcConfig) { c.timeout, c.dialTimeout = d, d }
}

// WithRPCComputeTimeout bounds a graph computation (default 10 minutes).
func WithRPCComputeTimeout(d time.Duration) RPCOption {
	return func(c *rpcConfig) { c.computeTimeout = d }
}

// WithRPCTLS encrypts the connection with TLS (our extension: the server must be ServeRPC or
// cmd/ggml-rpc-server with -tls-cert; ggml's own rpc-server speaks plain TCP only).
func WithRPCTLS(cfg *tls.Config) RPCOption { return func(c *rpcConfig) { c.tls = cfg } }

// WithRPCToken presents a shared secret to the server before the protocol starts (our
// extension, for servers started with a token; use it with WithRPCTLS, or the token travels in
// the clear).
func WithRPCToken(token string) RPCOption { return func(c *rpcConfig) { c.token = token } }

// WithRPCUpstreamExact makes the backend send exactly what ggml's own client sends for the same
// calls: no round trip confirming each graph computation (a failed computation then shows at
// the next call instead of in Compute) and every graph in full (no GRAPH_RECOMPUTE of an
// unchanged graph). For comparing transcripts.
func WithRPCUpstreamExact() RPCOption { return func(c *rpcConfig) { c.upstreamExact = true } }

// tokenMagic opens the token exchange of our extension: magic, u32 length, token; the server
// answers one byte, 1 when accepted (it closes the connection otherwise).
var tokenMagic = []byte("GGMLGO-RPC-TOKEN")

const maxTokenLen = 4096

func sendToken(conn net.Conn, token string, deadline time.Time) error {
	if len(token) > maxTokenLen {
		return fmt.Errorf("token longer than %d bytes", maxTokenLen)
	}
	conn.SetDeadline(deadline)
	defer conn.SetDeadline(time.Time{})
	msg := append(append([]byte{}, tokenMagic...), 0, 0, 0, 0)
	binary.LittleEndian.PutUint32(msg[len(tokenMagic):], uint32(len(token)))
	msg = append(msg, token...)
	if _, err := conn.Write(msg); err != nil {
		return err
	}
	var ok [1]byte
	if _, err := io.ReadFull(conn, ok[:]); err != nil || ok[0] != 1 {
		return errors.New("the server refused the token")
	}
	return nil
}

func checkToken(conn net.Conn, token string, deadline time.Time) error {
	conn.SetDeadline(deadline)
	defer conn.SetDeadline(time.Time{})
	hdr := make([]byte, len(tokenMagic)+4)
	if _, err := io.ReadFull(conn, hdr); err != nil {
		return fmt.Errorf("reading the token: %w", err)
	}
	if string(hdr[:len(tokenMagic)]) != string(tokenMagic) {
		return errors.New("the client sent no token")
	}
	n := binary.LittleEndian.Uint32(hdr[len(tokenMagic):])
	if n > maxTokenLen {
		return errors.New("token too long")
	}
	got := make([]byte, n)
	if _, err := io.ReadFull(conn, got); err != nil {
		return fmt.Errorf("reading the token: %w", err)
	}
	if subtle.ConstantTimeCompare(got, []byte(token)) != 1 {
		return errors.New("wrong token")
	}
	_, err := conn.Write([]byte{1})
	return err
}

// dialRPC connects to addr as cfg says, through TLS and the token exchange when asked.
func dialRPC(addr string, cfg *rpcConfig) (net.Conn, error) {
	d := net.Dialer{Timeout: cfg.dialTimeout}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	if cfg.tls != nil {
		tc := tls.Client(conn, cfg.tls)
		tc.SetDeadline(time.Now().Add(cfg.dialTimeout))
		if err := tc.Handshake(); err != nil {
			conn.Close()
			return nil, fmt.Errorf("TLS handshake: %w", err)
		}
		tc.SetDeadline(time.Time{})
		conn = tc
	}
	if cfg.token != "" {
		if err := sendToken(conn, cfg.token, time.Now().Add(cfg.dialTimeout)); err != nil {
			conn.Close()
			return nil, err
		}
	}
	return conn, nil
}

// RPCServerOption configures an RPCServer.
type RPCServerOption func(*rpcServerConfig)

type rpcServerConfig struct {
	cacheDir         string
	freeMem, total   uint64
	alignment        uint64
	maxAlloc         uint64
	maxMessage       uint64
	maxGraphNodes    uint32
	idleTimeout      time.Duration
	ioTimeout        time.Duration
	handshakeTimeout time.Duration
	tls              *tls.Config
	token            string
	logf             func(format string, args ...any)
}

func defaultRPCServerConfig() rpcServerConfig {
	return rpcServerConfig{ioTimeout: time.Minute, handshakeTimeout: 10 * time.Second}
}

// WithRPCServerCache keeps tensors larger than 10 MiB in dir, by hash, so that clients sending
// them again send only the hash (ggml's -c/--cache).
func WithRPCServerCache(dir string) RPCServerOption {
	return func(c *rpcServerConfig) { c.cacheDir = dir }
}

// WithRPCServerMemory sets the free and total memory reported to clients (default: the
// machine's RAM).
func WithRPCServerMemory(free, total uint64) RPCServerOption {
	return func(c *rpcServerConfig) { c.freeMem, c.total = free, total }
}

// WithRPCServerMaxAlloc bounds the bytes all buffers of one connection may hold (default: no
// bound); an allocation beyond it fails as a normal reply (the client sees out of memory).
func WithRPCServerMaxAlloc(n uint64) RPCServerOption {
	return func(c *rpcServerConfig) { c.maxAlloc = n }
}

// WithRPCServerAlignment overrides the tensor alignment reported to clients (default: the
// backend's). It must be a power of two of at least 16 the backend's kernels accept.
func WithRPCServerAlignment(n uint64) RPCServerOption {
	return func(c *rpcServerConfig) { c.alignment = n }
}

// WithRPCServerLimits bounds a graph message's bytes and node count (defaults 1 GiB, 1<<20).
func WithRPCServerLimits(maxMessage uint64, maxGraphNodes uint32) RPCServerOption {
	return func(c *rpcServerConfig) { c.maxMessage, c.maxGraphNodes = maxMessage, maxGraphNodes }
}

// WithRPCServerTimeouts sets how long a client may stay silent between requests (default:
// forever) and how long one request or reply may take to travel (default 1 minute).
func WithRPCServerTimeouts(idle, io time.Duration) RPCServerOption {
	return func(c *rpcServerConfig) { c.idleTimeout, c.ioTimeout = idle, io }
}

// WithRPCServerTLS serves TLS only (our extension; clients use WithRPCTLS).
func WithRPCServerTLS(cfg *tls.Config) RPCServerOption {
	return func(c *rpcServerConfig) { c.tls = cfg }
}

// WithRPCServerToken accepts only clients presenting this shared secret (our extension;
// clients use WithRPCToken).
func WithRPCServerToken(token string) RPCServerOption {
	return func(c *rpcServerConfig) { c.token = token }
}

// WithRPCServerLog receives one line per connection event (accepted, closed and why).
func WithRPCServerLog(logf func(format string, args ...any)) RPCServerOption {
	return func(c *rpcServerConfig) { c.logf = logf }
}
