package route

import "strings"

// The codes of the findings gated itself produces, each defined here once:
// every package names them through these constants, docs/codes.md is
// tested against the registry below, and a catalog rule may not take one
// (Reserved). A constant's name is its code in CamelCase.
const (
	// The contract's category rules.
	CodePublicReadIdentityBoundMisclassified     = "public_read_identity_bound_misclassified"
	CodePrivateReadNotAuthenticated              = "private_read_not_authenticated"
	CodeHighRiskWriteMissingExplicitConfirmation = "high_risk_write_missing_explicit_confirmation"
	CodeWriteMissingExplicitConfirmation         = "write_missing_explicit_confirmation"
	CodeWriteMissingValidationOrConfirmation     = "write_missing_validation_or_confirmation"
	CodeWriteMissingAuthorization                = "write_missing_authorization"
	CodeUnknownToolCategory                      = "unknown_tool_category"
	CodeAuthorizationStateNotSupportedByEvidence = "authorization_state_not_supported_by_evidence"

	// The contract's evidence checks.
	CodeEvidenceMissingAuthorization    = "evidence_missing_authorization"
	CodeMissingEvidenceRefs             = "missing_evidence_refs"
	CodeEvidenceSecretLeak              = "evidence_secret_leak"
	CodeEvidencePIILeak                 = "evidence_pii_leak"
	CodeUnsafeRedactionStatus           = "unsafe_redaction_status"
	CodeStaleEvidence                   = "stale_evidence"
	CodeInvalidRetrievedAt              = "invalid_retrieved_at"
	CodeMissingSourceID                 = "missing_source_id"
	CodeContradictoryEvidence           = "contradictory_evidence"
	CodeEvidenceMarksMissingInformation = "evidence_marks_missing_information"

	// The contract's preparation of an event.
	CodeContractNormalizationFailed = "contract_normalization_failed"
	CodeSchemaValidationFailed      = "schema_validation_failed"
	CodeArgumentNumberOutOfRange    = "argument_number_out_of_range"

	// The runtime's own recommended route.
	CodeRuntimeRefusal          = "runtime_refusal"
	CodeRuntimeRecommendedAsk   = "runtime_recommended_ask"
	CodeRuntimeRecommendedDefer = "runtime_recommended_defer"

	// The catalog's floors and rules.
	CodeToolCategoryUnderstated                    = "tool_category_understated"
	CodeRiskLevelRequiresConfirmation              = "risk_level_requires_confirmation"
	CodeIrreversibleActionRequiresVerifiedApproval = "irreversible_action_requires_verified_approval"
	CodeApprovalRequired                           = "approval_required"
	CodeApprovalPolicyUnresolvable                 = "approval_policy_unresolvable"
	CodeRiskTierNeverAuto                          = "risk_tier_never_auto"
	CodeArgumentsInvalid                           = "arguments_invalid"
	CodeShellCommandDynamic                        = "shell_command_dynamic"
	CodeToolNotInCatalog                           = "tool_not_in_catalog"

	// The policy.
	CodePolicyNoGrant            = "policy_no_grant"
	CodePolicyTTLExpired         = "policy_ttl_expired"
	CodePolicyExplicitRevoke     = "policy_explicit_revoke"
	CodePolicyConditionFailed    = "policy_condition_failed"
	CodePolicyRequirementFailed  = "policy_requirement_failed" // + ":<kind>"
	CodePolicyLimitExceeded      = "policy_limit_exceeded"
	CodeRateLimitUnavailable     = "rate_limit_unavailable"
	CodePolicyEvaluationError    = "policy_evaluation_error"
	CodePolicyBudgetExceeded     = "policy_budget_exceeded"
	CodePolicyApprovalNotGranted = "policy_approval_not_granted"

	// Approvals: a retry's approval ref, and deciding an approval.
	CodeApprovalRefAmbiguous       = "approval_ref_ambiguous"
	CodeApprovalUnavailable        = "approval_unavailable"
	CodeApprovalUnknown            = "approval_unknown"
	CodeApprovalPending            = "approval_pending"
	CodeApprovalDecided            = "approval_decided"
	CodeApprovalDenied             = "approval_denied"
	CodeApprovalExpired            = "approval_expired"
	CodeApprovalUsed               = "approval_used"
	CodeApprovalDigestMismatch     = "approval_digest_mismatch"
	CodeApprovalRequesterMismatch  = "approval_requester_mismatch"
	CodeApprovalApproverAnonymous  = "approval_approver_anonymous"
	CodeApprovalSelfApproval       = "approval_self_approval"
	CodeApprovalApproverNotAllowed = "approval_approver_not_allowed"

	// gated's own failures.
	CodeKillSwitch            = "kill_switch"
	CodeKillSwitchUnavailable = "kill_switch_unavailable"
	CodeAuditUnavailable      = "audit_unavailable"
	CodeInternalError         = "internal_error"

	// The Action API's plan rules.
	CodePlanRiskTierNeverAuto             = "plan_risk_tier_never_auto"
	CodePlanRiskTierRequiresApproval      = "plan_risk_tier_requires_approval"
	CodePlanRollbackRequired              = "plan_rollback_required"
	CodePlanVerificationRequired          = "plan_verification_required"
	CodePlanVerificationCommandNotAllowed = "plan_verification_command_not_allowed"
	CodePlanPathOutsideWorkspace          = "plan_path_outside_workspace"
	CodePlanPathForbidden                 = "plan_path_forbidden"
	CodePlanPathOutOfScope                = "plan_path_out_of_scope"
	CodePlanPathInvalid                   = "plan_path_invalid"
	CodePlanScopeInvalid                  = "plan_scope_invalid"
)

