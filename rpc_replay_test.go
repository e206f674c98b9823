//go:build cgo

package ggml_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/ggml-go/ggml"
)

// The replay of ../shared/rpc: every recorded connection between ggml's own client and server
// is sent to our server, whose replies must match the recorded ones. As tools/rpc_replay.py
// does, server-chosen handles and addresses are mapped, and sizes stand in for values that
// describe the machine; unlike it, float tensor data read back may differ from upstream's CPU
// kernels (our kernels round differently, and GELU and SOFT_MAX use other approximations of
// erf and exp): f32 within 1e-3 of the tensor's largest magnitude, f16 within 1 ulp. The test
// logs the largest difference in ulp.

const rpcGolden = "../shared/rpc"

const (
	cmdAllocBuffer   = 0
	cmdBufferGetBase = 3
	cmdSetTensor     = 6
	cmdGetTensor     = 8
	cmdGraphCompute  = 10
	cmdDeviceMemory  = 11
	cmdGraphRecomp   = 16
	rpcTensorSize    = 296
)

var rpcReqSize = map[byte]int{0: 12, 1: 4, 2: 4, 3: 8, 4: 8, 5: 9, 7: 312, 8: 312, 9: 592, 11: 4, 12: 296, 13: 3260, 14: 24,
	15: 0, 16: 4, 17: 313}

type goldenConn struct {
	C2SOffset int `json:"c2s_offset"`
	C2SSize   int `json:"c2s_size"`
	S2COffset int `json:"s2c_offset"`
	S2CSize   int `json:"s2c_size"`
}

type goldenSession struct {
	Connections []goldenConn `json:"connections"`
	ServerCache bool         `json:"server_cache"`
	Elided      []struct {
		FullOffset int    `json:"full_offset"`
		Length     int    `json:"length"`
		Generator  string `json:"generator"`
	} `json:"elided"`
}

// loadGolden returns a session's streams (elided payloads regenerated) and its connections.
func loadGolden(t *testing.T, dir string) (c2s, s2c []byte, sess goldenSession) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "session.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &sess); err != nil {
		t.Fatal(err)
	}
	if s2c, err = os.ReadFile(filepath.Join(dir, "s2c.bin")); err != nil {
		t.Fatal(err)
	}
	if c2s, err = os.ReadFile(filepath.Join(dir, "c2s.bin")); err == nil {
		return c2s, s2c, sess
	}
	el, err := os.ReadFile(filepath.Join(dir, "c2s.elided.bin"))
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	pos, cur := 0, 0
	for _, e := range sess.Elided {
		if e.Generator != "seq7919" {
			t.Fatalf("unknown generator %q", e.Generator)
		}
		take := e.FullOffset - cur
		out = append(out, el[pos:pos+take]...)
		pos += take
		for i := 0; i < e.Length/4; i++ {
			v := float32(int((i*7919)%10007)-5003) / 1024
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(v))
		}
		cur = e.FullOffset + e.Length
	}
	return append(out, el[pos:]...), s2c, sess
}

type replayMapper struct {
	handle       map[uint64]uint64
	rbase, lbase map[uint64]uint64
}

func (m *replayMapper) tensor(b []byte) {
	buf := binary.LittleEndian.Uint64(b[12:])
	data := binary.LittleEndian.Uint64(b[220:])
	if h, ok := m.handle[buf]; ok {
		binary.LittleEndian.PutUint64(b[12:], h)
		if rb, ok := m.rbase[buf]; ok && data != 0 {
			binary.LittleEndian.PutUint64(b[220:], m.lbase[buf]+(data-rb))
		}
	}
}

