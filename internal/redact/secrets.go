package redact

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/maphash"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	ahocorasick "github.com/BobuSumisu/aho-corasick"
	"github.com/spf13/viper"
	"github.com/zricethezav/gitleaks/v8/config"
)

// A Secret is one secret found in a string: the bytes s[Start:End] and the
// kind of secret they look like (a gitleaks rule id such as "github-pat",
// or one of gated's own: see gatedRules).
type Secret struct {
	Start, End int
	Kind       string
	rule       int // breaks ties: gated's own rules first, then gitleaks' in its order
}

// rule is one detector: a regexp whose secret is a capture group (or the
// whole match), kept only above a minimum entropy and outside its
// allowlists, and tried only when one of its keywords is in the string (or,
// for a rule without keywords, when its prefilter says so).
type rule struct {
	kind    string
	re      *regexp.Regexp
	group   int // 0: the first non-empty capture group, else the match
	entropy float64
	allow   []*config.Allowlist
	pre     func(string) bool
	// shape, when set, must also hold of the secret.
	shape func(string) bool
	// need, when set, holds a byte every match has (see required).
	need *byteSet
}

// gatedRules are what gated caught before it used gitleaks' rules, and
// forms gitleaks' rules leave to context gated does not have (a URL's
// password, an Authorization header outside a curl command, an AWS secret
// key assignment). Their keywords are lower-case, like gitleaks'.
// shellMeta is the shell's metacharacters that end a word and may start a
// command, as a regexp class's body.
const shellMeta = ";|&()<>`"

var gatedRules = []struct {
	rule
	keywords []string
}{
	{rule{kind: "sk-api-key", re: regexp.MustCompile(`sk-[A-Za-z0-9_-]{12,}`)}, []string{"sk-"}},
	{rule{kind: "aws-access-key-id", re: regexp.MustCompile(`AKIA[0-9A-Z]{16}`)}, []string{"akia"}},
	{rule{kind: "aws-secret-access-key", re: regexp.MustCompile(`(?i)aws_?secret_?(?:access_?)?key["']?\s*[:=]\s*["']?([A-Za-z0-9/+=]{16,})`)}, []string{"aws_secret", "awssecret"}},
	// A value ends at a shell metacharacter (;|&()<> and the backtick):
	// what follows one may be a command of its own, which masking with the
	// value would hide from an approver. A password holding one shows its
	// rest: a smaller harm than a hidden command. The part before one is
	// masked whatever its length, and a URL's password up to one, or a
	// generated password holding one (Xk9#mP2&vL5q) showed whole.
	{rule{kind: "credential-assignment", re: regexp.MustCompile(`(?i:api_key|secret|token|password)\s*[:=]\s*(?:([^\s` + shellMeta + `]{8,})|([^\s` + shellMeta + `]+)[` + shellMeta + `])`)}, assignmentWords},
	{rule{kind: "url-password", re: regexp.MustCompile(`[A-Za-z][A-Za-z0-9+.-]*://[^\s:/?#@]*:([^\s/?#@` + shellMeta + `]+)[^\s/?#@]*@`)}, []string{"://"}},
	// A credential is not a word: "bearer instruments" is prose.
	{rule{kind: "authorization-header", re: regexp.MustCompile(`(?i)(?:authorization["']?\s*[:=]\s*["']?(?:(?:bearer|basic|token|digest)\s+)?|\bbearer\s+)([A-Za-z0-9._~+/=-]{8,})`), entropy: 2.75, shape: notAWord}, []string{"authorization", "bearer"}},
	// US social security numbers and 13–16 digit card numbers; the digit
	// prefilter stands in for keywords.
	{rule{kind: "ssn-or-card-number", re: numberRE, pre: func(s string) bool { return digitGroup(s) >= 9 }}, nil},
}

// detector is every rule, with one keyword automaton over all of them.
type detector struct {
	rules []rule
	// byKeyword[i] lists the rules keyword i of trie selects.
	trie      *ahocorasick.Trie
	byKeyword [][]int
	// unkeyed are the rules tried on every string (their own prefilter).
	unkeyed []int
	global  []*config.Allowlist
	// fpKey keys the fingerprints in masks, so that a short secret cannot
	// be found again by hashing guesses.
	fpKey []byte
	// kinds are the rules' kinds, which a marker may name.
	kinds map[string]bool
}

