//go:build linux

package procs

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestFixtureProcTree uses a proc tree of its own: tests run as root, who
// can read every real process, and a real PID namespace needs privileges.
func TestFixtureProcTree(t *testing.T) {
	root := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("stat", "cpu 1 2 3\nbtime 1700000000\n")
	// 4242: another user's job in a container; maps and environ cannot be read.
	write("4242/stat", "4242 (python3) S 1 4242 4242 0 -1 4194560 1 0 0 0 1000 500 0 0 20 0 1 0 12345 1000 100 18446744073709551615\n")
	write("4242/cmdline", "python3\x00train.py\x00--hf-token\x00hf_secret\x00")
	write("4242/status", "Name:\tpython3\nUid:\t4000000\t4000000\t4000000\t4000000\nNSpid:\t4242\t17\n")
	for _, dir := range []string{"4242/maps", "4242/environ"} { // a directory cannot be read as a file
		if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// 5000: a kernel thread (parent kthreadd): left out.
	write("5000/stat", "5000 (kworker/0:1) I 2 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 50 0 0 0\n")
	// 6000: exited between the listing and the read: no stat.
	if err := os.MkdirAll(filepath.Join(root, "6000"), 0o755); err != nil {
		t.Fatal(err)
	}
	// 7000: a name longer than comm's 15 bytes, and a readable maps file.
	write("7000/stat", "7000 (llama-server-cu) R 1 7000 7000 0 -1 0 0 0 0 0 30000 100 0 0 20 0 1 0 12345 1000 100 0\n")
	write("7000/status", "Name:\tllama-server-cu\nUid:\t0\t0\t0\t0\nNSpid:\t7000\n")
	write("7000/cmdline", "/opt/llama-server-cuda\x00-m\x00model.gguf\x00")
	write("7000/environ", "HOME=/root\x00")
	write("7000/maps", "7f1000000000-7f1000100000 r-xp 00000000 fd:01 99 /opt/lib/libggml-cuda.so\n7f2000000000-7f2000100000 r-xp 00000000 fd:01 98 /opt/lib/libllama.so\n")

	s := newScanner(Options{ProcRoot: root})
	ps, err := s.Scan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 {
		t.Fatalf("procs = %+v, want 4242 and 7000", ps)
	}
	p := ps[0]
	if p.PID != 4242 || p.HostPID != 4242 || p.NSPID != 17 || p.Name != "python3" || p.User != "4000000" || p.RSSBytes != 100*uint64(os.Getpagesize()) || p.CPUTimeSeconds != 15 {
		t.Errorf("proc = %+v", p)
	}
	if want := time.Unix(1700000000, 0).Add(123450 * time.Millisecond); !p.StartTime.Equal(want) {
		t.Errorf("start = %s, want %s", p.StartTime, want)
	}
	if !slices.Equal(p.Cmdline, []string{"python3", "train.py", "--hf-token", "***"}) {
		t.Errorf("cmdline not redacted: %v", p.Cmdline)
	}
	if want := []string{"environ: is a directory", "maps: is a directory"}; !slices.Equal(slices.Sorted(slices.Values(p.Unreadable)), want) {
		t.Errorf("unreadable = %q, want %q", p.Unreadable, want)
	}
	q := ps[1]
	if q.PID != 7000 || q.Name != "llama-server-cuda" || q.User != "root" || q.NSPID != 0 || len(q.Unreadable) != 0 ||
		!slices.Equal(q.GPULibs, []string{"libggml-cuda.so", "libllama.so"}) {
		t.Errorf("proc = %+v", q)
	}
	// Listed with what is known: its verdict says nothing it cannot know.
	r := rowOf(t, Classify(ps, a100With(), nil, nil, DefaultBusyRule, nil, time.Now(), nil), 7000)
	if r.Verdict != VerdictCUDAIdle {
		t.Errorf("llama.cpp with CUDA, no memory = %s", r.Verdict)
	}
}
