package replica

import (
	"encoding/hex"
	"encoding/json"
)

// importedJSON is an imported log as `writ ledger import --json` prints
// it, one object per log.
type importedJSON struct {
	Log       string `json:"log" doc:"authority or decisions"`
	Origin    string `json:"origin" doc:"the log's origin"`
	Before    int64  `json:"before" doc:"entries before"`
	After     int64  `json:"after" doc:"entries after"`
	Recovered int64  `json:"recovered" doc:"entries an interrupted import left and this one dropped"`
	RootHash  string `json:"root_hash" doc:"the imported tree's root hash, hex"`
}

// JSONShape is the struct MarshalJSON writes, for a reader of its fields
// and their doc tags (writ ledger import --help lists them).
func (ImportedLog) JSONShape() any { return importedJSON{} }

// MarshalJSON writes l as {"log", "origin", "before", "after",
// "recovered", "root_hash"}: its name, origin, entry counts and the
// imported checkpoint's root hash in hex.
func (l ImportedLog) MarshalJSON() ([]byte, error) {
	return json.Marshal(importedJSON{l.Name, l.Origin, l.Before, l.After, l.Recovered, hex.EncodeToString(l.Checkpoint.Hash[:])})
}
