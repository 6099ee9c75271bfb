package conformance

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kcm-rs/kcm-rs/testbed/internal/cluster"
	"github.com/kcm-rs/kcm-rs/testbed/internal/kubeconfig"
)

// The two controller managers a run compares.
const (
	KubeControllerManager = "kube-controller-manager"
	KcmRs                 = "kcm-rs"
)

// Programs are the controller managers in the order a run takes them.
var Programs = []string{KubeControllerManager, KcmRs}

// startProgram starts program on c with the controllers named, as a
// kubeadm control plane runs it.
//
// Both get the flags kubeadm gives kube-controller-manager that the
// controllers read (the CA to publish, the key that signs legacy tokens,
// the CA that signs certificate requests),
// leader election off and the same controllers. kube-controller-manager
// also gets kubeadm's credentials and its delegated authentication flags,
// and acts as each controller's ServiceAccount
// (--use-service-account-credentials). kcm-rs runs as deploy/'s
// kube-system/kcm-rs ServiceAccount bound by deploy/rbac.yaml alone, so a
// grant missing there fails a spec here.
func startProgram(ctx context.Context, c *cluster.Cluster, program string, opts Options) error {
	pki := func(file string) string { return filepath.Join(c.State.PKI, file) }
	common := []string{
		"--controllers=" + strings.Join(opts.Controllers, ","),
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		"--secure-port=0",
		"--root-ca-file=" + pki("ca.crt"),
		"--service-account-private-key-file=" + pki("sa.key"),
		"--cluster-signing-cert-file=" + pki("ca.crt"),
		"--cluster-signing-key-file=" + pki("ca.key"),
	}
	switch program {
	case KubeControllerManager:
		self, err := os.Executable()
		if err != nil {
			return err
		}
		conf := c.State.ControllerManager
		args := append([]string{
			KubeControllerManager,
			"--kubeconfig=" + conf,
			"--authentication-kubeconfig=" + conf,
			"--authorization-kubeconfig=" + conf,
			"--client-ca-file=" + pki("ca.crt"),
			"--requestheader-client-ca-file=" + pki("front-proxy-ca.crt"),
			"--use-service-account-credentials=true",
		}, common...)
		return c.Run(program, self, args...)
	case KcmRs:
		conf := filepath.Join(filepath.Dir(c.State.Admin), "kcm-rs.conf")
		if err := grantKcmRs(ctx, c, opts.Deploy, conf); err != nil {
			return fmt.Errorf("setting up kcm-rs's ServiceAccount: %w", err)
		}
		return c.Run(program, opts.KcmRs, append([]string{"--kubeconfig=" + conf}, common...)...)
	}
	return fmt.Errorf("no controller manager is called %q (%s)", program, strings.Join(Programs, ", "))
}

// refusals are the lines of program's log on c that say the API server
// refused it (403 Forbidden): a grant deploy/rbac.yaml lacks. A create in
// a namespace being deleted is refused with a 403 too, and is no missing
// grant. kube-controller-manager runs with its own bootstrap roles, which
// are upstream's to get right: only kcm-rs is read.
func refusals(c *cluster.Cluster, program string) ([]string, error) {
	if program != KcmRs {
		return nil, nil
	}
	log, err := os.ReadFile(filepath.Join(c.State.Logs, program+".log"))
	if err != nil {
		return nil, err
	}
	var refused []string
	for _, line := range strings.Split(string(log), "\n") {
		if strings.Contains(strings.ToLower(line), "forbidden") && !strings.Contains(line, "being terminated") {
			refused = append(refused, line)
		}
	}
	return refused, nil
}

// grantKcmRs applies deploy/'s ServiceAccount and RBAC with kubectl, as an
// operator does, and writes a kubeconfig for that ServiceAccount (a day's
// token from the TokenRequest API) at out.
func grantKcmRs(ctx context.Context, c *cluster.Cluster, deploy, out string) error {
	for _, file := range []string{"serviceaccount.yaml", "rbac.yaml"} {
		cmd := exec.CommandContext(ctx, "kubectl", "--kubeconfig="+c.State.Admin,
			"apply", "-n", "kube-system", "-f", filepath.Join(deploy, file))
		if output, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("kubectl apply -f %s: %w\n%s", file, err, output)
		}
	}
	client, err := cluster.ClientFor(c.State.Admin)
	if err != nil {
		return err
	}
	day := int64(24 * 3600)
	request := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &day}}
	token, err := client.CoreV1().ServiceAccounts("kube-system").CreateToken(ctx, KcmRs, request, metav1.CreateOptions{})
	if err != nil {
		return err
	}
	return kubeconfig.WriteToken(out, c.State.Server, "testbed", KcmRs, filepath.Join(c.State.PKI, "ca.crt"), token.Status.Token)
}
