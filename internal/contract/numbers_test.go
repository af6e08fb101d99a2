package contract

import (
	"encoding/json"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"testing"
)

// Every double, as Go, JavaScript-style shortest and exponent forms write
// it, is in range.
func TestEveryDoubleInRange(t *testing.T) {
	t.Parallel()
	doubles := []float64{0, math.SmallestNonzeroFloat64, math.MaxFloat64, -math.MaxFloat64, 2.2250738585072014e-308,
		1e-7, 1e21, 1e20 + 1, 0.1, 1.0 / 3, math.Pi, 1 << 53, math.MaxInt64, math.MaxUint64}
	r := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		if f := math.Float64frombits(r.Uint64()); !math.IsNaN(f) && !math.IsInf(f, 0) {
			doubles = append(doubles, f)
		}
	}
	for _, f := range doubles {
		enc, _ := json.Marshal(f)
		for _, s := range []string{string(enc), strconv.FormatFloat(f, 'g', -1, 64), strconv.FormatFloat(f, 'e', -1, 64),
			strconv.FormatFloat(f, 'E', 16, 64), strconv.FormatFloat(f, 'g', 17, 64)} {
			if !numberInRange(s) {
				t.Fatalf("%s (%v) out of range", s, f)
			}
		}
	}
	for _, n := range []int64{0, -1, math.MinInt64, math.MaxInt64} {
		if s := strconv.FormatInt(n, 10); !numberInRange(s) {
			t.Fatalf("%s out of range", s)
		}
	}
}

// A number in range is a rational of bounded size, whatever its spelling:
// at most 40 digits times 10^400 (1,462 bits) over at most 10^400.
func FuzzNumberInRange(f *testing.F) {
	for _, s := range []string{"0", "-0.0", "1e400", "1e-400", "1E+401", "0.1e401", "1.5e-400", "0." + "0000000000000000000001",
		"1234567890123456789012345678901234567890e-400", "1e0000000000000000000000000001", "1e99999999999999999999", "01", "1.", ".5", "-", "1e", "+1", "0x1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !numberInRange(s) {
			return
		}
		if !json.Valid([]byte(s)) {
			// Only decoded JSON numbers reach the check; a lenient answer on
			// other text must still be cheap.
			if _, err := strconv.ParseFloat(s, 64); err != nil {
				return
			}
		}
		var r big.Rat
		if _, ok := r.SetString(s); !ok {
			return
		}
		if r.Num().BitLen() > 1463 || r.Denom().BitLen() > 1330 {
			t.Errorf("%s is in range but is a rational of %d/%d bits", s, r.Num().BitLen(), r.Denom().BitLen())
		}
	})
}
