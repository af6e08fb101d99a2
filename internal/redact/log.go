package redact

import (
	"fmt"

	"go.uber.org/zap/zapcore"
)

// LogCore wraps a zap core so that no secret reaches the log: the message
// and every string, stringer and error field pass through Mask. The log
// sites already log names and codes only; this catches the name or error
// text that carries a secret anyway (a tool named "ghp_…", a driver error
// quoting a connection string).
func LogCore(c zapcore.Core) zapcore.Core { return maskingCore{c} }

type maskingCore struct{ zapcore.Core }

func (c maskingCore) With(fields []zapcore.Field) zapcore.Core {
	return maskingCore{c.Core.With(maskFields(fields))}
}

func (c maskingCore) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if c.Enabled(e.Level) {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c maskingCore) Write(e zapcore.Entry, fields []zapcore.Field) error {
	e.Message = Mask(e.Message)
	return c.Core.Write(e, maskFields(fields))
}

// maskFields returns fields with their text masked, copying only when a
// field changes.
func maskFields(fields []zapcore.Field) []zapcore.Field {
	out := fields
	for i, f := range fields {
		var text string
		switch f.Type {
		case zapcore.StringType:
			text = f.String
		case zapcore.StringerType:
			text = fmt.Sprint(f.Interface)
		case zapcore.ErrorType:
			err, _ := f.Interface.(error)
			if err == nil {
				continue
			}
			text = err.Error()
		default:
			continue
		}
		masked := Mask(text)
		if masked == text && f.Type == zapcore.StringType {
			continue
		}
		if &out[0] == &fields[0] {
			out = append([]zapcore.Field(nil), fields...)
		}
		out[i] = zapcore.Field{Key: f.Key, Type: zapcore.StringType, String: masked}
	}
	return out
}
