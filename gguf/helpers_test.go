package gguf

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/require"
)

// raw builds GGUF bytes by hand, field by field, independently of the Builder.
type raw struct{ bytes.Buffer }

func (r *raw) u8(v uint8) *raw { r.WriteByte(v); return r }
func (r *raw) u16(v uint16) *raw {
	r.Write(binary.LittleEndian.AppendUint16(nil, v))
	return r
}
func (r *raw) u32(v uint32) *raw {
	r.Write(binary.LittleEndian.AppendUint32(nil, v))
	return r
}
func (r *raw) u64(v uint64) *raw {
	r.Write(binary.LittleEndian.AppendUint64(nil, v))
	return r
}
func (r *raw) str(s string) *raw { r.u64(uint64(len(s))); r.WriteString(s); return r }
func (r *raw) header(version uint32, nTensors, nKV uint64) *raw {
	r.WriteString("GGUF")
	return r.u32(version).u64(nTensors).u64(nKV)
}
func (r *raw) pad(align int) *raw {
	for r.Len()%align != 0 {
		r.WriteByte(0)
	}
	return r
}

// tensor writes one tensor description.
func (r *raw) tensor(name string, typ TensorType, shape []uint64, off uint64) *raw {
	r.str(name).u32(uint32(len(shape)))
	for _, ne := range shape {
		r.u64(ne)
	}
	return r.u32(uint32(typ)).u64(off)
}

// parse reads b as a GGUF file.
func parse(b []byte) (*File, error) { return Read(bytes.NewReader(b), int64(len(b))) }

// mustBuild writes a Builder to memory.
func mustBuild(t testing.TB, b *Builder) []byte {
	t.Helper()
	var buf bytes.Buffer
	n, err := b.WriteTo(&buf)
	require.NoError(t, err)
	require.Equal(t, int64(buf.Len()), n)
	return buf.Bytes()
}
