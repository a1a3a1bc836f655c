package replica

import (
	"encoding/binary"
)

// The Badger key layout of package ledger (ledger/log.go), for the tests
// here that leave a store as a killed or tampering writer would.
var (
	keySize       = []byte("m/size")
	keyCheckpoint = []byte("m/checkpoint")
)

const (
	prefixEntry = 'e'
	prefixHash  = 'h'
)

func indexKey(prefix byte, i int64) []byte {
	k := []byte{prefix, 0, 0, 0, 0, 0, 0, 0, 0}
	binary.BigEndian.PutUint64(k[1:], uint64(i))
	return k
}

func sizeBytes(n int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(n)) }
