package monitor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/writ-ledger/writ/internal/fileio"
)

// MaxReported bounds the digests a state keeps of the records it
// reported (the latest are kept): about 72 bytes each, 7 MB at most.
const MaxReported = 100_000

// maxStateFile bounds the state file read.
const maxStateFile = 8 << 20

// State is a monitor's position in one log, kept between runs in its
// state file (JSON).
type State struct {
	V      int    `json:"v"`         // 1
	Origin string `json:"origin"`    // the log's origin
	Size   int64  `json:"size"`      // entries reported up to (exclusive)
	Root   string `json:"root_hash"` // the tree's root at Size, lowercase hex
	// Reported are the digests of the records reported, oldest first, at
	// most MaxReported: a revocation of one is reported in turn.
	Reported []string `json:"reported,omitempty"`
}

// ErrState is wrapped by every state file that cannot be read as one.
var ErrState = errors.New("invalid monitor state file")

// readState reads the state file at path; a file that does not exist is
// a zero State (a first run).
func readState(path string) (*State, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return &State{V: 1}, nil
	} else if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxStateFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxStateFile {
		return nil, fmt.Errorf("%w: %s is over %d bytes", ErrState, path, maxStateFile)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var st State
	if err := dec.Decode(&st); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrState, path, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: %s: data after the state", ErrState, path)
	}
	if st.V != 1 || st.Size < 0 || (st.Size > 0) != (len(st.Root) == 64) || strings.Trim(st.Root, "0123456789abcdef") != "" ||
		(st.Size > 0) != (st.Origin != "") || len(st.Reported) > MaxReported {
		return nil, fmt.Errorf("%w: %s: not a version 1 state with a size and, past 0, its log's origin and root hash (64 lowercase hex)", ErrState, path)
	}
	return &st, nil
}

// write writes st to path atomically (a temporary file renamed over it).
func (st *State) write(path string) error {
	if n := len(st.Reported); n > MaxReported {
		st.Reported = st.Reported[n-MaxReported:]
	}
	data, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return fileio.Replace(path, ".writ-monitor-", append(data, '\n'))
}
