package ledger

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"io"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestPreferOnOneConnection: a URL of sslmode prefer (the default) asks
// the server for TLS on the connection it then uses: a server that
// answers 'S' gets a TLS handshake there, one that answers 'N' the
// startup message in the clear there, and neither a second connection.
func TestPreferOnOneConnection(t *testing.T) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), DNSNames: []string{"localhost"}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert := tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	for _, answer := range []byte{'S', 'N'} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan string, 8)
		go func() {
			defer close(got)
			for range 3 {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				var req [8]byte
				_, err = io.ReadFull(c, req[:])
				if err == nil && binary.BigEndian.Uint32(req[4:]) == 80877102 {
					// A CancelRequest pgx may send when the failed
					// attempt is torn down: not a connection to use.
					c.Close()
					continue
				}
				got <- "connection"
				if err != nil || binary.BigEndian.Uint32(req[4:]) != 80877103 {
					got <- "no SSLRequest"
					c.Close()
					continue
				}
				c.Write([]byte{answer})
				var conn net.Conn = c
				if answer == 'S' {
					tc := tls.Server(c, &tls.Config{Certificates: []tls.Certificate{cert}})
					if err := tc.Handshake(); err != nil {
						got <- "handshake failed: " + err.Error()
						c.Close()
						continue
					}
					got <- "TLS"
					conn = tc
				}
				var head [8]byte
				if _, err := io.ReadFull(conn, head[:]); err == nil && binary.BigEndian.Uint32(head[4:]) == 196608 {
					got <- "startup"
				}
				conn.Close()
			}
		}()
		p, err := parsePG("postgres://alice:pw@" + ln.Addr().String() + "/budgets?ledger=team&connect_timeout=2")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := pgx.ConnectConfig(ctx, p.cfg); err == nil {
			t.Fatalf("answer %q: a connection to a server that is none", answer)
		}
		ln.Close()
		var said []string
		for s := range got {
			said = append(said, s)
		}
		want := []string{"connection", "startup"}
		if answer == 'S' {
			want = []string{"connection", "TLS", "startup"}
		}
		if len(said) != len(want) {
			t.Errorf("answer %q: the server saw %q, want %q", answer, said, want)
			continue
		}
		for i := range want {
			if said[i] != want[i] {
				t.Errorf("answer %q: the server saw %q, want %q", answer, said, want)
				break
			}
		}
	}
}
