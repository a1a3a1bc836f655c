// Package badgerfile handles the files of a log's Badger v4 store without
// Badger opening the store, where Badger itself would destroy evidence,
// panic or refuse: a table file opened read-only whatever its name, its
// footer checked without trusting a length and every
// block's checksum verified (OpenTable); whether a table holds a key the
// store lacks (TableLacks, on a check copy of the store: OpenCheckCopy);
// the write-ahead and value logs (IsWriteLog) and the empty ones a killed
// writer leaves (RemoveEmptyLogs); the options writ's stores are opened
// with (Options); the release of a store's mapped table pages
// (ReleaseMapped); and a writer's close, which compacts what one-shot and
// bulk writers would otherwise leave to the next act (Close, Settle). Package ledger decides from these what a damaged store
// is (ledger.StoreError); ledger/repair reads a damaged store's files
// with them.
package badgerfile
