package server

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/gatedhq/gated/internal/approval"
	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/kill"
	"github.com/gatedhq/gated/internal/route"
)

// Every refusal a store may give keeps its status and code when wrapped;
// anything else is the store failing.
func TestStoreErrorsMapToOneStatusEach(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		err    error
		status int
		code   string
	}{
		{audit.ErrNotFound, http.StatusNotFound, codeDecisionUnknown},
		{audit.ErrBadFilter, http.StatusBadRequest, codeBadRequest},
		{audit.ErrNotYours, http.StatusForbidden, codeDecisionNotYours},
		{audit.ErrNotExecuted, http.StatusConflict, codeDecisionNotExecuted},
		{audit.ErrOutcomeExists, http.StatusConflict, codeOutcomeExists},
		{kill.ErrNotFound, http.StatusNotFound, codeKillUnknown},
		{approval.ErrNotFound, http.StatusNotFound, route.CodeApprovalUnknown},
		{approval.ErrBadFilter, http.StatusBadRequest, codeBadRequest},
		{&approval.Error{Code: route.CodeApprovalSelfApproval}, http.StatusForbidden, route.CodeApprovalSelfApproval},
		{&approval.Error{Code: route.CodeApprovalApproverNotAllowed}, http.StatusForbidden, route.CodeApprovalApproverNotAllowed},
		{&approval.Error{Code: route.CodeApprovalApproverAnonymous}, http.StatusForbidden, route.CodeApprovalApproverAnonymous},
		{&approval.Error{Code: route.CodeApprovalExpired}, http.StatusConflict, route.CodeApprovalExpired},
		{errors.New("connection refused"), http.StatusServiceUnavailable, ""},
	} {
		for _, err := range []error{tc.err, fmt.Errorf("listing: %w", tc.err)} {
			if got := storeStatus(err); got != tc.status {
				t.Errorf("storeStatus(%v) = %d, want %d", err, got, tc.status)
			}
			if got := storeCode(err); got != tc.code {
				t.Errorf("storeCode(%v) = %q, want %q", err, got, tc.code)
			}
		}
	}
}
