package cluster

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// process is one program in a child process whose output goes to
// <logs>/<name>.log: a control-plane component, run as
// `testbed <name> <args>`, or a controller manager under test. The child
// is killed by the kernel when the testbed dies, so a killed testbed
// leaves nothing running.
type process struct {
	name    string
	logPath string
	cmd     *exec.Cmd
	exited  chan struct{}
	err     error
}

// start runs the component called name: `testbed <name> <args>`.
func start(name, logs string, args ...string) (*process, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	return startCommand(name, logs, self, append([]string{name}, args...))
}

// startCommand runs the program at path with args, its log named after name.
func startCommand(name, logs, path string, args []string) (*process, error) {
	logPath := filepath.Join(logs, name+".log")
	log, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path, args...)
	cmd.Stdout = log
	cmd.Stderr = log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, logPath: logPath, cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		log.Close()
		close(p.exited)
	}()
	return p, nil
}

// running reports whether the process has not exited.
func (p *process) running() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// failure describes an exit: the process, how it ended, its log's tail.
func (p *process) failure() error {
	return fmt.Errorf("%s exited (%v); the end of %s:\n%s", p.name, p.err, p.logPath, p.tail(30))
}

// tail is the last n lines of the process's log.
func (p *process) tail(n int) string {
	data, err := os.ReadFile(p.logPath)
	if err != nil {
		return err.Error()
	}
	lines := bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("  ")
		b.Write(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// stop asks the process to end (SIGTERM) and kills it after grace.
func (p *process) stop(grace time.Duration) {
	if !p.running() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(grace):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}
