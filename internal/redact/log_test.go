package redact

import (
	"errors"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/gatedhq/gated/internal/redact/redacttest"
)

// No planted secret reaches the log through a message, a string field, a
// field set with With, a stringer or an error.
func TestLogCoreMasksCanaries(t *testing.T) {
	t.Parallel()
	core, logs := observer.New(zapcore.DebugLevel)
	log := zap.New(LogCore(core))
	for _, c := range redacttest.Canaries {
		log.With(zap.String("with", c.Text)).Warn("saw "+c.Text,
			zap.String("tool", c.Text), zap.Stringer("s", stringer(c.Text)), zap.Error(errors.New(c.Text)), zap.Int("n", 7))
	}
	if logs.Len() != len(redacttest.Canaries) {
		t.Fatalf("%d entries logged, want %d", logs.Len(), len(redacttest.Canaries))
	}
	for i, e := range logs.All() {
		c := redacttest.Canaries[i]
		fields := e.ContextMap()
		text := e.Message + " " + strings.Join([]string{fields["with"].(string), fields["tool"].(string), fields["s"].(string), fields["error"].(string)}, " ")
		if strings.Contains(text, c.Secret) || strings.Count(text, "[secret:") < 5 || fields["n"] != int64(7) {
			t.Errorf("the %s canary is logged as %q (n=%v)", c.Kind, text, fields["n"])
		}
	}
}

type stringer string

func (s stringer) String() string { return string(s) }
