package engine

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/writ-ledger/writ/internal/testkit"
)

// TestLockLost: on a real MariaDB, a migrate's lock is per bucket, and
// once its connection is gone (a database restart, a dropped connection)
// the lock is lost and held says so (ErrBusy); the checkpoint is not
// written over one another migrate wrote meanwhile (ErrBusy, the
// bucket's kept), and is written over the one found.
func TestLockLost(t *testing.T) {
	db, store := testkit.MariaDBForTest(t), testkit.S3ForTest(t)
	ctx := context.Background()
	dsn, err := db.CreateDatabase("lock")
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := store.Config()
	c := Config{DSN: dsn, Bucket: "bkt", Endpoint: store.Endpoint, AWS: cfg}
	held, unlock, err := c.lock(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	if err := held(ctx); err != nil {
		t.Fatalf("the lock just taken: %v", err)
	}
	if _, unlockOther, err := (Config{DSN: dsn, Bucket: "other", Endpoint: store.Endpoint}).lock(ctx); err != nil {
		t.Fatalf("another bucket's lock: %v", err)
	} else {
		unlockOther()
	}
	// Its connection killed, as a restart or a dropped connection would.
	admin, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var id int64
	if err := admin.QueryRow("SELECT IS_USED_LOCK(?)", c.lockName()).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec("KILL ?", id); err != nil {
		t.Fatal(err)
	}
	if err := held(ctx); !errors.Is(err, ErrBusy) {
		t.Errorf("held after its connection was killed: %v, want ErrBusy", err)
	}
	// The checkpoint another migrate wrote is not written over.
	if err := store.CreateBucket(ctx, "bkt"); err != nil {
		t.Fatal(err)
	}
	bk := newBucket(c)
	if err := bk.put(ctx, "checkpoint", []byte("theirs")); err != nil {
		t.Fatal(err)
	}
	ok := func(context.Context) error { return nil }
	if err := putCheckpoint(ctx, bk, ok, nil, []byte("mine")); !errors.Is(err, ErrBusy) {
		t.Errorf("putCheckpoint over a checkpoint written meanwhile: %v, want ErrBusy", err)
	}
	if got, err := bk.get(ctx, "checkpoint", 100); err != nil || string(got) != "theirs" {
		t.Errorf("the bucket's checkpoint is %q, %v; want the other migrate's", got, err)
	}
	if err := putCheckpoint(ctx, bk, ok, []byte("theirs"), []byte("mine")); err != nil {
		t.Fatalf("putCheckpoint over the checkpoint found: %v", err)
	}
}
