package logmetrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/writ-ledger/writ/internal/httpbound"
)

func TestMetrics(t *testing.T) {
	m := New("example.com/log")
	m.Checkpoint(42, time.Now())
	m.Request("tile", 200, 100)
	m.Refused(ReasonMaxAnswer)
	m.Refused(httpbound.Reasons[0])
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	for _, want := range []string{
		`writ_log_tree_size{origin="example.com/log"} 42`,
		`writ_log_requests_total{code="200",kind="tile",origin="example.com/log"} 1`,
		`writ_log_response_bytes_total{kind="tile",origin="example.com/log"} 100`,
		`writ_log_refusals_total{origin="example.com/log",reason="max-answer-mib"} 1`,
		`writ_log_refusals_total{origin="example.com/log",reason="` + string(httpbound.Reasons[0]) + `"} 1`,
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}