// markerRE matches a mask's marker. The text of a marker is not itself a
// secret ("secret:github-pat" reads as an assignment), so that masking
// twice changes nothing; a marker is passed over only when it names a
// known kind, so no secret can hide in one.
var markerRE = regexp.MustCompile(`\[secret:([a-z0-9-]+)(?: (?:number|boolean|null|object|array))? len=\d+ fp=[0-9a-f]{6}\]`)

// The kinds of a value masked whole for where it stands rather than for
// what it looks like (see MaskWhole).
const (
	// KindSensitiveKey marks a value under a key that names a credential.
	KindSensitiveKey = "sensitive-key"
	// KindWriteOnly marks an argument the tool's input schema marks writeOnly.
	KindWriteOnly = "write-only"
)

// rules compiles gitleaks' default rules once, on first use: about 20 ms,
// which a process that never screens a value does not pay.
var rules = sync.OnceValue(func() *detector {
	d, err := newDetector()
	if err != nil {
		// The rules are embedded in the gitleaks module: a failure here is a
		// broken build, caught by every test of this package.
		panic(fmt.Sprintf("redact: gitleaks' default rules do not load: %v", err))
	}
	return d
})

func newDetector() (*detector, error) {
	v := viper.New()
	v.SetConfigType("toml")
	if err := v.ReadConfig(strings.NewReader(config.DefaultConfig)); err != nil {
		return nil, err
	}
	var vc config.ViperConfig
	if err := v.Unmarshal(&vc); err != nil {
		return nil, err
	}
	cfg, err := vc.Translate()
	if err != nil {
		return nil, err
	}
	d := &detector{global: cfg.Allowlists, fpKey: make([]byte, 32),
		kinds: map[string]bool{KindSensitiveKey: true, KindWriteOnly: true}}
	rand.Read(d.fpKey) // never fails (crypto/rand panics instead)
	keywords := map[string]int{}
	var words []string
	add := func(r rule, kws []string) {
		i := len(d.rules)
		r.need = required(r.re.String())
		d.rules = append(d.rules, r)
		d.kinds[r.kind] = true
		if len(kws) == 0 {
			d.unkeyed = append(d.unkeyed, i)
			return
		}
		for _, k := range kws {
			k = strings.ToLower(k)
			n, ok := keywords[k]
			if !ok {
				n = len(words)
				keywords[k] = n
				words = append(words, k)
				d.byKeyword = append(d.byKeyword, nil)
			}
			d.byKeyword[n] = append(d.byKeyword[n], i)
		}
	}
	for _, g := range gatedRules {
		add(g.rule, g.keywords)
	}
	for _, id := range cfg.GetOrderedRules() {
		// Rules on file paths, and the parts of composite rules that are
		// never reported alone, have nothing to say about a value.
		if id.Regex == nil || id.Path != nil || id.SkipReport {
			continue
		}
		r := rule{kind: id.RuleID, re: id.Regex, group: id.SecretGroup, entropy: id.Entropy, allow: id.Allowlists}
		if len(id.Keywords) == 0 {
			r.pre = func(string) bool { return true }
		}
		add(r, id.Keywords)
	}
	d.trie = ahocorasick.NewTrieBuilder().AddStrings(words).Build()
	return d, nil
}

// Secrets returns the secrets in s, in order and not overlapping (where
// two rules overlap, the earlier and then longer finding is kept).
func Secrets(s string) []Secret {
	sc := rules().scan(s, false)
	out := slices.Clone(sc.out)
	scratchPool.Put(sc)
	if len(out) < 2 {
		return out
	}
	slices.SortFunc(out, func(a, b Secret) int {
		if a.Start != b.Start {
			return a.Start - b.Start
		}
		if a.End != b.End {
			return b.End - a.End
		}
		return a.rule - b.rule
	})
	kept := out[:1]
	for _, f := range out[1:] {
		last := &kept[len(kept)-1]
		if f.Start < last.End {
			last.End = max(last.End, f.End)
			continue
		}
		kept = append(kept, f)
	}
	return kept
}

// HasSecret reports whether s contains something that looks like a raw
// secret: any finding of gitleaks' default rules or of gated's own (API
// keys, tokens, credential assignments, a URL's password, an
// Authorization header, a private key, an SSN or a card number).
func HasSecret(s string) bool {
	var slot *atomic.Pointer[string]
	if len(s) <= cleanMaxLen {
		slot = &clean[maphash.String(cleanSeed, s)&(cleanSlots-1)]
		if p := slot.Load(); p != nil && *p == s {
			return false
		}
	}
	sc := rules().scan(s, true)
	found := len(sc.out) > 0
	scratchPool.Put(sc)
	if !found && slot != nil {
		c := strings.Clone(s)
		slot.Store(&c)
	}
	return found
}

