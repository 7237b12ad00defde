package bench

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/procfs"
)

// A daemon is a database server the peer comparison started: a plain
// process on loopback, in a temp dir, its output in a log file there. It
// dies with the benchmark (SIGKILL on the parent's death), and Stop ends
// it on every path out.
type daemon struct {
	name string
	cmd  *exec.Cmd
	log  string
	// quit is the signal of a graceful shutdown.
	quit   os.Signal
	exited chan struct{}
	err    error // set before exited closes

	stopSampling func()
	mu           sync.Mutex
	peakPSS      uint64
}

// daemonStopTimeout bounds a graceful shutdown before SIGKILL.
const daemonStopTimeout = 30 * time.Second

// startDaemon runs bin with args, as user when it is not nil, with env
// ("NAME=value") added to the benchmark's environment, and samples the
// memory of its processes until it stops.
func startDaemon(name, dir string, quit os.Signal, user *syscall.Credential, env []string, bin string, args ...string) (*daemon, error) {
	logPath := filepath.Join(dir, name+".log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	defer logFile.Close()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: user}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	d := &daemon{name: name, cmd: cmd, log: logPath, quit: quit, exited: make(chan struct{})}
	go func() {
		d.err = cmd.Wait()
		close(d.exited)
	}()
	d.stopSampling = d.sampleMemory(100 * time.Millisecond)
	return d, nil
}

// waitReady calls ready until it succeeds, the daemon exits, or timeout.
func (d *daemon) waitReady(ctx context.Context, timeout time.Duration, ready func(context.Context) error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := ready(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-d.exited:
			return fmt.Errorf("%s exited before it was ready (%v): %s", d.name, d.err, d.logTail())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %s: %w; %s", d.name, timeout, err, d.logTail())
		}
	}
}

// Stop shuts the daemon down gracefully, and kills its process group when
// that takes longer than daemonStopTimeout. It may be called again.
func (d *daemon) Stop() error {
	d.stopSampling()
	select {
	case <-d.exited:
		return nil
	default:
	}
	if err := d.cmd.Process.Signal(d.quit); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stop %s: %w", d.name, err)
	}
	select {
	case <-d.exited:
		return nil
	case <-time.After(daemonStopTimeout):
		syscall.Kill(-d.cmd.Process.Pid, syscall.SIGKILL)
		<-d.exited
		return fmt.Errorf("%s did not stop within %s; killed", d.name, daemonStopTimeout)
	}
}

// exitedWithin reports whether the daemon's process ends within wait.
func (d *daemon) exitedWithin(wait time.Duration) bool {
	select {
	case <-d.exited:
		return true
	case <-time.After(wait):
		return false
	}
}

func (d *daemon) logTail() string {
	b, err := os.ReadFile(d.log)
	if err != nil {
		return err.Error()
	}
	s := strings.TrimSpace(string(b))
	// A Go program's crash starts with its cause and goes on with every
	// goroutine's stack: its start says most.
	for _, crash := range []string{"panic: ", "fatal error: "} {
		if i := strings.Index(s, crash); i >= 0 {
			s = s[i:min(len(s), i+4000)] + "…"
			return d.name + " log: " + s
		}
	}
	if len(s) > 2000 {
		s = "…" + s[len(s)-2000:]
	}
	return d.name + " log: " + s
}

// processes returns the daemon's process and its live descendants.
func (d *daemon) processes() ([]procfs.Proc, error) {
	all, err := procfs.AllProcs()
	if err != nil {
		return nil, err
	}
	children := map[int][]procfs.Proc{}
	for _, p := range all {
		st, err := p.Stat()
		if err != nil {
			continue // it exited meanwhile
		}
		children[st.PPID] = append(children[st.PPID], p)
	}
	root, err := procfs.NewProc(d.cmd.Process.Pid)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", d.name, err)
	}
	tree := []procfs.Proc{root}
	for i := 0; i < len(tree); i++ {
		tree = append(tree, children[tree[i].PID]...)
	}
	return tree, nil
}

// CPU returns the processor time the daemon's processes have used: each
// live one's, and that of the children they have reaped (PostgreSQL's
// backends end with their connections).
func (d *daemon) CPU() (time.Duration, error) {
	tree, err := d.processes()
	if err != nil {
		return 0, err
	}
	var ticks int
	for _, p := range tree {
		st, err := p.Stat()
		if err != nil {
			continue
		}
		ticks += int(st.UTime+st.STime) + st.CUTime + st.CSTime
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// userHZ is the unit of times in /proc/PID/stat, 100 on Linux.
const userHZ = 100

// sampleMemory records the highest sum of the proportional set sizes of
// the daemon's processes, every interval, until the returned func is
// called. PSS counts memory shared by several processes (PostgreSQL's
// buffers) once.
func (d *daemon) sampleMemory(interval time.Duration) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			if tree, err := d.processes(); err == nil {
				var pss uint64
				for _, p := range tree {
					if r, err := p.ProcSMapsRollup(); err == nil {
						pss += r.Pss
					}
				}
				d.mu.Lock()
				d.peakPSS = max(d.peakPSS, pss)
				d.mu.Unlock()
			}
			select {
			case <-done:
				return
			case <-d.exited:
				return
			case <-t.C:
			}
		}
	})
	var once sync.Once
	return func() {
		once.Do(func() { close(done) })
		wg.Wait()
	}
}

// PeakMemory returns the daemon's peak memory in bytes: its VmHWM when it
// is one process, else the highest sum of its processes' PSS sampled.
func (d *daemon) PeakMemory() (uint64, error) {
	tree, err := d.processes()
	if err != nil {
		return 0, err
	}
	if len(tree) == 1 {
		st, err := tree[0].NewStatus()
		if err != nil {
			return 0, fmt.Errorf("%s: %w", d.name, err)
		}
		return st.VmHWM, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.peakPSS, nil
}

// freePort returns a loopback port nothing listens on.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// diskUsage returns the bytes the files under dir take on disk, sparse
// files by the blocks they hold, and none of the blocks preallocated past
// a file's end.
func diskUsage(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // a file removed as we walk (a WAL segment)
			}
			return err
		}
		info, err := e.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			// Blocks allocated past the end of the file (a WAL
			// preallocated for the writes to come) hold no data: they
			// are not counted, or an empty store that preallocated its
			// WAL would be credited with space it gives back later.
			n += min(st.Blocks*512, (info.Size()+4095)/4096*4096)
		}
		return nil
	})
	return n, err
}
