package testgated

import "syscall"

// Kill stops gated at once (SIGKILL), without a graceful shutdown: its
// connections drop and its port closes, as when gated crashes. The test's
// cleanup still reaps the process.
func (s *Server) Kill() {
	_ = s.cmd.Process.Kill()
}

// Hangup sends gated SIGHUP: it reloads its sources.
func (s *Server) Hangup() {
	_ = s.cmd.Process.Signal(syscall.SIGHUP)
}
