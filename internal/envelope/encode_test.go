package envelope_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/catalog"
	"github.com/gatedhq/gated/internal/contract"
	"github.com/gatedhq/gated/internal/envelope"
	"github.com/gatedhq/gated/internal/gate"
	"github.com/gatedhq/gated/internal/policy"
	"github.com/gatedhq/gated/internal/route"
)

// FuzzAppendJSONAgrees holds AppendJSON to encoding/json's reflective
// encoding of the same answer, byte for byte: random answers, with every
// optional part present or not, slices nil, empty or full, and strings
// drawn from the fuzzer's text (escapes, non-ASCII, invalid UTF-8).
func FuzzAppendJSONAgrees(f *testing.F) {
	f.Add(uint64(1), "plain")
	f.Add(uint64(2), "<a href=\"x\">&amp;</a>\\\n\t\u2028\u2029é\x00\x7f")
	f.Add(uint64(3), "\xff\xfe bad \xc3")
	for c := range 256 { // each byte alone in a string: plain or escaped
		f.Add(uint64(4+c), "a"+string([]byte{byte(c)})+"b")
	}
	f.Fuzz(func(t *testing.T, seed uint64, text string) {
		a := randomAnswer(rand.New(rand.NewPCG(seed, 0)), text)
		want, err := json.Marshal(a)
		if err != nil {
			t.Skip(err) // not an answer gated can give
		}
		got, err := a.AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("AppendJSON wrote\n%s\nencoding/json writes\n%s", got, want)
		}
	})
}

