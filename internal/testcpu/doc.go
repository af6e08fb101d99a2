// Package testcpu is the one way benchmarks read the CPU time the process
// has used, for a cpu-ns/op metric: on a shared machine, CPU per operation
// moves far less than wall time does.
package testcpu
