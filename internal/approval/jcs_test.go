package approval

import (
	"encoding/binary"
	"encoding/hex"
	"math"
	"strconv"
	"testing"

	"github.com/gowebpki/jcs"
)

// The digest rests on github.com/gowebpki/jcs; these are RFC 8785's own
// examples, so a regression in the library fails here first.

// RFC 8785 section 3.2.2 (primitive serialisation), sorted as section 3.2.3
// requires.
func TestJCSPrimitives(t *testing.T) {
	in := `{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}`
	want := `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`
	transformIs(t, in, want)
}

// RFC 8785 section 3.2.3: properties sort by their UTF-16 code units, so
// the emoji (a surrogate pair, 0xD83D…) sorts before U+FB33 although its
// code point is larger; U+0080 is not escaped (only U+0000–U+001F are).
func TestJCSPropertySorting(t *testing.T) {
	in := `{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis"
}`
	want := "{" +
		`"\r":"Carriage Return",` +
		`"1":"One",` +
		"\"\u0080\":\"Control\"," +
		"\"\u00f6\":\"Latin Small Letter O With Diaeresis\"," +
		"\"\u20ac\":\"Euro Sign\"," +
		"\"\U0001F600\":\"Emoji: Grinning Face\"," +
		"\"\ufb33\":\"Hebrew Letter Dalet With Dagesh\"" +
		"}"
	transformIs(t, in, want)
}

// Nested containers: members sort by key as strings ("1" < "10" < "d"),
// arrays keep their order.
func TestJCSNesting(t *testing.T) {
	transformIs(t, `[56, {"d": true, "10": null, "1": [ ]}]`, `[56,{"1":[],"10":null,"d":true}]`)
}

// RFC 8785 section 3.2.2.3 and appendix B: numbers serialise as ECMAScript's
// Number.prototype.toString.
func TestJCSNumbers(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"1E30", "1e+30"},
		{"4.50", "4.5"},
		{"2e-3", "0.002"},
		{"0.000001", "0.000001"}, // still plain: the exponent form starts below 1e-6
		{"0.0000001", "1e-7"},
		{"1E21", "1e+21"},
		{"100000000000000000000", "100000000000000000000"},
		{"-0", "0"},
		{"1.0", "1"},
	} {
		transformIs(t, c.in, c.want)
	}
}

// RFC 8785 appendix B: IEEE 754 doubles (as hex) and their serialisation.
func TestJCSAppendixB(t *testing.T) {
	for _, c := range []struct{ hex, want string }{
		{"0000000000000000", "0"},
		{"8000000000000000", "0"},
		{"0000000000000001", "5e-324"},
		{"8000000000000001", "-5e-324"},
		{"7fefffffffffffff", "1.7976931348623157e+308"},
		{"ffefffffffffffff", "-1.7976931348623157e+308"},
		{"4340000000000000", "9007199254740992"},
		{"c340000000000000", "-9007199254740992"},
		{"4430000000000000", "295147905179352830000"},
		{"44b52d02c7e14af5", "9.999999999999997e+22"},
		{"44b52d02c7e14af6", "1e+23"},
		{"44b52d02c7e14af7", "1.0000000000000001e+23"},
		{"444b1ae4d6e2ef4e", "999999999999999700000"},
		{"444b1ae4d6e2ef4f", "999999999999999900000"},
		{"444b1ae4d6e2ef50", "1e+21"},
		{"3eb0c6f7a0b5ed8c", "9.999999999999997e-7"},
		{"3eb0c6f7a0b5ed8d", "0.000001"},
		{"41b3de4355555553", "333333333.3333332"},
		{"41b3de4355555554", "333333333.33333325"},
		{"41b3de4355555555", "333333333.3333333"},
		{"41b3de4355555556", "333333333.3333334"},
		{"41b3de4355555557", "333333333.33333343"},
		{"becbf647612f3696", "-0.0000033333333333333333"},
		{"43143ff3c1cb0959", "1424953923781206.2"},
	} {
		b, err := hex.DecodeString(c.hex)
		if err != nil {
			t.Fatal(err)
		}
		f := math.Float64frombits(binary.BigEndian.Uint64(b))
		// Go's shortest round-trip form reads back as the same double.
		transformIs(t, strconv.FormatFloat(f, 'g', -1, 64), c.want)
	}
}

// NaN and infinities have no JSON form; a literal too large for a double
// rounds to infinity and is refused.
func TestJCSRejectsInfinity(t *testing.T) {
	if out, err := jcs.Transform([]byte("1e400")); err == nil {
		t.Fatalf("1e400 canonicalised as %s, want an error", out)
	}
}

func transformIs(t *testing.T, in, want string) {
	t.Helper()
	got, err := jcs.Transform([]byte(in))
	if err != nil {
		t.Fatalf("Transform(%s): %v", in, err)
	}
	if string(got) != want {
		t.Fatalf("Transform(%s)\n got %s\nwant %s", in, got, want)
	}
}
