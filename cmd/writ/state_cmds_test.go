package main

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/dgraph-io/badger/v4"
	"github.com/rogpeppe/go-internal/testscript"
	"github.com/writ-ledger/writ/internal/testkit"
)

// cmdDropState deletes part of an authority log's persisted state index
// (ledger/state.go) through Badger, as someone who can write the
// directory would: `drop-state LOGDIR binding` (the binding),
// `drop-state LOGDIR mark N` (entry N's mark) or `drop-state LOGDIR seen
// N` (the content key that points at entry N).
func cmdDropState(ts *testscript.TestScript, neg bool, args []string) {
	var n uint64
	if !neg && len(args) == 3 {
		var err error
		n, err = strconv.ParseUint(args[2], 10, 63)
		ts.Check(err)
	}
	var find func(txn *badger.Txn) ([]byte, error)
	switch {
	case !neg && len(args) == 2 && args[1] == "binding":
		find = func(*badger.Txn) ([]byte, error) { return []byte("m/state"), nil }
	case !neg && len(args) == 3 && args[1] == "mark":
		find = func(*badger.Txn) ([]byte, error) { return binary.BigEndian.AppendUint64([]byte("s/m"), n), nil }
	case !neg && len(args) == 3 && args[1] == "seen":
		find = func(txn *badger.Txn) ([]byte, error) { return seenKeyOf(txn, n) }
	default:
		ts.Fatalf("usage: drop-state LOGDIR binding | drop-state LOGDIR mark N | drop-state LOGDIR seen N")
	}
	ts.Check(testkit.EditStore(ts.MkAbs(args[0]), func(txn *badger.Txn) error {
		key, err := find(txn)
		if err != nil {
			return err
		}
		if _, err := txn.Get(key); err != nil {
			return err
		}
		return txn.Delete(key)
	}))
}

// seenKeyOf returns the content key of the state index that points at
// entry n.
func seenKeyOf(txn *badger.Txn, n uint64) ([]byte, error) {
	it := txn.NewIterator(badger.IteratorOptions{PrefetchValues: false, Prefix: []byte("s/d")})
	defer it.Close()
	want := binary.BigEndian.AppendUint64(nil, n)
	for it.Rewind(); it.Valid(); it.Next() {
		v, err := it.Item().ValueCopy(nil)
		if err != nil {
			return nil, err
		}
		if bytes.Equal(v, want) {
			return it.Item().KeyCopy(nil), nil
		}
	}
	return nil, fmt.Errorf("no content key points at entry %d", n)
}
