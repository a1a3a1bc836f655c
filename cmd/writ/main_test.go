package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
	"github.com/rogpeppe/go-internal/testscript"
	"github.com/writ-ledger/writ/internal/testkit"
	"github.com/writ-ledger/writ/sign"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"writ": func() {
			recordJSONFields()
			os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr))
		},
	})
}

// TestScripts drives the real CLI through the scripts in testdata/script:
// streams, exit codes and --json fields are the contract they pin.
func TestScripts(t *testing.T) {
	agent := buildAgent(t)
	builds := map[string]string{
		"agent-dirty":    testkit.BuildAgent(t, testkit.BuildOptions{Dirty: true}),
		"agent-novcs":    testkit.BuildAgent(t, testkit.BuildOptions{NoVCS: true}),
		"agent-stripped": testkit.BuildAgent(t, testkit.BuildOptions{LDFlags: "-s -w"}),
		"engine":         testkit.BuildAgent(t, testkit.BuildOptions{LDFlags: "-s -w"}),
	}
	jsonLog := filepath.Join(t.TempDir(), "json-fields")
	t.Cleanup(func() { checkJSONFields(t, jsonLog) })
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		Condition: func(cond string) (bool, error) {
			if cond == "nginx" {
				return nginxCondition(), nil
			}
			if cond == "softhsm" {
				return softHSMCondition(), nil
			}
			if cond == "pkcs11" {
				return sign.TokensSupported, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Setup: func(env *testscript.Env) error {
			// A race-detector build sleeps a second at every exit by
			// default; the scripts start hundreds of writ processes.
			env.Setenv("GORACE", "atexit_sleep_ms=0")
			env.Setenv(envJSONLog, jsonLog)
			if err := copyFile(agent, filepath.Join(env.WorkDir, "agent")); err != nil {
				return err
			}
			// The other real builds go to builds/, for the scripts that
			// need them (transfer.txtar).
			if err := os.Mkdir(filepath.Join(env.WorkDir, "builds"), 0o755); err != nil {
				return err
			}
			for name, path := range builds {
				if err := copyFile(path, filepath.Join(env.WorkDir, "builds", name)); err != nil {
					return err
				}
			}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exit":               cmdExit,
			"tamper-entry":       cmdTamperEntry,
			"flipbyte":           cmdFlipByte,
			"truncate-log":       cmdTruncateLog,
			"set-index":          cmdSetIndex,
			"drop-index":         cmdDropIndex,
			"page-matches":       cmdPageMatches,
			"fleet-page-matches": cmdFleetPageMatches,
			"remove-entry":       cmdRemoveEntry,
			"swap-entries":       cmdSwapEntries,
			"idp-start":          cmdIDPStart,
			"idp-token":          cmdIDPToken,
			"wait-socket":        cmdWaitSocket,
			"testkey":            cmdTestKey,
			"seal-record":        cmdSealRecord,
			"seal-raw":           cmdSealRaw,
			"encode-cbor":        cmdEncodeCBOR,
			"raw-append":         cmdRawAppend,
			"nginx":              cmdNginx,
			"envfile":            cmdEnvFile,
			"appendline":         cmdAppendLine,
			"jsonenv":            cmdJSONEnv,
			"waitfile":           cmdWaitFile,
			"softhsm":            cmdSoftHSM,
			"damage-store":       cmdDamageStore,
			"drop-state":         cmdDropState,
		},
	})
}

// buildAgent builds one test agent with real vcs metadata for all
// scripts.
func buildAgent(t *testing.T) string {
	agentOnce.Do(func() { agentPath = testkit.BuildAgent(t, testkit.BuildOptions{}) })
	if agentPath == "" {
		t.Fatal("the test agent was not built")
	}
	return agentPath
}

var (
	agentOnce sync.Once
	agentPath string
)

// cmdExit runs a command and asserts its exact exit status:
// exit N cmd args...
func cmdExit(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exit N command [args...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		got = ee.ExitCode()
	} else if err != nil {
		ts.Fatalf("running %s: %v", args[1], err)
	}
	if got != want {
		ts.Fatalf("%s exited %d, want %d", args[1], got, want)
	}
}

// cmdTamperEntry changes one byte of a stored entry directly through
// Badger, as an attacker with disk access would:
// tamper-entry LOGDIR INDEX
func cmdTamperEntry(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: tamper-entry LOGDIR INDEX")
	}
	i, err := strconv.ParseInt(args[1], 10, 64)
	ts.Check(err)
	ts.Check(testkit.FlipStoredEntry(ts.MkAbs(args[0]), i))
}

// cmdFlipByte flips the lowest bit of a file's last byte: flipbyte FILE
func cmdFlipByte(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: flipbyte FILE")
	}
	p := ts.MkAbs(args[0])
	b, err := os.ReadFile(p)
	ts.Check(err)
	b[len(b)-1] ^= 1
	ts.Check(os.WriteFile(p, b, 0o755))
}

// cmdDamageStore does one damage to a log's Badger store
// (testkit.DamageStore): damage-store LOGDIR KIND
func cmdDamageStore(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: damage-store LOGDIR KIND")
	}
	ts.Check(testkit.DamageStore(ts.MkAbs(args[0]), testkit.Damage(args[1])))
}

