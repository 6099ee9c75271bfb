// Package kubeconfig writes the kubeconfigs kubeadm writes under
// /etc/kubernetes: one context, the cluster CA and a client certificate
// embedded, each file readable by its owner only; and one with a bearer
// token, as an operator writes for a ServiceAccount.
package kubeconfig

import (
	"fmt"
	"os"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Write writes a kubeconfig at path for user, naming the API server at
// server, trusting caFile, and authenticating with the certificate and
// key files given.
func Write(path, server, clusterName, user, caFile, certFile, keyFile string) error {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return err
	}
	cert, err := os.ReadFile(certFile)
	if err != nil {
		return err
	}
	key, err := os.ReadFile(keyFile)
	if err != nil {
		return err
	}
	return write(path, server, clusterName, user, ca, &clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: key})
}

// WriteToken writes a kubeconfig at path for user, authenticating with a
// bearer token (a ServiceAccount's, from the TokenRequest API).
func WriteToken(path, server, clusterName, user, caFile, token string) error {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return err
	}
	return write(path, server, clusterName, user, ca, &clientcmdapi.AuthInfo{Token: token})
}

func write(path, server, clusterName, user string, ca []byte, auth *clientcmdapi.AuthInfo) error {
	context := fmt.Sprintf("%s@%s", user, clusterName)
	config := clientcmdapi.NewConfig()
	config.Clusters[clusterName] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: ca}
	config.AuthInfos[user] = auth
	config.Contexts[context] = &clientcmdapi.Context{Cluster: clusterName, AuthInfo: user}
	config.CurrentContext = context
	if err := clientcmd.WriteToFile(*config, path); err != nil {
		return err
	}
	return os.Chmod(path, 0o600)
}
