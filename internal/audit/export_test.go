package audit

// What the recorder tests (package audit_test, which may import the sinks
// that import this package) look at inside a recorder.

// SpoolDir is the directory r spools in.
func SpoolDir(r Recorder) string { return r.(*recorder).spool.Dir() }

// Spooled is what r's spool and the spools it adopted hold, in bytes.
func Spooled(r Recorder) int64 {
	rr := r.(*recorder)
	return rr.spool.Size() + rr.orphanBytes.Load()
}

// SetFail switches r's fail mode mid-test.
func SetFail(r Recorder, f FailMode) { r.(*recorder).cfg.Fail = f }

// EncodedSizeBound is encodedSizeBound.
var EncodedSizeBound = encodedSizeBound
