//go:build cgo

package ggml_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
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
	c := rpcOpCases[0]
	got := computeOn(t, b, c)
	cpu, err := ggml.NewCPU(ggml.WithThreads(1))
	if err != nil {
		t.Fatal(err)
	}
	want := computeOn(t, cpu, c)
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
