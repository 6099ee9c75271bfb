// Package nodes gives the testbed its nodes: Node objects as kube-sim seeds
// them (node-1 .. node-N, each with its own pod range), and kwok's
// controller to play their kubelets, with kwok's own node stages
// (initialize, heartbeat with a Lease) and the pod stages of
// pod-stages.yaml.
package nodes

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	nodefast "sigs.k8s.io/kwok/kustomize/stage/node/fast"
	heartbeat "sigs.k8s.io/kwok/kustomize/stage/node/heartbeat-with-lease"
)

//go:embed pod-stages.yaml
var podStages string

// LeaseDurationSeconds is the node Lease's duration kwok writes and renews,
// the kubelet's default.
const LeaseDurationSeconds = 40

// WriteStages writes kwok's configuration: its node stages and ours for pods.
func WriteStages(path string) error {
	docs := []string{nodefast.DefaultNodeInit, heartbeat.DefaultNodeHeartbeatWithLease, podStages}
	for i, d := range docs {
		docs[i] = strings.TrimSpace(d)
	}
	return os.WriteFile(path, []byte(strings.Join(docs, "\n---\n")+"\n"), 0o644)
}

// Create makes nodes node-1 .. node-count, each with pod range
// 10.244.<i>.0/24 and address 10.0.0.<i>, labelled as a kubelet labels
// its node.
func Create(ctx context.Context, client kubernetes.Interface, count int) error {
	for i := 1; i <= count; i++ {
		name := fmt.Sprintf("node-%d", i)
		cidr := fmt.Sprintf("10.244.%d.0/24", i)
		node := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{
				Name: name,
				Labels: map[string]string{
					corev1.LabelHostname:   name,
					corev1.LabelOSStable:   "linux",
					corev1.LabelArchStable: "amd64",
				},
			},
			Spec: corev1.NodeSpec{PodCIDR: cidr, PodCIDRs: []string{cidr}},
		}
		created, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("creating node %s: %w", name, err)
		}
		// Addresses of its own, as kube-sim gives (kwok keeps them).
		created.Status.Addresses = []corev1.NodeAddress{
			{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.0.0.%d", i)},
			{Type: corev1.NodeHostName, Address: name},
		}
		if _, err := client.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("writing node %s's addresses: %w", name, err)
		}
	}
	return nil
}

// Ready counts the nodes whose Ready condition is True.
func Ready(ctx context.Context, client kubernetes.Interface) (int, error) {
	list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return 0, err
	}
	ready := 0
	for _, node := range list.Items {
		for _, c := range node.Status.Conditions {
			if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
				ready++
			}
		}
	}
	return ready, nil
}
