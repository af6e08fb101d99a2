# A change freeze no grant can lift: production deploys wait (defer) from
# Friday 15:00 UTC until Monday. Time comes from input.now_ns, never the clock.
package gated.custom.deploys

findings contains {
	"code": "deploy_change_freeze",
	"route": "defer",
	"blocking": true,
	"message": "production deploys are frozen from Friday 15:00 UTC until Monday",
} if {
	input.action_id == "deploy:production"
	frozen
}

frozen if time.weekday(input.now_ns) in {"Saturday", "Sunday"}

frozen if {
	time.weekday(input.now_ns) == "Friday"
	[hour, _, _] := time.clock(input.now_ns)
	hour >= 15
}