// clean remembers short strings found to hold no secret, one per slot
// (direct-mapped: a new string takes its slot from the old). A decision
// screens a small vocabulary over and over (evidence ids, kinds and tiers,
// revisions, codes, token and tool names), and the answer for a string
// never changes while the process runs; remembering it keeps screening
// within the decision path's budget (docs/performance.md). Bounded:
// cleanSlots strings of at most cleanMaxLen bytes (1 MiB). No string that
// holds a secret is kept.
var (
	clean     [cleanSlots]atomic.Pointer[string]
	cleanSeed = maphash.MakeSeed()
)

const (
	cleanSlots  = 4096 // a power of two
	cleanMaxLen = 256
)

// Mask returns s with every secret replaced by a marker that says what was
// there without showing it: "[secret:github-pat len=40 fp=ab12cd]", the
// kind, the length in characters and a short keyed fingerprint (equal
// secrets have equal fingerprints within one gated process). The text
// around a secret is kept, so masking hides nothing else.
func Mask(s string) string {
	found := Secrets(s)
	if len(found) == 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for _, f := range found {
		b.WriteString(s[last:f.Start])
		b.WriteString(rules().marker(f.Kind, s[f.Start:f.End]))
		last = f.End
	}
	b.WriteString(s[last:])
	return b.String()
}

// MaskWhole returns the marker for a value masked whole because of where it
// stands, kind KindSensitiveKey or KindWriteOnly: what Mask would write for
// a secret of that kind, "[secret:sensitive-key len=7 fp=ab12cd]". A value
// that is not a string names its JSON type ("number", "boolean", "null",
// "object" or "array") and is measured and fingerprinted as its JSON text:
// "[secret:write-only object len=42 fp=…]".
func MaskWhole(kind, jsonType, text string) string {
	if jsonType != "" {
		kind += " " + jsonType
	}
	return rules().marker(kind, text)
}

func (d *detector) marker(kind, secret string) string {
	m := hmac.New(sha256.New, d.fpKey)
	m.Write([]byte(secret))
	return fmt.Sprintf("[secret:%s len=%d fp=%s]", kind, utf8.RuneCountInString(secret), hex.EncodeToString(m.Sum(nil)[:3]))
}

// scan finds the secrets in s with each rule whose keyword (or
// prefilter) admits it, stopping at the first when first is set. Keywords
// are matched on the lower-cased string in one pass of the automaton, as
// gitleaks does; a rule whose needed bytes (see required) are not in s is
// not run. The findings are in the returned scratch, which the caller puts
// back in scratchPool.
func (d *detector) scan(s string, first bool) *scratch {
	sc := scratchPool.Get().(*scratch)
	sc.reset(d, s, first)
	if s == "" {
		return sc
	}
	if strings.Contains(s, "[secret:") {
		for _, m := range markerRE.FindAllStringSubmatchIndex(s, -1) {
			if d.kinds[s[m[2]:m[3]]] {
				sc.marks = append(sc.marks, [2]int{m[0], m[1]})
			}
		}
	}
	for _, i := range d.unkeyed {
		if d.rules[i].pre(s) && !sc.try(i) {
			return sc
		}
	}
	d.trie.Walk(sc.lower, sc.walk)
	return sc
}

// scratch is one scan's working memory and findings, pooled: the screening
// runs on every recorded field of every decision.
type scratch struct {
	d       *detector
	s       string
	first   bool
	lower   []byte
	present byteSet
	// tried[i] == gen: rule i ran in this scan (a generation, so that a
	// scan need not clear the slice).
	tried []uint32
	gen   uint32
	// marks are the markers in s (see markerRE): findings inside one are
	// the marker's own text.
	marks [][2]int
	out   []Secret
	walk  ahocorasick.WalkFn // sc.keyword, bound once
}

var scratchPool = sync.Pool{New: func() any {
	sc := new(scratch)
	sc.walk = sc.keyword
	return sc
}}

func (sc *scratch) reset(d *detector, s string, first bool) {
	sc.d, sc.s, sc.first = d, s, first
	if cap(sc.lower) < len(s) {
		sc.lower = make([]byte, len(s))
	}
	sc.lower = sc.lower[:len(s)]
	var present byteSet
	for i := range len(s) {
		c := s[i]
		present[c>>6] |= 1 << (c & 63)
		sc.lower[i] = toLower[c]
	}
	sc.present = present
	if sc.gen++; sc.gen == 0 || len(sc.tried) != len(d.rules) {
		sc.tried, sc.gen = make([]uint32, len(d.rules)), 1
	}
	sc.marks, sc.out = sc.marks[:0], sc.out[:0]
}

