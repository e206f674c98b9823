package server

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are the Prometheus metrics of one Server, in its own registry.
type metrics struct {
	reg          *prometheus.Registry
	requests     *prometheus.CounterVec   // by endpoint and status code
	promptTokens prometheus.Counter       // prompt tokens evaluated
	genTokens    prometheus.Counter       // tokens generated
	latency      *prometheus.HistogramVec // request duration by endpoint
	ttft         prometheus.Histogram     // time to the first generated piece
	rejected     prometheus.Counter       // requests refused because the queue was full
}

func newMetrics(l *limiter, slots int) *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "ggml_server_requests_total", Help: "HTTP requests by endpoint and status code."}, []string{"endpoint", "code"})
	m.promptTokens = prometheus.NewCounter(prometheus.CounterOpts{Name: "ggml_server_prompt_tokens_total", Help: "Prompt tokens evaluated."})
	m.genTokens = prometheus.NewCounter(prometheus.CounterOpts{Name: "ggml_server_generated_tokens_total", Help: "Tokens generated."})
	m.latency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "ggml_server_request_duration_seconds", Help: "Time from request to the end of the response.", Buckets: prometheus.ExponentialBuckets(0.005, 2, 14)}, []string{"endpoint"})
	m.ttft = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "ggml_server_time_to_first_token_seconds", Help: "Time from request to the first generated text.", Buckets: prometheus.ExponentialBuckets(0.005, 2, 14)})
	m.rejected = prometheus.NewCounter(prometheus.CounterOpts{Name: "ggml_server_rejected_total", Help: "Requests refused with 429 because the queue was full."})
	queue := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "ggml_server_queue_depth", Help: "Requests waiting for a slot."}, func() float64 { return float64(l.waiting.Load()) })
	batch := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "ggml_server_batch_size", Help: "Sequences being processed now (busy slots)."}, func() float64 { return float64(l.active.Load()) })
	nslots := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "ggml_server_slots", Help: "Slots (-np)."}, func() float64 { return float64(slots) })
	m.reg.MustRegister(m.requests, m.promptTokens, m.genTokens, m.latency, m.ttft, m.rejected, queue, batch, nslots,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}
