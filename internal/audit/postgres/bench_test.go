package postgres

import (
	"context"
	"slices"
	"testing"
	"time"

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
		if err := s.Write(context.Background(), chunk, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "records/s")
}