// toLower maps each byte to its ASCII lower case.
var toLower = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
		if 'A' <= i && i <= 'Z' {
			t[i] += 'a' - 'A'
		}
	}
	return t
}()

// keyword tries the rules of the keyword the automaton found.
func (sc *scratch) keyword(_, _, pattern int64) bool {
	for _, i := range sc.d.byKeyword[pattern] {
		if !sc.try(i) {
			return false
		}
	}
	return true
}

// try runs rule i once per scan, unless s lacks a byte it needs, and
// reports whether to go on.
func (sc *scratch) try(i int) bool {
	if sc.tried[i] == sc.gen {
		return true
	}
	sc.tried[i] = sc.gen
	r := &sc.d.rules[i]
	if r.need != nil && !r.need.meets(&sc.present) {
		return true
	}
	return r.find(sc, i)
}

// add keeps a finding, unless it is inside a marker, and reports whether
// to go on.
func (sc *scratch) add(f Secret) bool {
	for _, m := range sc.marks {
		if f.Start >= m[0] && f.End <= m[1] {
			return true
		}
	}
	sc.out = append(sc.out, f)
	return !sc.first
}

// find adds r's findings in the scan's string, as gitleaks reports them: the secret is
// the capture group (the first non-empty one unless the rule names one),
// its entropy above the rule's minimum, and neither the global nor the
// rule's allowlists excuse it.
func (r *rule) find(sc *scratch, index int) bool {
	s, global := sc.s, sc.d.global
	for _, m := range r.re.FindAllStringSubmatchIndex(s, -1) {
		start, end := m[0], m[1]
		if r.group > 0 && 2*r.group+1 < len(m) && m[2*r.group] >= 0 {
			start, end = m[2*r.group], m[2*r.group+1]
		} else if r.group == 0 {
			for g := 1; 2*g+1 < len(m); g++ {
				if m[2*g] >= 0 && m[2*g+1] > m[2*g] {
					start, end = m[2*g], m[2*g+1]
					break
				}
			}
		}
		secret := s[start:end]
		if r.kind == privateKeyKind && !pemBlock(secret) {
			// Not a key between its BEGIN and END: mask what could be key
			// material and show the rest, or the block hides a command.
			for _, run := range keyMaterial(secret) {
				if !sc.add(Secret{Start: start + run[0], End: start + run[1], Kind: r.kind, rule: index}) {
					return false
				}
			}
			continue
		}
		if r.entropy != 0 && entropy(secret) <= r.entropy {
			continue
		}
		if r.shape != nil && !r.shape(secret) {
			continue
		}
		if excused(global, secret, s[m[0]:m[1]], s) || excused(r.allow, secret, s[m[0]:m[1]], s) {
			continue
		}
		if !sc.add(Secret{Start: start, End: end, Kind: r.kind, rule: index}) {
			return false
		}
	}
	return true
}

// privateKeyKind is gitleaks' rule for a private-key block. It takes
// anything between "-----BEGIN … PRIVATE KEY-----" and the next
// "KEY-----", so a block is masked whole only when pemBlock holds.
const privateKeyKind = "private-key"

