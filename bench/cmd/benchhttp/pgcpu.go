package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The rows whose gated writes its audit to the local PostgreSQL share the
// cores with it, so the harness measures the cluster's CPU beside gated's.
//
// The cluster is found from the harness's own connection: its backend's
// parent is the postmaster (postmasterOf). Over a window the harness reads
// the cluster's CPU so far (clusterCPU) at both ends and takes the
// difference. That total is the postmaster's own utime+stime, plus its
// cutime+cstime (the CPU of every child it has reaped: backends that
// ended, before or during the window), plus the utime+stime of every child
// alive at the moment of reading. A backend that starts and ends inside the
// window is thus counted through cutime, one that lives across an end
// through its own stat: no pid needs to be followed from one reading to the
// next. The one error is a child that exits between the postmaster's line
// and its own being read, which is missed by that reading (at most one
// short-lived backend's CPU, at either end). The figure is the whole
// cluster's: other databases on it serving other work are counted too.

// procStat is what the harness reads from one /proc/<pid>/stat line.
type procStat struct {
	comm        string
	ppid        int
	cpu         time.Duration // utime+stime
	childrenCPU time.Duration // cutime+cstime: reaped children's
}

// parseStat reads a /proc/<pid>/stat line. The command name (field 2) may
// hold spaces and parentheses, so fields are counted from its last closing
// parenthesis.
func parseStat(stat string) (procStat, error) {
	open, end := strings.IndexByte(stat, '('), strings.LastIndexByte(stat, ')')
	if open < 0 || end < open {
		return procStat{}, fmt.Errorf("unexpected /proc stat line %q", stat)
	}
	f := strings.Fields(stat[end+1:])
	// f[0] is field 3 (state), f[1] the ppid; utime, stime, cutime and
	// cstime are fields 14 to 17.
	if len(f) < 15 {
		return procStat{}, fmt.Errorf("unexpected /proc stat line %q", stat)
	}
	var n [5]int64
	for i, k := range []int{1, 11, 12, 13, 14} {
		v, err := strconv.ParseInt(f[k], 10, 64)
		if err != nil || v < 0 {
			return procStat{}, fmt.Errorf("unexpected /proc stat line %q", stat)
		}
		n[i] = v
	}
	return procStat{
		comm:        stat[open+1 : end],
		ppid:        int(n[0]),
		cpu:         time.Duration(n[1]+n[2]) * clockTick,
		childrenCPU: time.Duration(n[3]+n[4]) * clockTick,
	}, nil
}

func readStat(root string, pid int) (procStat, error) {
	raw, err := os.ReadFile(filepath.Join(root, strconv.Itoa(pid), "stat"))
	if err != nil {
		return procStat{}, err
	}
	return parseStat(string(raw))
}

// isPostgres says whether a process is a PostgreSQL server process: its
// comm is postgres, or its command line starts with "postgres:" (the title
// backends set themselves).
func isPostgres(root string, pid int, st procStat) bool {
	if st.comm == "postgres" {
		return true
	}
	raw, _ := os.ReadFile(filepath.Join(root, strconv.Itoa(pid), "cmdline"))
	return bytes.HasPrefix(raw, []byte("postgres:"))
}

// postmasterOf is the postmaster of the cluster serving backend (the pid
// pg_backend_pid() gave the harness's connection), under root (/proc).
func postmasterOf(root string, backend int) (int, error) {
	st, err := readStat(root, backend)
	if err != nil {
		return 0, fmt.Errorf("PostgreSQL's backend %d is not a process here (is the database on another machine or in a container?): %w", backend, err)
	}
	if !isPostgres(root, backend, st) {
		return 0, fmt.Errorf("process %d is not a PostgreSQL backend (comm %q)", backend, st.comm)
	}
	pm, err := readStat(root, st.ppid)
	if err != nil || !isPostgres(root, st.ppid, pm) {
		return 0, fmt.Errorf("the parent %d of PostgreSQL's backend %d is not a PostgreSQL postmaster", st.ppid, backend)
	}
	return st.ppid, nil
}

// clusterCPU is the CPU the cluster of postmaster has used so far, under
// root (/proc): see the comment at the top of this file.
func clusterCPU(root string, postmaster int) (time.Duration, error) {
	pm, err := readStat(root, postmaster)
	if err != nil {
		return 0, fmt.Errorf("PostgreSQL's CPU time: %w", err)
	}
	total := pm.cpu + pm.childrenCPU
	entries, err := os.ReadDir(root)
	if err != nil {
		return 0, fmt.Errorf("PostgreSQL's CPU time: %w", err)
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == postmaster {
			continue
		}
		st, err := readStat(root, pid)
		if err != nil {
			continue // gone since the directory was read: reaped, so in a later cutime
		}
		if st.ppid == postmaster && isPostgres(root, pid, st) {
			total += st.cpu
		}
	}
	return total, nil
}
