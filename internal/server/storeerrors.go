package server

import (
	"errors"
	"net/http"

	"github.com/gatedhq/gated/internal/approval"
	"github.com/gatedhq/gated/internal/audit"
	"github.com/gatedhq/gated/internal/kill"
	"github.com/gatedhq/gated/internal/route"
)

// storeStatus is the HTTP status of an error from one of gated's stores,
// the one place their errors meet HTTP: the domain packages declare what a
// store may refuse, and anything else is the store failing (503).
func storeStatus(err error) int {
	if aerr, ok := errors.AsType[*approval.Error](err); ok {
		switch aerr.Code {
		case route.CodeApprovalUnknown:
			return http.StatusNotFound
		case route.CodeApprovalSelfApproval, route.CodeApprovalApproverNotAllowed, route.CodeApprovalApproverAnonymous:
			return http.StatusForbidden
		}
		return http.StatusConflict
	}
	switch {
	case errors.Is(err, audit.ErrNotFound), errors.Is(err, kill.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, audit.ErrBadFilter), errors.Is(err, approval.ErrBadFilter):
		return http.StatusBadRequest
	case errors.Is(err, audit.ErrNotYours):
		return http.StatusForbidden
	case errors.Is(err, audit.ErrNotExecuted), errors.Is(err, audit.ErrOutcomeExists):
		return http.StatusConflict
	}
	return http.StatusServiceUnavailable
}

// storeCode names a store's refusal for programs; "" for a failing store,
// whose code the API that called it gives.
func storeCode(err error) string {
	if aerr, ok := errors.AsType[*approval.Error](err); ok {
		return aerr.Code
	}
	switch {
	case errors.Is(err, audit.ErrNotFound):
		return codeDecisionUnknown
	case errors.Is(err, kill.ErrNotFound):
		return codeKillUnknown
	case errors.Is(err, audit.ErrBadFilter), errors.Is(err, approval.ErrBadFilter):
		return codeBadRequest
	case errors.Is(err, audit.ErrNotYours):
		return codeDecisionNotYours
	case errors.Is(err, audit.ErrNotExecuted):
		return codeDecisionNotExecuted
	case errors.Is(err, audit.ErrOutcomeExists):
		return codeOutcomeExists
	}
	return ""
}

// writeStoreError answers a failed store call: a refusal with its status,
// code and sentence; a failing store 503 with the caller's code and
// sentence, since what failed inside it is not the client's to read.
func writeStoreError(w http.ResponseWriter, err error, unavailableCode, unavailable string) {
	status := storeStatus(err)
	if status == http.StatusServiceUnavailable {
		writeCodedError(w, status, unavailableCode, unavailable)
		return
	}
	writeCodedError(w, status, storeCode(err), err.Error())
}
