package ledger_test

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/sigstore/sigstore/pkg/signature"
	"github.com/writ-ledger/writ/ledger"
	"github.com/writ-ledger/writ/ledger/formats"
	"github.com/writ-ledger/writ/sign"
	"golang.org/x/mod/sumdb/tlog"
)

// A log is created, three entries are appended in two batches, and its
// signed head vouches for them: an inclusion proof ties an entry to the
// signed root, a consistency proof ties the earlier tree to the later
// one, and a receipt (RFC 9942) lets anyone holding only the entry and
// the log's public key check it was logged.
func ExampleLog() {
	dir, err := os.MkdirTemp("", "writ-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	seed := bytes.Repeat([]byte{1}, ed25519.SeedSize) // fixed, for stable output
	signer, _ := signature.LoadED25519Signer(ed25519.NewKeyFromSeed(seed))
	key, _ := sign.NewPrivateKey(signer)
	clock := func() time.Time { return time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC) }
	l, err := ledger.Create(filepath.Join(dir, "log"), "example.com/log", key, clock)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Close()
	if _, err := l.Append([][]byte{[]byte("first"), []byte("second")}); err != nil {
		fmt.Println(err)
		return
	}
	if _, err := l.Append([][]byte{[]byte("third")}); err != nil {
		fmt.Println(err)
		return
	}
	head, err := l.SignedHead()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(head.Body())

	p, err := l.ProveInclusion(1, head.Size)
	fmt.Println("inclusion of entry 1:", err == nil && p.Verify() == nil &&
		p.LeafHash == tlog.RecordHash([]byte("second")) && p.RootHash == head.Hash)
	c, err := l.ProveConsistency(2, head.Size)
	fmt.Println("consistency 2 -> 3:", err == nil && c.Verify() == nil && c.NewRoot == head.Hash)

	receipt, err := l.Receipt(2)
	if err != nil {
		fmt.Println(err)
		return
	}
	rp, err := ledger.VerifyReceipt(receipt, []byte("third"), key.Public())
	fmt.Println("receipt:", err == nil && rp.Index == 2 && rp.RootHash == head.Hash)
	_, err = ledger.VerifyReceipt(receipt, []byte("3rd"), key.Public())
	fmt.Println("receipt for other bytes:", errors.Is(err, formats.ErrReceipt))
	// Output:
	// example.com/log
	// 3
	// w2UeVBcUxT1kjsx7rsp/4sNu9PplvM4ksdcShkN95WY=
	// inclusion of entry 1: true
	// consistency 2 -> 3: true
	// receipt: true
	// receipt for other bytes: true
}