// Owner names the part of gated that gives a code its meaning.
type Owner string

const (
	OwnerContract  Owner = "contract"
	OwnerCatalog   Owner = "catalog"
	OwnerPolicy    Owner = "policy"
	OwnerApproval  Owner = "approval"
	OwnerKill      Owner = "kill"
	OwnerAudit     Owner = "audit"
	OwnerGate      Owner = "gate"
	OwnerActionAPI Owner = "action_api"
)

// codeInfo is one registered code: who owns it and what it means.
type codeInfo struct {
	Code    string
	Owner   Owner
	Meaning string
}

// codes is the registry, in the order docs/codes.md lists it.
var codes = [...]codeInfo{
	{CodePublicReadIdentityBoundMisclassified, OwnerContract, "a public read whose arguments name a person or account (an identity key such as customer_id) is routed as a private read (ask)"},
	{CodePrivateReadNotAuthenticated, OwnerContract, "a private read below authorization_state authenticated (ask; defer at none)"},
	{CodeHighRiskWriteMissingExplicitConfirmation, OwnerContract, "a high-risk write not confirmed (ask; defer at none)"},
	{CodeWriteMissingExplicitConfirmation, OwnerContract, "a write not confirmed (ask; defer for a high-risk write at none)"},
	{CodeWriteMissingValidationOrConfirmation, OwnerContract, "a write at user_claimed or authenticated: neither validated nor confirmed (ask)"},
	{CodeWriteMissingAuthorization, OwnerContract, "a write at authorization_state none (defer)"},
	{CodeUnknownToolCategory, OwnerContract, "a tool of category unknown must be classified or reviewed first (defer)"},
	{CodeAuthorizationStateNotSupportedByEvidence, OwnerContract, "the evidence refs support less than the declared authorization_state, which is lowered (ask)"},
	{CodeEvidenceMissingAuthorization, OwnerContract, "an evidence ref says authorization is missing (defer)"},
	{CodeMissingEvidenceRefs, OwnerContract, "a private read, write or unknown tool without evidence refs (defer)"},
	{CodeEvidenceSecretLeak, OwnerContract, "an evidence ref carries what looks like a raw secret (refuse)"},
	{CodeEvidencePIILeak, OwnerContract, "an evidence ref that is not redacted carries an e-mail address or phone number (refuse)"},
	{CodeUnsafeRedactionStatus, OwnerContract, "an evidence ref is marked sensitive (refuse)"},
	{CodeStaleEvidence, OwnerContract, "an evidence ref is older than 168 hours or marked stale (defer)"},
	{CodeInvalidRetrievedAt, OwnerContract, "an evidence timestamp cannot be parsed (defer)"},
	{CodeMissingSourceID, OwnerContract, "an evidence ref has no source_id (defer)"},
	{CodeContradictoryEvidence, OwnerContract, "an evidence ref contradicts the action (defer)"},
	{CodeEvidenceMarksMissingInformation, OwnerContract, "an evidence ref says information is missing (defer)"},
	{CodeContractNormalizationFailed, OwnerContract, "the event cannot be normalised (refuse)"},
	{CodeSchemaValidationFailed, OwnerContract, "the event fails the contract's JSON Schema (refuse)"},
	{CodeArgumentNumberOutOfRange, OwnerContract, "the event holds a number gated will not reason about (refuse)"},
	{CodeRuntimeRefusal, OwnerContract, "the runtime itself recommended refuse"},
	{CodeRuntimeRecommendedAsk, OwnerContract, "the event's recommended route is ask: as the runtime sent it, or an accept the contract lowered (the finding's source says which); not a blocker, it only raises the route"},
	{CodeRuntimeRecommendedDefer, OwnerContract, "the event's recommended route is defer: as the runtime sent it, or an accept the contract lowered (the finding's source says which); not a blocker, it only raises the route"},
	{CodeToolCategoryUnderstated, OwnerCatalog, "a catalogued write is declared as a read; it is routed as a write (ask)"},
	{CodeRiskLevelRequiresConfirmation, OwnerCatalog, "risk_level 2 and not confirmed (ask; defer at none)"},
	{CodeIrreversibleActionRequiresVerifiedApproval, OwnerCatalog, "risk_level 3 without confirmation and a verified approval ref (defer)"},
	{CodeApprovalRequired, OwnerCatalog, "the view's approval rule asks for one and the call is not confirmed (ask)"},
	{CodeApprovalPolicyUnresolvable, OwnerCatalog, "approval: policy:<ref> names no loaded policy, or gated runs without one (defer)"},
	{CodeRiskTierNeverAuto, OwnerCatalog, "action.json tier R4, or a missing or unknown tier (refuse)"},
	{CodeArgumentsInvalid, OwnerCatalog, "proposed_arguments fail the view's input schema (refuse; non-blocking with --argument-validation warn)"},
	{CodeShellCommandDynamic, OwnerCatalog, "a command line gated cannot read whole, so it cannot tell what it runs"},
	{CodeToolNotInCatalog, OwnerCatalog, "no loaded catalog describes the tool (defer or refuse, as --unknown-tools says)"},
	{CodePolicyNoGrant, OwnerPolicy, "no grant names the action and a principal (refuse)"},
	{CodePolicyTTLExpired, OwnerPolicy, "the best candidate grant is outside its TTL (refuse)"},
	{CodePolicyExplicitRevoke, OwnerPolicy, "the best candidate grant is revoked (refuse)"},
	{CodePolicyConditionFailed, OwnerPolicy, "the best candidate grant's conditions fail (refuse)"},
	{CodePolicyRequirementFailed, OwnerPolicy, "a grant's requirement is not met; the code ends in :<kind> (ask for mfa-recent, else defer)"},
	{CodePolicyLimitExceeded, OwnerPolicy, "a rate limit is exceeded (defer)"},
	{CodeRateLimitUnavailable, OwnerPolicy, "the shared limit store cannot be reached and limits fail closed (refuse)"},
	{CodePolicyEvaluationError, OwnerPolicy, "the policy evaluation failed (refuse)"},
	{CodePolicyBudgetExceeded, OwnerPolicy, "the policy evaluation ran out of its time, step or memory budget (refuse)"},
	{CodePolicyApprovalNotGranted, OwnerPolicy, "the approval policy a catalog view names does not allow the call (defer)"},
	{CodeApprovalRefAmbiguous, OwnerApproval, "a retry carries more than one gated approval ref (refuse)"},
	{CodeApprovalUnavailable, OwnerApproval, "the approval store cannot be read or written, so an approval cannot allow the call (refuse)"},
	{CodeApprovalUnknown, OwnerApproval, "there is no such approval (refuse)"},
	{CodeApprovalPending, OwnerApproval, "the approval is still waiting for a decision (refuse)"},
	{CodeApprovalDecided, OwnerApproval, "deciding an approval that was decided already; not a blocker"},
	{CodeApprovalDenied, OwnerApproval, "the approval was denied (refuse)"},
	{CodeApprovalExpired, OwnerApproval, "the approval has expired (refuse)"},
	{CodeApprovalUsed, OwnerApproval, "the approval was used already: it is good for one call (refuse)"},
	{CodeApprovalDigestMismatch, OwnerApproval, "the approval was given for a different call (refuse)"},
	{CodeApprovalRequesterMismatch, OwnerApproval, "the approval was asked for by another requester (refuse)"},
	{CodeApprovalApproverAnonymous, OwnerApproval, "deciding an approval without a named token; not a blocker"},
	{CodeApprovalSelfApproval, OwnerApproval, "the requester deciding its own approval; not a blocker"},
	{CodeApprovalApproverNotAllowed, OwnerApproval, "an approver holding none of the required principals: refused when deciding, and a retry whose approver the catalog no longer names (refuse)"},
	{CodeKillSwitch, OwnerKill, "a kill in force matches the call (refuse)"},
	{CodeKillSwitchUnavailable, OwnerKill, "the kill list cannot be confirmed current (refuse)"},
	{CodeAuditUnavailable, OwnerAudit, "the decision could not be recorded (refuse)"},
	{CodeInternalError, OwnerGate, "the decision failed inside gated (refuse)"},
	{CodePlanRiskTierNeverAuto, OwnerActionAPI, "the plan's applied tier is R4, missing or unknown (refuse)"},
	{CodePlanRiskTierRequiresApproval, OwnerActionAPI, "the plan's applied tier is R3 and carries no approval gated granted for this call (ask)"},
	{CodePlanRollbackRequired, OwnerActionAPI, "a write-like plan of tier R2 or higher has no rollbackPlan (refuse)"},
	{CodePlanVerificationRequired, OwnerActionAPI, "a write-like plan of tier R2 or higher does not require verification (refuse)"},
	{CodePlanVerificationCommandNotAllowed, OwnerActionAPI, "a verification command is not one the action.json permits (refuse)"},
	{CodePlanPathOutsideWorkspace, OwnerActionAPI, "a scope path leads outside the workspace (refuse)"},
	{CodePlanPathForbidden, OwnerActionAPI, "a scope path is one the action.json forbids (refuse)"},
	{CodePlanPathOutOfScope, OwnerActionAPI, "a scope path is outside the action.json's allowed paths (refuse)"},
	{CodePlanPathInvalid, OwnerActionAPI, "a scope path cannot be read as a path (refuse)"},
	{CodePlanScopeInvalid, OwnerActionAPI, "the plan's scope is malformed (refuse)"},
}

var reserved = func() map[string]bool {
	m := make(map[string]bool, len(codes))
	for _, c := range codes {
		m[c.Code] = true
	}
	return m
}()

// Reserved reports whether code is one gated gives its own meaning to: a
// catalog rule may not take it, or an approval or a proxy matching the
// code would take a rule's finding for gated's.
func Reserved(code string) bool {
	return reserved[code] || strings.HasPrefix(code, CodePolicyRequirementFailed+":")
}

var owners = func() map[string]Owner {
	m := make(map[string]Owner, len(codes))
	for _, c := range codes {
		m[c.Code] = c.Owner
	}
	return m
}()

// OwnerOf names the owner of a code gated gives its own meaning to (a
// policy requirement's code is the policy's); ok is false for any other,
// such as a catalog rule's own code.
func OwnerOf(code string) (o Owner, ok bool) {
	if strings.HasPrefix(code, CodePolicyRequirementFailed+":") {
		return OwnerPolicy, true
	}
	o, ok = owners[code]
	return o, ok
}
