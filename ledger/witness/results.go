package witness

import "strings"

// Cosignatures is a witness's answer to a checkpoint submitted to it
// (Client.AddCheckpoint), as writ witness add-checkpoint --json prints it.
type Cosignatures struct {
	Origin     string   `json:"origin" doc:"the log's origin"`
	Size       int64    `json:"size" doc:"the checkpoint's size"`
	Signatures []string `json:"signatures" doc:"the witness's cosignature lines"`
}

// NewCosignatures returns the answer sigs (AddCheckpoint's signature
// lines, each ending in a newline) to the checkpoint cp: its origin, its
// size (entries) and the lines, without their newlines. It does not
// verify them.
func NewCosignatures(cp Checkpoint, sigs []byte) Cosignatures {
	return Cosignatures{cp.Origin, cp.Size, strings.Split(strings.TrimSuffix(string(sigs), "\n"), "\n")}
}

// ServedCheckpoint is the checkpoint a witness serves for a log
// (Client.Checkpoint), as writ witness checkpoint --json prints it.
type ServedCheckpoint struct {
	Origin     string `json:"origin" doc:"the log's origin"`
	Checkpoint string `json:"checkpoint" doc:"the witness's latest cosigned checkpoint of that log as served, not verified here"`
}
