package audit

import (
	"errors"
	"reflect"
	"testing"
)

// TestReportVerified: a passed report names each log it verified, the
// decision log only when there is one; a failed one its failure.
func TestReportVerified(t *testing.T) {
	auth := &CheckpointSummary{Origin: "o", Size: 3, RootHash: "ab"}
	v, f := (&Report{OK: true, Authority: auth}).Verified()
	if f != nil || !reflect.DeepEqual(v, Verified{OK: true, Logs: []LogSummary{{"authority", "o", 3, "ab"}}}) {
		t.Fatalf("authority only: %+v %+v", v, f)
	}
	v, _ = (&Report{OK: true, Authority: auth, DecisionLog: &CheckpointSummary{Origin: "d", Size: 1, RootHash: "cd"}}).Verified()
	if len(v.Logs) != 2 || v.Logs[1] != (LogSummary{"decisions", "d", 1, "cd"}) {
		t.Fatalf("both logs: %+v", v)
	}
	_, f = (&Report{Failure: &Failure{Log: "decisions", Index: 4, Error: "bad", Cause: errors.New("bad")}}).Verified()
	if f == nil || *f != (VerifyFailure{Log: "decisions", Index: 4, Error: "bad"}) {
		t.Fatalf("failure: %+v", f)
	}
}
