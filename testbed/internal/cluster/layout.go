package cluster

import (
	"fmt"
	"net"
	"path/filepath"

	"github.com/kcm-rs/kcm-rs/testbed/internal/kubeconfig"
	"github.com/kcm-rs/kcm-rs/testbed/internal/pki"
)

// clients are the kubeconfigs written beside pki/, each for one identity:
// kubeadm's admin, controller-manager and scheduler files, and one for
// kwok, which plays every node's kubelet (a cluster admin, since it
// writes the status of pods on many nodes).
var clients = []struct {
	file string
	id   pki.Identity
}{
	{"admin", pki.Identity{User: "kubernetes-admin", Groups: []string{"system:masters"}}},
	{"controller-manager", pki.Identity{User: "system:kube-controller-manager"}},
	{"scheduler", pki.Identity{User: "system:kube-scheduler"}},
	{"kwok", pki.Identity{User: "kwok-controller", Groups: []string{"system:masters"}}},
}

// layOut writes kubeadm's files: pki/ca.{crt,key}, pki/front-proxy-ca,
// pki/apiserver, pki/apiserver-kubelet-client, pki/front-proxy-client,
// pki/sa.{key,pub}, and <dir>/<client>.conf for each client above.
func layOut(dir, pkiDir, server string) error {
	ca, err := pki.NewAuthority(pkiDir, "ca", "kubernetes")
	if err != nil {
		return err
	}
	frontProxy, err := pki.NewAuthority(pkiDir, "front-proxy-ca", "front-proxy-ca")
	if err != nil {
		return err
	}
	ips := []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.96.0.1")}
	names := []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}
	if err := ca.Serving(pkiDir, "apiserver", ips, names); err != nil {
		return err
	}
	if err := ca.Client(pkiDir, "apiserver-kubelet-client", pki.Identity{User: "kube-apiserver-kubelet-client", Groups: []string{"kubeadm:cluster-admins"}}); err != nil {
		return err
	}
	if err := frontProxy.Client(pkiDir, "front-proxy-client", pki.Identity{User: "front-proxy-client"}); err != nil {
		return err
	}
	if err := pki.ServiceAccountKeys(pkiDir); err != nil {
		return err
	}
	for _, c := range clients {
		if err := ca.Client(pkiDir, c.file+"-client", c.id); err != nil {
			return err
		}
		path := filepath.Join(dir, c.file+".conf")
		cert, key := filepath.Join(pkiDir, c.file+"-client.crt"), filepath.Join(pkiDir, c.file+"-client.key")
		if err := kubeconfig.Write(path, server, clusterName, c.id.User, filepath.Join(pkiDir, "ca.crt"), cert, key); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	return nil
}

// apiserverArgs are kubeadm's kube-apiserver flags, on loopback. The
// endpoint reconciler is off: it would publish the loopback address in
// the kubernetes Service's Endpoints, which validation refuses.
func apiserverArgs(pkiDir string, etcdPort, port int) []string {
	p := func(name string) string { return filepath.Join(pkiDir, name) }
	return []string{
		"--advertise-address=127.0.0.1",
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", port),
		fmt.Sprintf("--etcd-servers=http://127.0.0.1:%d", etcdPort),
		"--allow-privileged=true",
		"--authorization-mode=Node,RBAC",
		"--enable-admission-plugins=NodeRestriction",
		"--enable-bootstrap-token-auth=true",
		"--endpoint-reconciler-type=none",
		"--client-ca-file=" + p("ca.crt"),
		"--tls-cert-file=" + p("apiserver.crt"),
		"--tls-private-key-file=" + p("apiserver.key"),
		"--kubelet-client-certificate=" + p("apiserver-kubelet-client.crt"),
		"--kubelet-client-key=" + p("apiserver-kubelet-client.key"),
		"--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname",
		"--proxy-client-cert-file=" + p("front-proxy-client.crt"),
		"--proxy-client-key-file=" + p("front-proxy-client.key"),
		"--requestheader-allowed-names=front-proxy-client",
		"--requestheader-client-ca-file=" + p("front-proxy-ca.crt"),
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-username-headers=X-Remote-User",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + p("sa.pub"),
		"--service-account-signing-key-file=" + p("sa.key"),
		"--service-cluster-ip-range=" + serviceCIDR,
		"--cert-dir=" + pkiDir,
	}
}

// schedulerArgs are kubeadm's kube-scheduler flags, on loopback, leader
// election off (there is one).
func schedulerArgs(dir string, port int) []string {
	conf := filepath.Join(dir, "scheduler.conf")
	return []string{
		"--kubeconfig=" + conf,
		"--authentication-kubeconfig=" + conf,
		"--authorization-kubeconfig=" + conf,
		"--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", port),
		"--leader-elect=false",
	}
}

// auditPolicy records every request's user, verb and resource, without
// bodies: what the side-by-side benchmark counts.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
`
