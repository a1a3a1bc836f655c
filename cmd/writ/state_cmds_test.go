package main

import (
	"encoding/binary"
	"strconv"

	"github.com/dgraph-io/badger/v4"
	"github.com/rogpeppe/go-internal/testscript"
	"github.com/writ-ledger/writ/internal/testkit"
)

// cmdDropState deletes part of an authority log's persisted state index
// (ledger/state.go) through Badger, as someone who can write the
// directory would: `drop-state LOGDIR binding` (the binding) or
// `drop-state LOGDIR mark N` (entry N's mark).
func cmdDropState(ts *testscript.TestScript, neg bool, args []string) {
	var key []byte
	switch {
	case !neg && len(args) == 2 && args[1] == "binding":
		key = []byte("m/state")
	case !neg && len(args) == 3 && args[1] == "mark":
		n, err := strconv.ParseUint(args[2], 10, 63)
		ts.Check(err)
		key = binary.BigEndian.AppendUint64([]byte("s/m"), n)
	default:
		ts.Fatalf("usage: drop-state LOGDIR binding | drop-state LOGDIR mark N")
	}
	ts.Check(testkit.EditStore(ts.MkAbs(args[0]), func(txn *badger.Txn) error {
		if _, err := txn.Get(key); err != nil {
			return err
		}
		return txn.Delete(key)
	}))
}
