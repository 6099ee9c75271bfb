package conformance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kcm-rs/kcm-rs/testbed/internal/cluster"
)

func TestRefusalsAreKcmRsForbiddenLinesButNotANamespaceBeingDeleted(t *testing.T) {
	logs := t.TempDir()
	log := strings.Join([]string{
		`INFO synced`,
		`WARN create pod: ApiError: pods is forbidden: User "system:serviceaccount:kube-system:kcm-rs" cannot create resource "pods"`,
		`WARN create event: forbidden: unable to create new content in namespace e2e-1 because it is being terminated`,
		`WARN patch: Forbidden (403)`,
	}, "\n")
	for _, program := range Programs {
		if err := os.WriteFile(filepath.Join(logs, program+".log"), []byte(log), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := &cluster.Cluster{State: cluster.State{Logs: logs}}
	refused, err := refusals(c, KcmRs)
	if err != nil {
		t.Fatal(err)
	}
	if len(refused) != 2 || !strings.Contains(refused[0], "cannot create resource") || !strings.Contains(refused[1], "403") {
		t.Errorf("refusals: %q", refused)
	}
	if refused, err := refusals(c, KubeControllerManager); err != nil || len(refused) != 0 {
		t.Errorf("kube-controller-manager's refusals: %q, %v", refused, err)
	}
}

func TestAVerdictFailsOnARefusalOfKcmRs(t *testing.T) {
	runs := map[string]Results{KcmRs: {"spec": pass}}
	table := newTable(runs, Options{Programs: []string{KcmRs}})
	table.refused = []string{"pods is forbidden"}
	checkVerdict(t, table.verdict(), "kcm-rs was refused (403): pods is forbidden")
}
