package replica

import "fmt"

// Text is writ ledger import's line for people about one log: its name
// and origin, the entries before and after, its root hash as hex, and the
// unsigned entries an interrupted import left that were dropped first.
func (l ImportedLog) Text() string {
	text := fmt.Sprintf("imported %s log %s: %d → %d entries, root %x", l.Name, l.Origin, l.Before, l.After, l.Checkpoint.Hash[:])
	if l.Recovered > 0 {
		text += fmt.Sprintf(" (first dropped %d unsigned entries an interrupted import left)", l.Recovered)
	}
	return text
}
