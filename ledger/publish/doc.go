// Package publish puts a writ log where readers and replicas fetch it, as
// a static c2sp.org/tlog-tiles log: [Publish] writes the tiles the log's
// latest signed checkpoint adds into a directory, incrementally and
// atomically, the checkpoint last; [Server] serves the same read API
// straight from the log's store, within a byte budget for the answers it
// holds and a minimum write rate for slow readers. The tiles are read
// from one snapshot of the store (ledger.Log.ReadTiles, WriteTile), so
// what is published or served is exactly the tree the checkpoint signs;
// ledger/replica's Sync reads either. [CollectCosignatures] asks the
// witnesses of a c2sp.org/tlog-policy to cosign the log's latest
// checkpoint (c2sp.org/tlog-witness) and stores what verifies with it, so
// that what is published carries them.
package publish
