package logservice_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/logservice"
	"github.com/writ-ledger/writ/schemas"
	"github.com/writ-ledger/writ/sign"
)

// A control plane written in Go submits the records it signed to the
// writer service and gets them back proven: Append returns only once
// the answer verified under the log's key (VKey, `writ ledger vkey`).
func ExampleClient_Append() {
	url, vkey, record, stop := exampleService()
	defer stop()

	c := &logservice.Client{URL: url, VKey: vkey}
	res, err := c.Append(context.Background(), [][]byte{record})
	if err != nil {
		fmt.Println("not appended:", err) // a *logservice.Refusal carries the rule
		return
	}
	for _, e := range res.Entries {
		fmt.Printf("entry %d: %s, in the signed tree of %d entries\n", e.Index, e.Kind, res.Checkpoint.Size)
	}
	// Output: entry 2: instruction, in the signed tree of 3 entries
}

// exampleService serves a new authority log (a root, a delegation to an
// operator) on loopback, and returns its URL, its verifier key, an
// instruction the operator signed, and what stops it.
func exampleService() (string, *formats.LogKey, []byte, func()) {
	key := func(n byte) *sign.PrivateKey {
		s, _ := signature.LoadED25519Signer(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{n}, 32)))
		k, _ := sign.NewPrivateKey(s)
		return k
	}
	seal := func(r schemas.Record, k *sign.PrivateKey) []byte {
		payload, _ := schemas.Encode(r)
		env, _ := sign.Sign(r.Kind(), payload, k)
		return env
	}
	root, logKey, op := key(1), key(2), key(10)
	now := time.Now()
	dir, _ := os.MkdirTemp("", "writ-example-")
	l, err := ledger.CreateWithHistory(filepath.Join(dir, "authority"), "example.com/authority", logKey, time.Now)
	if err != nil {
		panic(err)
	}
	_, err = l.Append([][]byte{
		seal(&schemas.Root{V: 1, Version: 1, Keys: [][]byte{root.Public().Raw()}, Threshold: 1,
			IssuedAt: now.Add(-time.Hour).Unix(), Expires: now.AddDate(1, 0, 0).Unix()}, root),
		seal(&schemas.Delegation{V: 1, Key: op.Public().Raw(), Actions: []schemas.Action{"instruct"}, Streams: []string{"demo"},
			Machines: []string{"runner-*"}, IssuedAt: now.Add(-time.Hour).Unix(), NotBefore: now.Add(-time.Hour).Unix(),
			NotAfter: now.Add(time.Hour).Unix()}, root)})
	if err != nil {
		panic(err)
	}
	svc, err := logservice.New(l, logservice.Options{})
	if err != nil {
		panic(err)
	}
	if _, err := svc.Load(); err != nil {
		panic(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	hs := &http.Server{Handler: svc}
	go hs.Serve(ln)
	instruction := seal(&schemas.Instruction{V: 1, ID: "0123456789abcdef0123456789abcdef", Stream: "demo",
		Machine: "runner-1", Agent: schemas.ArtifactRef{Name: "agent"}, Transport: "ssh",
		IssuedAt: now.Unix(), NotBefore: now.Unix(), Expires: now.Add(time.Hour).Unix()}, op)
	return "http://" + ln.Addr().String(), l.Key(), instruction, func() {
		hs.Close()
		svc.Close()
		l.Close()
		os.RemoveAll(dir)
	}
}
