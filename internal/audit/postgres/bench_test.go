package postgres

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/audit/audittest"
)

// BenchmarkSinkThroughput measures records/s sustained into PostgreSQL by
// the batch writer (COPY into staging, INSERT ON CONFLICT), 1000 per batch.
func BenchmarkSinkThroughput(b *testing.B) {
	_, u := migratedDB(b)
	s := openSink(b, u, time.Hour)
	recs := audittest.Records(b.N)
	b.ResetTimer()
	start := time.Now()
	for chunk := range slices.Chunk(recs, 1000) {
		if err := s.Write(context.Background(), audit.Batch{Records: chunk}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
}

// BenchmarkSinkThroughputWriters is BenchmarkSinkThroughput with several
// writers at once into one database, as several gated replicas write: each
// a sink of its own, 1000 records per batch. It reports what the database
// takes in all.
func BenchmarkSinkThroughputWriters(b *testing.B) {
	for _, writers := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			_, u := migratedDB(b)
			sinks := make([]*Sink, writers)
			for i := range sinks {
				sinks[i] = openSink(b, u, time.Hour)
			}
			recs := audittest.Records(b.N)
			share := (b.N + writers - 1) / writers
			var wg sync.WaitGroup
			b.ResetTimer()
			start := time.Now()
			for i, s := range sinks {
				mine := recs[min(i*share, b.N):min((i+1)*share, b.N)]
				wg.Go(func() {
					for chunk := range slices.Chunk(mine, 1000) {
						if err := s.Write(context.Background(), audit.Batch{Records: chunk}); err != nil {
							b.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
		})
	}
}
