// Package logmetrics is what `writ ledger serve` exposes at /metrics,
// in the Prometheus text format: the tree size and the signed time of
// the checkpoint it last served, the checkpoint's age, requests and
// bytes by kind and status, and refusals past the server's limits by
// rule, each labelled with the log's origin.
package logmetrics

import (
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/writ-ledger/writ/internal/httpbound"
)

// ReasonMaxAnswer labels ledger serve's refusals past its answer budget
// (--max-answer-mib, publish.ServeOptions.MaxAnswerBytes), beside
// httpbound's rules.
const ReasonMaxAnswer = httpbound.Reason("max-answer-mib")

// Metrics are one served log's metrics. It implements
// publish.ServeMetrics; its methods are safe for concurrent use.
type Metrics struct {
	reg      *prometheus.Registry
	size     prometheus.Gauge
	signed   atomic.Int64 // Unix seconds of the last checkpoint served
	requests *prometheus.CounterVec
	bytes    *prometheus.CounterVec
	refusals *prometheus.CounterVec
}

// New returns the metrics of the log named origin, every refusal rule
// at zero, with Go's runtime metrics beside them.
func New(origin string) *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	labels := prometheus.Labels{"origin": origin}
	m.size = prometheus.NewGauge(prometheus.GaugeOpts{Name: "writ_log_tree_size", Help: "Entries in the tree of the latest checkpoint served.", ConstLabels: labels})
	age := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "writ_log_checkpoint_age_seconds", Help: "Seconds since the latest checkpoint served was signed (its cosignature time); -1 before the first.", ConstLabels: labels},
		func() float64 {
			t := m.signed.Load()
			if t == 0 {
				return -1
			}
			return time.Since(time.Unix(t, 0)).Seconds()
		})
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "writ_log_requests_total", Help: "Requests answered, by kind (checkpoint, tile, entries, history, other) and HTTP status.", ConstLabels: labels}, []string{"kind", "code"})
	m.bytes = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "writ_log_response_bytes_total", Help: "Response body bytes sent, by kind (after gzip).", ConstLabels: labels}, []string{"kind"})
	m.refusals = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "writ_log_refusals_total", Help: "Connections and requests refused past a limit, by rule (max-conns, max-conns-per-client, max-in-flight, max-per-client, max-body-bytes, max-answer-mib).", ConstLabels: labels}, []string{"reason"})
	for _, r := range append(httpbound.Reasons, ReasonMaxAnswer) {
		m.refusals.WithLabelValues(string(r))
	}
	m.reg.MustRegister(m.size, age, m.requests, m.bytes, m.refusals, collectors.NewGoCollector())
	return m
}

// Checkpoint implements publish.ServeMetrics: size entries, signed at
// signed.
func (m *Metrics) Checkpoint(size int64, signed time.Time) {
	m.size.Set(float64(size))
	m.signed.Store(signed.Unix())
}

// Request implements publish.ServeMetrics: one answer of kind, with
// HTTP status, n body bytes.
func (m *Metrics) Request(kind string, status, n int) {
	m.requests.WithLabelValues(kind, strconv.Itoa(status)).Inc()
	m.bytes.WithLabelValues(kind).Add(float64(n))
}

// Refused counts one refusal past a limit, by its rule.
func (m *Metrics) Refused(r httpbound.Reason) { m.refusals.WithLabelValues(string(r)).Inc() }

// Register adds cs to what Handler serves (a writer service's
// submission metrics beside the read API's). It panics on a collector
// registered twice (prometheus.Registry.MustRegister): a programming
// error.
func (m *Metrics) Register(cs ...prometheus.Collector) { m.reg.MustRegister(cs...) }

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}
