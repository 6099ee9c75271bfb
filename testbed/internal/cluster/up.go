// Package cluster brings a control plane up on loopback and tears it down:
// etcd, kube-apiserver (its default admission plugins plus kubeadm's
// NodeRestriction, Node,RBAC authorization), kube-scheduler, and kwok
// playing the kubelets of the seeded nodes, each a child process with its
// log in <dir>/logs. Certificates, the service-account keys and the
// kubeconfigs are laid out as kubeadm lays them out.
package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kcm-rs/kcm-rs/testbed/internal/nodes"
)

// Options say what to bring up.
type Options struct {
	// Dir holds everything: pki/, the kubeconfigs, etcd's data, logs/.
	Dir string
	// Nodes is how many nodes to seed (node-1 ..).
	Nodes int
	// Audit writes kube-apiserver's audit log (every request's user,
	// verb and resource, at the Metadata level) to <dir>/audit.log.
	Audit bool
	// StartTimeout bounds each component's start.
	StartTimeout time.Duration
}

// State is what a client of the testbed needs, written to
// <dir>/testbed.json once the control plane is up.
type State struct {
	Server            string `json:"server"`
	Admin             string `json:"adminKubeconfig"`
	ControllerManager string `json:"controllerManagerKubeconfig"`
	PKI               string `json:"pki"`
	Logs              string `json:"logs"`
	AuditLog          string `json:"auditLog,omitempty"`
	ClusterCIDR       string `json:"clusterCIDR"`
	ServiceCIDR       string `json:"serviceCIDR"`
	Nodes             int    `json:"nodes"`
	APIServerPID      int    `json:"apiserverPID"`
}

// Cluster is a running control plane.
type Cluster struct {
	State     State
	processes []*process
}

const (
	clusterName = "testbed"
	serviceCIDR = "10.96.0.0/16"
	clusterCIDR = "10.244.0.0/16"
)

// Up brings the control plane up, or stops whatever it started and says
// which component failed, with its log's tail.
func Up(ctx context.Context, opts Options) (*Cluster, error) {
	c := &Cluster{}
	if err := c.up(ctx, opts); err != nil {
		c.Down()
		return nil, err
	}
	return c, nil
}

