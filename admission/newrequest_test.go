package admission

import (
	"os"
	"path/filepath"
	"testing"
)

// TestNewRequest: relative paths are made absolute in the working
// directory; absent ones stay "".
func TestNewRequest(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRequest([]byte("d"), "bin/agent", "/usr/bin/engine", "")
	if err != nil || r.AgentBinary != filepath.Join(wd, "bin/agent") || r.EngineBinary != "/usr/bin/engine" || r.ProvisionDir != "" || string(r.Dispatch) != "d" {
		t.Fatalf("%+v %v", r, err)
	}
}