// pemBlock reports whether a private-key block holds only what a PEM block
// holds between its BEGIN and END lines: the RFC 1421 headers of an
// encrypted key (Proc-Type, DEK-Info) or an OpenPGP armor's, then lines of
// base64 of one width (at least minKeyLine) but the last, which may be
// shorter. Lines break at CR, LF or their escapes \r and \n (a key in a
// JSON or shell string); a key flattened into one line breaks at spaces.
func pemBlock(block string) bool {
	_, rest, ok := strings.Cut(block[min(len(block), len("-----BEGIN")):], "-----")
	end := strings.LastIndex(strings.ToUpper(rest), "-----END")
	if !ok || end < 0 {
		return false
	}
	lines := strings.FieldsFunc(lineBreaks.Replace(rest[:end]), func(r rune) bool { return r == '\n' })
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	lines = slices.DeleteFunc(lines, func(l string) bool { return l == "" })
	if len(lines) == 1 {
		lines = strings.Fields(lines[0])
	}
	for len(lines) > 0 {
		name, value, header := strings.Cut(lines[0], ":")
		if !header || !(strings.EqualFold(name, "Proc-Type") && procTypeRE.MatchString(value) ||
			strings.EqualFold(name, "DEK-Info") && dekInfoRE.MatchString(value) ||
			armorHeaders[strings.ToLower(name)] && armorValueRE.MatchString(value)) {
			break
		}
		lines = lines[1:]
	}
	// An OpenPGP armor ends with its checksum, "=" and four base64 digits.
	if n := len(lines); n > 1 && len(lines[n-1]) == 5 && lines[n-1][0] == '=' && base64Line(lines[n-1][1:]) {
		lines = lines[:n-1]
	}
	if len(lines) == 0 {
		return false
	}
	width := len(lines[0])
	if len(lines) == 1 && width < minKeyLine {
		return false // no key is that short
	}
	for i, line := range lines {
		last := i == len(lines)-1
		if !base64Line(line) || !last && (len(line) != width || width < minKeyLine) || last && len(line) > width {
			return false
		}
	}
	return true
}

// minKeyLine is the narrowest a PEM block's lines are (64 characters, 70 in
// OpenSSH's; 40 leaves room for others): a block of short lines is words.
const minKeyLine = 40

var (
	lineBreaks = strings.NewReplacer(`\r`, "\n", `\n`, "\n", "\r", "\n")
	// An OpenPGP armor's headers (RFC 4880 6.2), whose values are free
	// text: one that could end a command and start another is no header.
	armorHeaders = map[string]bool{"version": true, "comment": true, "hash": true, "charset": true, "messageid": true}
	armorValueRE = regexp.MustCompile(`^[^;|&$<>\x60\\]*$`)
	procTypeRE   = regexp.MustCompile(`^\s*\d+,[A-Z-]+$`)
	dekInfoRE    = regexp.MustCompile(`^\s*[A-Z0-9-]+(?:,[0-9A-Fa-f]+)?$`)
)

func base64Line(s string) bool {
	for i := range len(s) {
		if !isBase64(s[i]) {
			return false
		}
	}
	return true
}

func isBase64(c byte) bool {
	return 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '+' || c == '/' || c == '='
}

// minKeyRun is the shortest run of base64 that keyMaterial masks in a
// block that is not a key: shorter runs are words and paths.
const minKeyRun = 16

// keyMaterial returns the [start, end) of each run of at least minKeyRun
// base64 characters in block, a \n or \r escape ending a run.
func keyMaterial(block string) [][2]int {
	var runs [][2]int
	start := -1
	for i := 0; i <= len(block); i++ {
		in := i < len(block) && isBase64(block[i]) &&
			!(i > 0 && block[i-1] == '\\' && (block[i] == 'n' || block[i] == 'r'))
		switch {
		case in && start < 0:
			start = i
		case !in && start >= 0:
			if i-start >= minKeyRun {
				runs = append(runs, [2]int{start, i})
			}
			start = -1
		}
	}
	return runs
}

// excused reports whether an allowlist excuses a finding, as gitleaks
// reads one: regexes on the secret (or the match, or the line, as the
// allowlist says) and stop words in the secret; an allowlist that needs a
// commit or a path never matches a value.
func excused(lists []*config.Allowlist, secret, match, line string) bool {
	for _, a := range lists {
		target := secret
		switch a.RegexTarget {
		case "match":
			target = match
		case "line":
			target = line
		}
		byRegex := len(a.Regexes) > 0 && a.RegexAllowed(target)
		byWord := false
		if len(a.StopWords) > 0 {
			byWord, _ = a.ContainsStopWord(secret)
		}
		if a.MatchCondition == config.AllowlistMatchAnd {
			if len(a.Commits) == 0 && len(a.Paths) == 0 &&
				(len(a.Regexes) == 0 || byRegex) && (len(a.StopWords) == 0 || byWord) {
				return true
			}
			continue
		}
		if byRegex || byWord {
			return true
		}
	}
	return false
}

// entropy is the Shannon entropy of s in bits per byte, as gitleaks
// computes it.
func entropy(s string) float64 {
	var counts [256]int
	for i := range len(s) {
		counts[s[i]]++
	}
	e := 0.0
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / float64(len(s))
			e -= p * math.Log2(p)
		}
	}
	return e
}

// notAWord reports whether s has a character other than a letter.
func notAWord(s string) bool {
	return strings.ContainsFunc(s, func(c rune) bool { return !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') })
}