func (m *replayMapper) rewrite(cmd byte, p []byte) []byte {
	b := append([]byte(nil), p...)
	if want, ok := rpcReqSize[cmd]; ok && want != len(b) {
		return b
	}
	switch cmd {
	case 3, 4, 5:
		if h, ok := m.handle[binary.LittleEndian.Uint64(b)]; ok {
			binary.LittleEndian.PutUint64(b, h)
		}
	case 6, 7, 8, 12, 17:
		if len(b) >= rpcTensorSize {
			m.tensor(b)
		}
	case 9:
		m.tensor(b)
		m.tensor(b[rpcTensorSize:])
	case 13:
		for i := 0; i < 11; i++ {
			m.tensor(b[4+i*rpcTensorSize:])
		}
	case 10:
		if len(b) < 12 {
			return b
		}
		n := int(binary.LittleEndian.Uint32(b[4:]))
		if 8+8*n+4 > len(b) {
			return b
		}
		nt := int(binary.LittleEndian.Uint32(b[8+8*n:]))
		off := 12 + 8*n
		for i := 0; i < nt && off+(i+1)*rpcTensorSize <= len(b); i++ {
			m.tensor(b[off+i*rpcTensorSize:])
		}
	}
	return b
}

// closeToUpstream compares tensor data read back: exact, or as floats within tolerance.
func closeToUpstream(typ uint32, got, want []byte) (ulps int, ok bool) {
	if bytes.Equal(got, want) {
		return 0, true
	}
	switch typ {
	case 0: // f32
		scale := 0.0
		for i := 0; i+4 <= len(want); i += 4 {
			if v := math.Abs(float64(math.Float32frombits(binary.LittleEndian.Uint32(want[i:])))); !math.IsInf(v, 0) {
				scale = max(scale, v)
			}
		}
		for i := 0; i+4 <= len(got); i += 4 {
			a := int64(int32(binary.LittleEndian.Uint32(got[i:])))
			b := int64(int32(binary.LittleEndian.Uint32(want[i:])))
			fa := float64(math.Float32frombits(uint32(a)))
			fb := float64(math.Float32frombits(uint32(b)))
			d := a - b
			if d < 0 {
				d = -d
			}
			if math.Abs(fa-fb) > 1e-3*max(scale, 1e-3) && fa != fb {
				return int(d), false
			}
			ulps = max(ulps, int(d))
		}
		return ulps, true
	case 1: // f16
		for i := 0; i+2 <= len(got); i += 2 {
			d := int(int16(binary.LittleEndian.Uint16(got[i:]))) - int(int16(binary.LittleEndian.Uint16(want[i:])))
			if d < -1 || d > 1 {
				return d, false
			}
			ulps = max(ulps, 1)
		}
		return ulps, true
	}
	return -1, false
}

func readFull(c net.Conn, n int) ([]byte, error) {
	b := make([]byte, n)
	_, err := io.ReadFull(c, b)
	return b, err
}

