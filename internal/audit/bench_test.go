package audit_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/audit/audittest"
	"github.com/gatedhq/gated/internal/audit/chain"
	"github.com/gatedhq/gated/internal/testcpu"
)

// BenchmarkRecorderSustained drives the whole async recorder (queue, writer,
// batching) and reports records/s from the first Record to a drained Close,
// and the CPU time this process spent per record (gated's side of the
// async path; PostgreSQL's own CPU is not in it).
func BenchmarkRecorderSustained(b *testing.B) {
	_, u := migratedDB(b)
	r := open(b, config{DatabaseURL: u, Config: audit.Config{SpoolDir: filepath.Join(b.TempDir(), "spool"), QueueSize: 100000}})
	recs := audittest.Records(b.N)
	b.ResetTimer()
	start, cpu0 := time.Now(), testcpu.Time(b)
	for _, rec := range recs {
		if _, err := r.Record(context.Background(), rec); err != nil {
			b.Fatal(err)
		}
	}
	if err := r.Close(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
	b.ReportMetric(float64((testcpu.Time(b)-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/record")
}

func openBench(b *testing.B, mode audit.Durability) audit.Recorder {
	_, u := migratedDB(b)
	return open(b, config{DatabaseURL: u, Config: audit.Config{Durability: mode, SpoolDir: filepath.Join(b.TempDir(), "spool")}})
}

func closeBench(b *testing.B, r audit.Recorder) {
	b.StopTimer() // draining the queue is not part of a decision's latency
	if err := r.Close(context.Background()); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkRecordAsyncLatency is the time a decision spends in an async
// Record while the writer keeps up: records are offered at 10,000/s (half
// the sink's capacity) and the mean and p99 time inside Record reported.
// ns/op is the pacing interval, not the latency.
func BenchmarkRecordAsyncLatency(b *testing.B) {
	r := openBench(b, audit.Async)
	recs := audittest.Records(b.N)
	lat := make([]time.Duration, b.N)
	const every = 100 * time.Microsecond
	b.ResetTimer()
	start := time.Now()
	for i, rec := range recs {
		if d := time.Until(start.Add(time.Duration(i) * every)); d > 0 {
			time.Sleep(d)
		}
		t0 := time.Now()
		if _, err := r.Record(context.Background(), rec); err != nil {
			b.Fatal(err)
		}
		lat[i] = time.Since(t0)
	}
	closeBench(b, r)
	reportLatency(b, lat)
}

func reportLatency(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	var sum time.Duration
	for _, l := range lat {
		sum += l
	}
	b.ReportMetric(float64(sum.Nanoseconds())/float64(len(lat)), "ns-mean/record")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "ns-p99/record")
}

// BenchmarkRecordSyncLatency is the time a sync Record takes until its
// record is committed, with 1 and 32 concurrent callers per CPU: group commit lets
// concurrent callers share one transaction, so ns/op (wall time per record)
// falls as callers rise while each caller waits about one commit.
func BenchmarkRecordSyncLatency(b *testing.B) {
	for _, par := range []int{1, 32} {
		// RunParallel starts par goroutines per GOMAXPROCS
		b.Run(fmt.Sprintf("callers=%d", par*runtime.GOMAXPROCS(0)), func(b *testing.B) {
			r := openBench(b, audit.Sync)
			recs := audittest.Records(b.N)
			lat := make([]time.Duration, b.N)
			var next atomic.Int64
			b.SetParallelism(par)
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := next.Add(1) - 1
					t0 := time.Now()
					if _, err := r.Record(context.Background(), recs[i]); err != nil {
						b.Error(err)
						return
					}
					lat[i] = time.Since(t0)
				}
			})
			closeBench(b, r)
			reportLatency(b, lat)
		})
	}
}

// BenchmarkRecordOverload is the overload: 128 goroutines record
// into an async recorder whose queue (16 records) is full all the time, so
// most records are stored without it, in the spool. With the database up
// the writer commits what the queue holds and the rest is spooled and
// replayed; with it down every record waits for the spool. It reports the
// records/s the callers get and the mean and p99 time inside Record; ns/op
// is wall time per record.
func BenchmarkRecordOverload(b *testing.B) {
	const callers = 128
	for _, db := range []string{"up", "down"} {
		b.Run("database="+db, func(b *testing.B) {
			u := "postgres://postgres@127.0.0.1:1/none?sslmode=disable&connect_timeout=1"
			if db == "up" {
				_, u = migratedDB(b)
			}
			r := open(b, config{DatabaseURL: u, Config: audit.Config{
				SpoolDir: filepath.Join(b.TempDir(), "spool"), QueueSize: 16, WriteTimeout: time.Second,
			}})
			recs := audittest.Records(b.N)
			lat := make([]time.Duration, b.N)
			var next atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for range callers {
				wg.Go(func() {
					for i := next.Add(1) - 1; i < int64(b.N); i = next.Add(1) - 1 {
						t0 := time.Now()
						if _, err := r.Record(context.Background(), recs[i]); err != nil {
							b.Error(err)
							return
						}
						lat[i] = time.Since(t0)
					}
				})
			}
			wg.Wait()
			elapsed := time.Since(start)
			closeBench(b, r)
			b.ReportMetric(float64(b.N)/elapsed.Seconds(), "records/s")
			reportLatency(b, lat)
		})
	}
}

// BenchmarkChainLink is what the chain adds to each record on the writer:
// its canonical content hash and its link.
func BenchmarkChainLink(b *testing.B) {
	rec := audittest.Record(1, time.Now())
	var prev chain.Hash
	cpu0 := testcpu.Time(b)
	for i := 0; b.Loop(); i++ {
		prev = chain.Link("gated-0.0123456789abcdef", int64(i), prev, audit.ContentHash(rec))
	}
	b.ReportMetric(float64((testcpu.Time(b)-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/record")
}