func (c *Cluster) up(ctx context.Context, opts Options) error {
	dir, err := filepath.Abs(opts.Dir)
	if err != nil {
		return err
	}
	pkiDir, logs := filepath.Join(dir, "pki"), filepath.Join(dir, "logs")
	for _, d := range []string{pkiDir, logs} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	ports, err := freePorts(4)
	if err != nil {
		return err
	}
	etcdClient, etcdPeer, apiPort, schedulerPort := ports[0], ports[1], ports[2], ports[3]
	server := fmt.Sprintf("https://127.0.0.1:%d", apiPort)
	c.State = State{
		Server:            server,
		Admin:             filepath.Join(dir, "admin.conf"),
		ControllerManager: filepath.Join(dir, "controller-manager.conf"),
		PKI:               pkiDir,
		Logs:              logs,
		ClusterCIDR:       clusterCIDR,
		ServiceCIDR:       serviceCIDR,
		Nodes:             opts.Nodes,
	}
	if err := layOut(dir, pkiDir, server); err != nil {
		return fmt.Errorf("laying out certificates and kubeconfigs: %w", err)
	}

	etcd, err := c.start("etcd", logs,
		"--data-dir="+filepath.Join(dir, "etcd"),
		fmt.Sprintf("--listen-client-url=http://127.0.0.1:%d", etcdClient),
		fmt.Sprintf("--listen-peer-url=http://127.0.0.1:%d", etcdPeer))
	if err != nil {
		return err
	}
	if err := waitFor(ctx, opts.StartTimeout, etcd, "etcd accepting connections", func(context.Context) error {
		return dial(etcdClient)
	}); err != nil {
		return err
	}

	args := apiserverArgs(pkiDir, etcdClient, apiPort)
	if opts.Audit {
		c.State.AuditLog = filepath.Join(dir, "audit.log")
		policy := filepath.Join(dir, "audit-policy.yaml")
		if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
			return err
		}
		args = append(args, "--audit-policy-file="+policy, "--audit-log-path="+c.State.AuditLog,
			"--audit-log-mode=batch", "--audit-log-format=json")
	}
	apiserver, err := c.start("kube-apiserver", logs, args...)
	if err != nil {
		return err
	}
	c.State.APIServerPID = apiserver.cmd.Process.Pid
	admin, err := ClientFor(c.State.Admin)
	if err != nil {
		return err
	}
	if err := waitFor(ctx, opts.StartTimeout, apiserver, "kube-apiserver's /readyz", func(ctx context.Context) error {
		_, err := admin.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		return err
	}); err != nil {
		return err
	}

	scheduler, err := c.start("kube-scheduler", logs, schedulerArgs(dir, schedulerPort)...)
	if err != nil {
		return err
	}
	if err := waitFor(ctx, opts.StartTimeout, scheduler, "kube-scheduler's /healthz", func(context.Context) error {
		return dial(schedulerPort)
	}); err != nil {
		return err
	}

	stages := filepath.Join(dir, "kwok.yaml")
	if err := nodes.WriteStages(stages); err != nil {
		return err
	}
	if err := nodes.Create(ctx, admin, opts.Nodes); err != nil {
		return err
	}
	kwok, err := c.start("kwok", logs,
		"--kubeconfig="+filepath.Join(dir, "kwok.conf"),
		"--config="+stages,
		"--manage-all-nodes=true",
		fmt.Sprintf("--node-lease-duration-seconds=%d", nodes.LeaseDurationSeconds))
	if err != nil {
		return err
	}
	if err := waitFor(ctx, opts.StartTimeout, kwok, fmt.Sprintf("%d nodes Ready", opts.Nodes), func(ctx context.Context) error {
		ready, err := nodes.Ready(ctx, admin)
		if err != nil {
			return err
		}
		if ready < opts.Nodes {
			return fmt.Errorf("%d of %d Ready", ready, opts.Nodes)
		}
		return nil
	}); err != nil {
		return err
	}

	state, err := json.MarshalIndent(c.State, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "testbed.json"), append(state, '\n'), 0o644)
}

// Wait returns when a component exits, with what it said last.
func (c *Cluster) Wait(ctx context.Context) error {
	exited := make(chan *process, len(c.processes))
	for _, p := range c.processes {
		go func() {
			<-p.exited
			exited <- p
		}()
	}
	select {
	case <-ctx.Done():
		return nil
	case p := <-exited:
		return p.failure()
	}
}

// Down stops every component, the last started first.
func (c *Cluster) Down() {
	for i := len(c.processes) - 1; i >= 0; i-- {
		c.processes[i].stop(10 * time.Second)
	}
}

func (c *Cluster) start(name, logs string, args ...string) (*process, error) {
	p, err := start(name, logs, args...)
	if err != nil {
		return nil, err
	}
	c.processes = append(c.processes, p)
	return p, nil
}

// Run starts one more program beside the control plane (a controller
// manager under test): path with args, its log at <logs>/<name>.log. Down
// stops it first, and Wait returns when it exits.
func (c *Cluster) Run(name, path string, args ...string) error {
	p, err := startCommand(name, c.State.Logs, path, args)
	if err != nil {
		return err
	}
	c.processes = append(c.processes, p)
	return nil
}

// waitFor polls check until it passes, the process exits (its log's tail
// in the error), or the timeout passes.
func waitFor(ctx context.Context, timeout time.Duration, p *process, what string, check func(context.Context) error) error {
	deadline := time.Now().Add(timeout)
	for {
		attempt, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := check(attempt)
		cancel()
		if err == nil {
			return nil
		}
		if !p.running() {
			return fmt.Errorf("waiting for %s: %w", what, p.failure())
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not after %s (last: %v); the end of %s:\n%s", what, timeout, err, p.logPath, p.tail(30))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// ClientFor is a client for the kubeconfig at path.
func ClientFor(path string) (*kubernetes.Clientset, error) {
	config, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(config)
}

func freePorts(n int) ([]int, error) {
	var ports []int
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func dial(port int) error {
	conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
	if err != nil {
		return err
	}
	return conn.Close()
}