// cmdTruncateLog drops a log's last entry and lowers its stored size,
// directly through Badger, without touching the signed checkpoint:
// truncate-log LOGDIR
func cmdTruncateLog(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: truncate-log LOGDIR")
	}
	ts.Check(testkit.EditStore(ts.MkAbs(args[0]), func(txn *badger.Txn) error {
		item, err := txn.Get([]byte("m/size"))
		if err != nil {
			return err
		}
		v, err := item.ValueCopy(nil)
		if err != nil {
			return err
		}
		n := binary.BigEndian.Uint64(v) - 1
		key := make([]byte, 9)
		key[0] = 'e'
		binary.BigEndian.PutUint64(key[1:], n)
		if err := txn.Delete(key); err != nil {
			return err
		}
		binary.BigEndian.PutUint64(v, n)
		return txn.Set([]byte("m/size"), v)
	}))
}

// cmdSetIndex points a log's lookup key at an index, directly through
// Badger, as an attacker with disk access would:
// set-index LOGDIR KEY INDEX
func cmdSetIndex(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: set-index LOGDIR KEY INDEX")
	}
	i, err := strconv.ParseUint(args[2], 10, 64)
	ts.Check(err)
	db, err := badger.Open(badger.DefaultOptions(ts.MkAbs(args[0])).WithLogger(nil))
	ts.Check(err)
	defer db.Close()
	v := make([]byte, 8)
	binary.BigEndian.PutUint64(v, i)
	ts.Check(db.Update(func(txn *badger.Txn) error { return txn.Set([]byte("x/"+args[1]), v) }))
}

// cmdWaitSocket waits up to 20 seconds for a UNIX socket to accept:
// wait-socket PATH
func cmdWaitSocket(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: wait-socket PATH")
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		conn, err := net.Dial("unix", ts.MkAbs(args[0]))
		if err == nil {
			conn.Close()
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("no server on %s: %v", args[0], err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// cmdDropIndex deletes every lookup key of a log that starts with PREFIX,
// directly through Badger, as an attacker with disk access would:
// drop-index LOGDIR PREFIX
func cmdDropIndex(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: drop-index LOGDIR PREFIX")
	}
	ts.Check(testkit.EditStore(ts.MkAbs(args[0]), func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: []byte("x/" + args[1])})
		var keys [][]byte
		for it.Rewind(); it.Valid(); it.Next() {
			keys = append(keys, it.Item().KeyCopy(nil))
		}
		it.Close()
		if len(keys) == 0 {
			return fmt.Errorf("no key starts with x/%s", args[1])
		}
		for _, k := range keys {
			if err := txn.Delete(k); err != nil {
				return err
			}
		}
		return nil
	}))
}

// entryKey is the ledger's storage key of entry i.
func entryKey(i int64) []byte {
	k := make([]byte, 9)
	k[0] = 'e'
	binary.BigEndian.PutUint64(k[1:], uint64(i))
	return k
}

// cmdRemoveEntry deletes one stored entry, leaving its hashes and the
// checkpoint: remove-entry LOGDIR INDEX
func cmdRemoveEntry(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: remove-entry LOGDIR INDEX")
	}
	i, err := strconv.ParseInt(args[1], 10, 64)
	ts.Check(err)
	ts.Check(testkit.EditStore(ts.MkAbs(args[0]), func(txn *badger.Txn) error { return txn.Delete(entryKey(i)) }))
}

// cmdSwapEntries swaps two stored entries' bytes, leaving the hashes:
// swap-entries LOGDIR I J
func cmdSwapEntries(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 3 {
		ts.Fatalf("usage: swap-entries LOGDIR I J")
	}
	i, err := strconv.ParseInt(args[1], 10, 64)
	ts.Check(err)
	j, err := strconv.ParseInt(args[2], 10, 64)
	ts.Check(err)
	ts.Check(testkit.EditStore(ts.MkAbs(args[0]), func(txn *badger.Txn) error {
		get := func(k []byte) ([]byte, error) {
			it, err := txn.Get(k)
			if err != nil {
				return nil, err
			}
			return it.ValueCopy(nil)
		}
		a, err := get(entryKey(i))
		if err != nil {
			return err
		}
		b, err := get(entryKey(j))
		if err != nil {
			return err
		}
		if err := txn.Set(entryKey(i), b); err != nil {
			return err
		}
		return txn.Set(entryKey(j), a)
	}))
}

// softHSMCondition is [softhsm]: writ can use tokens ([pkcs11]: it was
// built with cgo) and SoftHSM2 is installed, or required
// (WRIT_REQUIRE_SOFTHSM=1, as in CI), so that the softhsm command fails
// the script instead of it being skipped.
func softHSMCondition() bool {
	_, _, err := testkit.SoftHSMInstalled()
	return sign.TokensSupported && (err == nil || os.Getenv(testkit.RequireSoftHSMEnv) == "1")
}

// cmdSoftHSM creates a SoftHSM2 token labelled writ-test in $WORK/hsm and
// sets SOFTHSM2_CONF and WRIT_PKCS11_MODULE for the writ commands after
// it, TOKEN_URI to "pkcs11:token=writ-test" and PIN_FILE to its PIN
// file (mode 0600): softhsm
func cmdSoftHSM(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: softhsm")
	}
	tok, err := testkit.NewSoftHSMToken(ts.MkAbs("hsm"))
	ts.Check(err)
	ts.Setenv("SOFTHSM2_CONF", tok.Conf)
	ts.Setenv("WRIT_PKCS11_MODULE", tok.Module)
	ts.Setenv("TOKEN_URI", "pkcs11:token="+testkit.SoftHSMLabel)
	ts.Setenv("PIN_FILE", tok.PINFile)
}
