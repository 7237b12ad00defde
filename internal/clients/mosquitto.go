package clients

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Broker is a mosquitto broker on a free loopback port, with anonymous
// access and its sessions kept on disk in its directory.
type Broker struct {
	// Port is the port it listens on, and URL its tcp:// address (ssl://
	// with TLS).
	Port int
	URL  string
	cmd  *exec.Cmd
	log  *os.File
	// exited is closed once the process has ended, err its end.
	exited chan struct{}
	err    error
}

// MosquittoOptions secure a broker; the zero value is plain TCP with
// anonymous access.
type MosquittoOptions struct {
	// CAFile, CertFile and KeyFile, when set, make the listener take TLS
	// only, with this certificate.
	CAFile, CertFile, KeyFile string
	// PasswordFile, when set, is mosquitto_passwd's file of the only
	// clients let in.
	PasswordFile string
}

// StartMosquitto starts the mosquitto at path (Command finds it) with
// its configuration, sessions and log in dir, and waits until it takes
// connections. Close stops it.
func StartMosquitto(path, dir string, opts ...MosquittoOptions) (*Broker, error) {
	var o MosquittoOptions
	if len(opts) > 0 {
		o = opts[0]
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	conf := filepath.Join(dir, "mosquitto.conf")
	// Sessions are kept while the broker runs (and on disk); queued
	// messages are not capped, so that a subscriber away for a while,
	// or a benchmark, loses nothing.
	lines := []string{fmt.Sprintf("listener %d 127.0.0.1", port)}
	if os.Geteuid() == 0 {
		// Started by root, mosquitto becomes the user mosquitto, who
		// cannot read a test's private directories.
		lines = append(lines, "user root")
	}
	if o.CertFile != "" {
		lines = append(lines, "cafile "+o.CAFile, "certfile "+o.CertFile, "keyfile "+o.KeyFile)
	}
	if o.PasswordFile != "" {
		lines = append(lines, "allow_anonymous false", "password_file "+o.PasswordFile)
	} else {
		lines = append(lines, "allow_anonymous true")
	}
	text := strings.Join(append(lines,
		"persistence true",
		"persistence_location "+dir+"/",
		"max_queued_messages 0",
		"log_dest stderr",
		"log_type error",
		"log_type warning",
		"log_type notice",
	), "\n") + "\n"
	if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(dir, "mosquitto.log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path, "-c", conf)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("start mosquitto: %w", err)
	}
	scheme := "tcp"
	if o.CertFile != "" {
		scheme = "ssl"
	}
	b := &Broker{Port: port, URL: scheme + "://127.0.0.1:" + strconv.Itoa(port), cmd: cmd, log: log, exited: make(chan struct{})}
	go func() {
		b.err = cmd.Wait()
		close(b.exited)
	}()
	for range 200 {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
			c.Close()
			return b, nil
		}
		select {
		case <-b.exited:
			out, _ := os.ReadFile(log.Name())
			log.Close()
			return nil, fmt.Errorf("mosquitto exited (%v): %s", b.err, out)
		case <-time.After(50 * time.Millisecond):
		}
	}
	b.Close()
	return nil, errors.New("mosquitto took no connection within 10s")
}

// Close stops the broker.
func (b *Broker) Close() {
	_ = b.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-b.exited:
	case <-time.After(5 * time.Second):
		_ = b.cmd.Process.Kill()
		<-b.exited
	}
	b.log.Close()
}

// freePort returns a loopback port free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
