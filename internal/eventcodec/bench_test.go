package eventcodec

import (
	"os"
	"testing"
)

// BenchmarkDecode reads the HTTP harness's event (bench/cmd/benchhttp):
// "one_pass" is Decode, "checked" the separate checks and encoding/json it
// words refusals with, which every event went through before.
func BenchmarkDecode(b *testing.B) {
	event, err := os.ReadFile("../../bench/cmd/benchhttp/event.json")
	if err != nil {
		b.Fatal(err)
	}
	for name, decode := range map[string]func([]byte, int) (map[string]any, error){"one_pass": Decode, "checked": func(b []byte, d int) (map[string]any, error) { return decodeChecked(b, d, "the body") }} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := decode(event, DefaultMaxDepth); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
