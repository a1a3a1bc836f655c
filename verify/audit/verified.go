package audit

// LogSummary is one log's verified checkpoint, named: part of writ ledger
// verify's and writ ledger checkpoint's JSON results.
type LogSummary struct {
	Log      string `json:"log" doc:"authority or decisions"`
	Origin   string `json:"origin" doc:"the log's origin"`
	Size     int64  `json:"size" doc:"entries"`
	RootHash string `json:"root_hash" doc:"the tree's root hash, hex"`
}

// Verified is the summary of a report whose audit passed (Report.Verified):
// writ ledger verify's JSON result.
type Verified struct {
	OK   bool         `json:"ok" doc:"true"`
	Logs []LogSummary `json:"logs" doc:"each log's log, origin, size, root_hash"`
}

// VerifyFailure is the summary of a report whose audit failed
// (Report.Verified): writ ledger verify's JSON result then.
type VerifyFailure struct {
	OK    bool   `json:"ok" doc:"false"`
	Log   string `json:"log" doc:"the log that failed"`
	Index int64  `json:"index" doc:"the entry that failed"`
	Error string `json:"error" doc:"why"`
}

// Verified summarises r: for a passed audit, each verified log's
// checkpoint (the authority log's, then the decision log's when there is
// one) and a nil *VerifyFailure; for a failed one, the failure.
func (r *Report) Verified() (Verified, *VerifyFailure) {
	if !r.OK {
		f := r.Failure
		return Verified{}, &VerifyFailure{Log: f.Log, Index: f.Index, Error: f.Error}
	}
	v := Verified{OK: true}
	for _, l := range []struct {
		name string
		cp   *CheckpointSummary
	}{{"authority", r.Authority}, {"decisions", r.DecisionLog}} {
		if l.cp != nil {
			v.Logs = append(v.Logs, LogSummary{l.name, l.cp.Origin, l.cp.Size, l.cp.RootHash})
		}
	}
	return v, nil
}
