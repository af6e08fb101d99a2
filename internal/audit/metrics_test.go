package audit

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

func TestPrometheusMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := NewPrometheusMetrics(reg)
	if err != nil {
		t.Fatal(err)
	}
	m.Recorded(SinkPostgres, StatusSpooled)
	m.Recorded(SinkPostgres, StatusSpooled)
	m.WriteError("spool")
	m.QueueDepth(7)
	m.SpoolBytes(1234)
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range fams {
		for _, mt := range f.GetMetric() {
			key := f.GetName()
			for _, l := range mt.GetLabel() {
				key += "," + l.GetName() + "=" + l.GetValue()
			}
			switch {
			case mt.Counter != nil:
				got[key] = mt.GetCounter().GetValue()
			case mt.Gauge != nil:
				got[key] = mt.GetGauge().GetValue()
			}
		}
	}
	want := map[string]float64{
		"gated_audit_records_total,outcome=spooled,sink=postgres": 2,
		"gated_audit_write_errors_total,sink=spool":               1,
		"gated_audit_queue_depth":                                 7,
		"gated_audit_spool_bytes":                                 1234,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
	if _, err := NewPrometheusMetrics(reg); err == nil {
		t.Fatal("registering twice succeeded")
	}
}