// replayConn replays one recorded connection against addr; it returns the problems found and
// the largest float difference (ulps) accepted.
func replayConn(t *testing.T, addr string, c2s, s2c []byte) (problems []string, maxULP int) {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(60 * time.Second))
	m := &replayMapper{handle: map[uint64]uint64{}, rbase: map[uint64]uint64{}, lbase: map[uint64]uint64{}}
	rp := 0
	for off := 0; off+9 <= len(c2s); {
		cmd := c2s[off]
		size := int(binary.LittleEndian.Uint64(c2s[off+1:]))
		if off+9+size > len(c2s) {
			break
		}
		p := c2s[off+9 : off+9+size]
		off += 9 + size
		req := append([]byte{cmd}, binary.LittleEndian.AppendUint64(nil, uint64(size))...)
		req = append(req, m.rewrite(cmd, p)...)
		_, werr := conn.Write(req)
		if cmd == cmdSetTensor || cmd == cmdGraphCompute || cmd == cmdGraphRecomp {
			if werr != nil && rp+8 <= len(s2c) {
				return append(problems, fmt.Sprintf("cmd %d: send failed: %v", cmd, werr)), maxULP
			}
			continue
		}
		expectClose := rp+8 > len(s2c) || cmd >= 18
		if werr != nil { // the server closed the connection before this request
			if !expectClose {
				problems = append(problems, fmt.Sprintf("cmd %d: send failed: %v", cmd, werr))
			}
			return problems, maxULP
		}
		hdr, err := readFull(conn, 8)
		if err != nil {
			if !expectClose {
				problems = append(problems, fmt.Sprintf("cmd %d: server closed the connection instead of replying", cmd))
			}
			return problems, maxULP
		}
		if expectClose {
			return append(problems, fmt.Sprintf("cmd %d: server replied, the recorded one closed the connection", cmd)), maxULP
		}
		gsize := int(binary.LittleEndian.Uint64(s2c[rp:]))
		gold := s2c[rp+8 : rp+8+gsize]
		rp += 8 + gsize
		lsize := int(binary.LittleEndian.Uint64(hdr))
		if lsize != gsize {
			return append(problems, fmt.Sprintf("cmd %d: reply of %d bytes, recorded %d", cmd, lsize, gsize)), maxULP
		}
		body, err := readFull(conn, lsize)
		if err != nil {
			return append(problems, fmt.Sprintf("cmd %d: reply truncated", cmd)), maxULP
		}
		switch cmd {
		case cmdAllocBuffer:
			if (binary.LittleEndian.Uint64(gold) == 0) != (binary.LittleEndian.Uint64(body) == 0) ||
				!bytes.Equal(gold[8:], body[8:]) {
				problems = append(problems, fmt.Sprintf("ALLOC_BUFFER: live %x, recorded %x", body, gold))
			}
			if h := binary.LittleEndian.Uint64(gold); h != 0 {
				m.handle[h] = binary.LittleEndian.Uint64(body)
			}
		case cmdBufferGetBase:
			h := binary.LittleEndian.Uint64(p)
			m.rbase[h] = binary.LittleEndian.Uint64(gold)
			m.lbase[h] = binary.LittleEndian.Uint64(body)
		case cmdDeviceMemory:
		case cmdGetTensor:
			u, ok := closeToUpstream(binary.LittleEndian.Uint32(p[8:]), body, gold)
			if !ok {
				problems = append(problems, fmt.Sprintf("GET_TENSOR of '%s': data differs beyond tolerance",
					bytes.TrimRight(p[228:292], "\x00")))
			}
			maxULP = max(maxULP, u)
		default:
			if !bytes.Equal(body, gold) {
				problems = append(problems, fmt.Sprintf("cmd %d: reply %x, recorded %x", cmd, body, gold))
			}
		}
	}
	return problems, maxULP
}

// TestRPCServerReplay replays all 32 recorded sessions (the crash and error ones included)
// against our server, and checks after each that it still serves.
func TestRPCServerReplay(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join(rpcGolden, "sessions", "*", "session.json"))
	if len(dirs) == 0 {
		t.Skip("no RPC recordings in " + rpcGolden)
	}
	checkLive(t)
	// the recordings were made against a server reporting alignment 32
	plain := startRPCServer(t, ggml.WithRPCServerAlignment(32))
	cached := startRPCServer(t, ggml.WithRPCServerAlignment(32), ggml.WithRPCServerCache(t.TempDir()))
	for _, sj := range dirs {
		dir := filepath.Dir(sj)
		name := filepath.Base(dir)
		t.Run(name, func(t *testing.T) {
			c2s, s2c, sess := loadGolden(t, dir)
			addr := plain
			if sess.ServerCache {
				addr = cached
			}
			worst := 0
			for i, c := range sess.Connections {
				probs, u := replayConn(t, addr, c2s[c.C2SOffset:c.C2SOffset+c.C2SSize], s2c[c.S2COffset:c.S2COffset+c.S2CSize])
				for _, p := range probs {
					t.Errorf("conn%d: %s", i, p)
				}
				worst = max(worst, u)
			}
			if worst > 0 {
				t.Logf("float data within %d ulp of upstream's", worst)
			}
		})
	}
	// still serving after every error session
	b, err := ggml.NewRPC(plain, ggml.WithRPCTimeout(5*time.Second))
	if err != nil {
		t.Fatalf("server no longer serving: %v", err)
	}
	b.Close()
}
