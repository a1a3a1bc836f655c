package logservice

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// submissionMetrics are a Service's metrics of its submissions, beside
// the read API's (logmetrics): answers by HTTP status and refusal rule,
// records appended, records per appended submission, records per group
// commit, and the time from a submission's arrival to its answer (its
// records durable).
type submissionMetrics struct {
	answers *prometheus.CounterVec
	records prometheus.Counter
	sizes   prometheus.Histogram
	latency prometheus.Histogram
	commits prometheus.Histogram
}

func newSubmissionMetrics(origin string) *submissionMetrics {
	labels := prometheus.Labels{"origin": origin}
	return &submissionMetrics{
		answers: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "writ_log_submissions_total",
			Help: "Submissions answered, by HTTP status and refusal rule (\"\" when appended or refused by no rule).", ConstLabels: labels}, []string{"code", "rule"}),
		records: prometheus.NewCounter(prometheus.CounterOpts{Name: "writ_log_submitted_records_total",
			Help: "Records appended from submissions.", ConstLabels: labels}),
		sizes: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "writ_log_submission_records",
			Help: "Records per appended submission.", ConstLabels: labels, Buckets: prometheus.ExponentialBuckets(1, 4, 7)}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "writ_log_submission_seconds",
			Help: "Seconds from a submission's arrival to its answer (an appended one's records durable).", ConstLabels: labels,
			Buckets: prometheus.ExponentialBuckets(0.00025, 2, 14)}),
		commits: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "writ_log_commit_records",
			Help: "Records per group commit (one durable batch, many submissions).", ConstLabels: labels, Buckets: prometheus.ExponentialBuckets(1, 2, 13)}),
	}
}

func (m *submissionMetrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.answers, m.records, m.sizes, m.latency, m.commits}
}

// observe counts one answer: its status, its rule, the records appended
// (0 for a refusal) and how long it took.
func (m *submissionMetrics) observe(status int, rule string, n int, took time.Duration) {
	m.answers.WithLabelValues(strconv.Itoa(status), rule).Inc()
	m.latency.Observe(took.Seconds())
	if n > 0 {
		m.records.Add(float64(n))
		m.sizes.Observe(float64(n))
	}
}
