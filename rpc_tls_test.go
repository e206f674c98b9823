//go:build cgo

package ggml_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/ggml-go/ggml"
)

// selfSigned returns a certificate for 127.0.0.1 and a pool trusting it.
func selfSigned(t *testing.T) (tls.Certificate, *x509.CertPool) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "ggml-rpc-test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pool
}

// TestRPCTLSToken: our extension. A TLS server with a token serves a client with both; a
// wrong token, no token or no TLS is refused with an error, not a hang.
func TestRPCTLSToken(t *testing.T) {
	checkLive(t)
	cert, pool := selfSigned(t)
	addr := startRPCServer(t, ggml.WithRPCServerTLS(&tls.Config{Certificates: []tls.Certificate{cert}}),
		ggml.WithRPCServerToken("s3cret"))
	tlsCfg := &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}

	b, err := ggml.NewRPC(addr, ggml.WithRPCTLS(tlsCfg), ggml.WithRPCToken("s3cret"), ggml.WithRPCTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	got := addOn(t, b)
	cpu, err := ggml.NewCPU(ggml.WithThreads(1))
	if err != nil {
		t.Fatal(err)
	}
	want := addOn(t, cpu)
	cpu.Close()
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("element %d: %g over TLS, %g on the CPU", i, got[i], want[i])
		}
	}
	b.Close()

	for name, opts := range map[string][]ggml.RPCOption{
		"wrong token": {ggml.WithRPCTLS(tlsCfg), ggml.WithRPCToken("guess")},
		"no token":    {ggml.WithRPCTLS(tlsCfg)},
		"no TLS":      {ggml.WithRPCToken("s3cret")},
	} {
		start := time.Now()
		b, err := ggml.NewRPC(addr, append(opts, ggml.WithRPCTimeout(time.Second))...)
		if err == nil {
			b.Close()
			t.Errorf("%s: connected", name)
			continue
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%s: refused after %v", name, d)
		}
		t.Logf("%s: %v", name, err)
	}
}

// addOn computes a + b for two fixed 8×4 tensors on be and returns the sum.
func addOn(t *testing.T, be *ggml.Backend) []float32 {
	t.Helper()
	ctx, err := ggml.NewContext(ggml.Params{NoAlloc: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ctx.Close()
	a, b := ctx.NewTensor2D(ggml.TypeF32, 8, 4), ctx.NewTensor2D(ggml.TypeF32, 8, 4)
	sum := ctx.Add(a, b)
	g := ctx.NewGraph().BuildForwardExpand(sum)
	buf, err := ggml.AllocContextTensors(ctx, be)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Close()
	for k, in := range []*ggml.Tensor{a, b} {
		v := make([]float32, in.NumElements())
		for i := range v {
			v[i] = float32(math.Sin(float64(i*(k+3)) * 0.37))
		}
		if err := in.SetFloat32(v); err != nil {
			t.Fatal(err)
		}
	}
	if err := be.Compute(g); err != nil {
		t.Fatal(err)
	}
	out, err := sum.Float32()
	if err != nil {
		t.Fatal(err)
	}
	return out
}
