// Package approval is the storage-free core of gated's approvals: an ask
// that a person can answer. It binds an approval to the exact call it
// approves (Digest), holds the rules for deciding and using one (CanDecide,
// CheckUse), builds the masked argument preview an approver sees (Preview),
// and signs and delivers webhook notifications (Sign, Verify, Notifier).
//
// Storage, HTTP handlers and the decision path live elsewhere and call in
// here, so every rule is a pure function of its inputs and the time given.
package approval