// Every answer an example event gets, through the catalog's views too.
func TestAppendJSONAgreesOnExampleDecisions(t *testing.T) {
	t.Parallel()
	cat, err := catalog.Load([]string{"../../examples/catalog"})
	if err != nil {
		t.Fatal(err)
	}
	pol, err := policy.Load([]string{"../../examples/policy"}, cat)
	if err != nil {
		t.Fatal(err)
	}
	now := func() time.Time { return time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC) }
	engines := []*gate.Engine{gate.New(gate.WithClock(now)), gate.New(gate.WithClock(now),
		gate.WithCatalog(func() *catalog.Catalog { return cat }, gate.UnknownDefer, catalog.ArgumentsEnforce),
		gate.WithPolicy(func() *policy.Set { return pol }, policy.NewLimiter()))}
	paths, _ := filepath.Glob("../../examples/events/*.json")
	tour, _ := filepath.Glob("../../examples/events/tour/*.json")
	n := 0
	for _, path := range append(paths, tour...) {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var doc map[string]any
		if err := dec.Decode(&doc); err != nil {
			t.Fatal(err)
		}
		for _, e := range engines {
			for range 2 { // the second time, the action's text is remembered
				a := envelope.From(e.Decide(context.Background(), gate.Request{Event: doc, Principals: []string{"bot://support-agent"}}))
				want, err := json.Marshal(a)
				if err != nil {
					t.Fatal(err)
				}
				got, err := a.AppendJSON(nil)
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("%s: AppendJSON wrote (%v)\n%s\nencoding/json writes\n%s", path, err, got, want)
				}
				if a.Action != nil {
					n++
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no example decision named a catalog action")
	}
}

func randomAnswer(r *rand.Rand, text string) *envelope.Answer {
	str := func() string {
		if r.IntN(3) == 0 || text == "" {
			return []string{"", "accept", "sha256:ab", "Proceed only within the checked scope."}[r.IntN(4)]
		}
		i := r.IntN(len(text) + 1)
		return text[i:] + text[:i]
	}
	strs := func() []string {
		switch r.IntN(3) {
		case 0:
			return nil
		case 1:
			return []string{}
		}
		s := make([]string, 1+r.IntN(3))
		for i := range s {
			s[i] = str()
		}
		return s
	}
	rt := func() route.Route {
		return []route.Route{route.Accept, route.Ask, route.Defer, route.Refuse}[r.IntN(4)]
	}
	auth := func() route.AuthState { return route.AuthState(r.IntN(6)) }
	num := func() float64 {
		return []float64{0, math.Copysign(0, -1), 0.95, 0.72, 0.45, 0.15, 0.75, 1e-7, 1.5e21, -2.5e-9, 123456789, r.Float64(),
			math.Float64frombits(r.Uint64())}[r.IntN(13)]
	}
	maybe := func() bool { return r.IntN(2) == 0 }
	a := &envelope.Answer{
		DecisionID: str(), Route: rt(), Execute: maybe(), Shadow: maybe(), ShadowIgnored: maybe(),
		ContractVersion: str(), RequestID: str(), Revisions: gate.Revisions{Catalog: str(), Policy: str(), Commits: strs()},
		ToolName: str(), ToolCategory: str(), AuthorizationState: str(), RiskDomain: str(), GateDecision: str(),
		RecommendedAction: rt(), CandidateGate: str(), AANARoute: rt(),
		AIX: envelope.AIX{Version: str(), Score: num(), Components: envelope.AIXComponents{P: num(), F: num(), C: num()},
			Decision: rt(), HardBlockers: strs()},
		HardBlockers: strs(), Reasons: strs(), EvidenceRefCount: r.IntN(300) - 10,
		ArchitectureDecision: envelope.ArchitectureDecision{ArchitectureClaim: str(), Route: rt(), GateDecision: str(),
			CandidateGate: str(), AIXScore: num(), AIXDecision: rt(), HardBlockers: strs(), MissingEvidence: strs(),
			EvidenceRefs:       envelope.EvidenceUse{Used: strs(), Missing: strs(), Contradictory: strs()},
			AuthorizationState: str(), ToolName: str(), ToolCategory: str(), RiskDomain: str(), RecoverySuggestion: str()},
		ExecutionPolicy: envelope.ExecutionPolicy{Mode: str(), AANAAllowsExecution: maybe(), ExecutionAllowed: maybe(),
			FailClosed: maybe(), Reason: str(), RequiredRoute: rt(),
			Observed: envelope.Observed{GateDecision: str(), RecommendedAction: rt(), ArchitectureRoute: rt(),
				HardBlockerCount: r.IntN(20), ValidationErrorCount: r.IntN(20)}},
	}
	if maybe() {
		a.ExecutionPolicy.RouteTable = json.RawMessage(`{"accept":{"description":"x","execution_allowed":true,"next_step":"y"}}`)
	}
	if maybe() {
		rr := rt()
		a.RuntimeRecommendedRoute = &rr
	}
	if n := r.IntN(4); n > 0 || maybe() {
		a.Findings = make([]route.Finding, n)
		for i := range a.Findings {
			a.Findings[i] = route.Finding{Source: route.Source(str()), Code: str(), Route: rt(), Blocking: maybe(), Message: str()}
		}
	}
	if maybe() {
		a.Approval = &gate.PendingApproval{ID: str(), Status: "pending", ExpiresAt: time.Unix(r.Int64N(1<<32), 0).UTC(),
			Digest: str(), URL: str(), EvidenceRef: route.EvidenceRef{SourceID: str(), Kind: str(), Supports: strs()}}
	}
	if maybe() {
		a.Action = &catalog.View{ToolID: str(), ActionID: str(), RiskLevel: r.IntN(4), Approval: str(), Mutates: strs(),
			Aliases: strs(), Source: str(), Format: str(), InputSchema: maybe()}
	}
	if maybe() {
		a.Policy = &policy.Block{Decision: str(), Reason: str(), Principal: str(), Action: str(), EvaluatedAt: str()}
		if maybe() {
			a.Policy.Grant = &policy.GrantRef{PolicyID: str(), Index: r.IntN(1000)}
		}
		if n := r.IntN(3); n > 0 || maybe() {
			a.Policy.PolicyChain = make([]policy.ChainEntry, n)
			for i := range a.Policy.PolicyChain {
				a.Policy.PolicyChain[i] = policy.ChainEntry{Source: policy.ChainSource{File: str()}, ID: str(), Layer: i}
			}
		}
	}
	if maybe() {
		a.Audit = &audit.Result{Sink: str(), Status: str()}
	}
	if maybe() {
		in := &contract.Integrity{EvidenceSafetyVersion: str(), CheckedRefCount: r.IntN(5), UsedSourceIDs: strs(),
			MissingEvidenceSourceIDs: strs(), ContradictoryEvidenceSourceIDs: strs(), CitationSourceIDs: strs(),
			ProvenanceSourceIDs: strs(), ErrorCodes: strs(), WarningCodes: strs(), HasErrors: maybe(), HasWarnings: maybe()}
		if n := r.IntN(3); n > 0 || maybe() {
			in.Issues = make([]contract.Issue, n)
			for i := range in.Issues {
				in.Issues[i] = contract.Issue{Level: str(), Code: str(), Path: str(), Message: str()}
			}
		}
		a.EvidenceIntegrity = in
	}
	if maybe() {
		rep := &contract.AuthReport{DeclaredState: auth(), EvidenceSupportedState: auth(), EffectiveState: auth(), Downgraded: maybe()}
		if n := r.IntN(3); n > 0 || maybe() {
			rep.Support = make([]contract.Support, n)
			for i := range rep.Support {
				rep.Support[i] = contract.Support{SourceID: str(), State: auth()}
			}
		}
		a.AuthorizationReport = rep
	}
	if maybe() {
		a.ValidationErrors = []contract.ValidationError{{Path: str(), Keyword: str(), Message: str()}}
	}
	if maybe() {
		a.ArgumentErrors = []catalog.ArgumentError{{Path: str(), Keyword: str(), Message: str()}}
	}
	return a
}

// A field added to the answer and not to AppendJSON is caught here: every
// exported field of the answer, at every depth, is set, and the two
// encodings must still agree.
func TestAppendJSONWritesEveryField(t *testing.T) {
	t.Parallel()
	var a envelope.Answer
	fill(reflect.ValueOf(&a).Elem(), 0)
	want, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	got, err := a.AppendJSON(nil)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("AppendJSON wrote (%v)\n%s\nencoding/json writes\n%s", err, got, want)
	}
}

// fill sets v to a value that is not its zero value, as far as encoding/json
// can write it.
func fill(v reflect.Value, depth int) {
	if depth > 6 {
		return
	}
	if v.Type() == reflect.TypeFor[json.RawMessage]() {
		v.SetBytes([]byte(`{"k":[1,"v"]}`))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("s<&>\u00e9")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(0.5)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem(), depth+1)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), depth+1)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			v.Set(reflect.ValueOf(time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i), depth+1)
			}
		}
	}
}
