package approval

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"
)

// SignatureHeader carries a webhook event's signature.
const SignatureHeader = "Gated-Signature"

// DefaultTolerance is how far a signature's timestamp may be from the
// receiver's clock before Verify rejects it as a replay.
const DefaultTolerance = 5 * time.Minute

// Sign returns the SignatureHeader value for body sent at ts, in the style
// of Stripe's: "t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">".
// The timestamp is signed with the body so a captured request cannot be
// replayed later with a fresh one.
func Sign(secret []byte, ts time.Time, body []byte) string {
	t := strconv.FormatInt(ts.Unix(), 10)
	return "t=" + t + ",v1=" + hex.EncodeToString(mac(secret, t, body))
}

func mac(secret []byte, t string, body []byte) []byte {
	h := hmac.New(sha256.New, secret)
	h.Write([]byte(t))
	h.Write([]byte{'.'})
	h.Write(body)
	return h.Sum(nil)
}

// Verify checks a SignatureHeader value against body and the receiver's
// clock now: the timestamp must be within tolerance of now (either way;
// DefaultTolerance when tolerance is not positive) and one of the v1
// signatures must match, compared in constant time. Several v1 entries are
// allowed so a sender can sign with an old and a new secret while the
// secret rotates; other schemes are ignored.
func Verify(secret []byte, header string, body []byte, now time.Time, tolerance time.Duration) error {
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	var t string
	var sigs [][]byte
	for part := range strings.SplitSeq(header, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return errors.New("the signature header is malformed: every part must be key=value")
		}
		switch k {
		case "t":
			if t != "" {
				return errors.New("the signature header has more than one timestamp")
			}
			t = v
		case "v1":
			sig, err := hex.DecodeString(v)
			if err != nil {
				return errors.New("the signature header has a v1 signature that is not hex")
			}
			sigs = append(sigs, sig)
		}
	}
	unix, err := strconv.ParseInt(t, 10, 64)
	if err != nil {
		return errors.New("the signature header has no valid timestamp")
	}
	if len(sigs) == 0 {
		return errors.New("the signature header has no v1 signature")
	}
	if age := now.Sub(time.Unix(unix, 0)); age > tolerance || age < -tolerance {
		return errors.New("the signature timestamp is outside the tolerance: the request is too old or its clock is off")
	}
	want := mac(secret, t, body)
	for _, sig := range sigs {
		if hmac.Equal(sig, want) {
			return nil
		}
	}
	return errors.New("no v1 signature matches the body")
}
