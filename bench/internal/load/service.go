package load

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Records reads the records bench/mkledger wrote as files into dir
// (its -extra-dir), in file order.
func Records(dir string) ([][]byte, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, b)
	}
	return out, nil
}

// Ready waits up to 60 s for a server's address file (--addr-file: the
// address and a newline) and then up to wait for its /readyz to answer
// 200 (a state that must be replayed takes a while), and returns its
// http:// URL.
func Ready(addrFile string, wait time.Duration) (string, error) {
	addr := ""
	for deadline := time.Now().Add(60 * time.Second); addr == ""; time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(addrFile); err == nil && bytes.HasSuffix(b, []byte("\n")) {
			addr = strings.TrimSpace(string(b))
		} else if time.Now().After(deadline) {
			return "", fmt.Errorf("no address in %s within 60 s", addrFile)
		}
	}
	url := "http://" + addr
	for deadline := time.Now().Add(wait); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get(url + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return url, nil
			}
		}
	}
	return "", fmt.Errorf("%s not ready within %s", url, wait)
}
