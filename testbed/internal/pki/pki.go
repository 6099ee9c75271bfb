// Package pki lays out a control plane's keys and certificates as kubeadm
// does under /etc/kubernetes/pki: a cluster CA, a front-proxy CA, the API
// server's serving certificate, client certificates for each component,
// and the service-account signing key pair. Every key is RSA 2048, as
// kubeadm's defaults are.
package pki

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// validity is how long every certificate is valid: far longer than any run.
const validity = 365 * 24 * time.Hour

// Authority is a CA that signs leaf certificates.
type Authority struct {
	Cert *x509.Certificate
	Key  *rsa.PrivateKey
}

// Identity names a client certificate's subject: the user (CN) and its
// groups (O), as the API server's x509 authenticator reads them.
type Identity struct {
	User   string
	Groups []string
}

// NewAuthority makes a self-signed CA and writes it as <dir>/<name>.crt and
// <dir>/<name>.key.
func NewAuthority(dir, name, commonName string) (*Authority, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("generating the %s key: %w", name, err)
	}
	now := time.Now()
	template := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: commonName},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(validity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, key.Public(), key)
	if err != nil {
		return nil, fmt.Errorf("signing the %s certificate: %w", name, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	if err := writePair(dir, name, der, key); err != nil {
		return nil, err
	}
	return &Authority{Cert: cert, Key: key}, nil
}

// Serving signs a serving certificate for these addresses and names,
// written as <dir>/<name>.crt and .key.
func (a *Authority) Serving(dir, name string, ips []net.IP, dnsNames []string) error {
	template := a.leaf(pkix.Name{CommonName: name}, x509.ExtKeyUsageServerAuth)
	template.IPAddresses = ips
	template.DNSNames = dnsNames
	return a.sign(dir, name, template)
}

// Client signs a client certificate for this identity, written as
// <dir>/<name>.crt and .key.
func (a *Authority) Client(dir, name string, id Identity) error {
	return a.sign(dir, name, a.leaf(pkix.Name{CommonName: id.User, Organization: id.Groups}, x509.ExtKeyUsageClientAuth))
}

func (a *Authority) leaf(subject pkix.Name, usage x509.ExtKeyUsage) *x509.Certificate {
	now := time.Now()
	return &x509.Certificate{
		SerialNumber: serial(),
		Subject:      subject,
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(validity),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
	}
}

func (a *Authority) sign(dir, name string, template *x509.Certificate) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("generating the %s key: %w", name, err)
	}
	der, err := x509.CreateCertificate(rand.Reader, template, a.Cert, key.Public(), a.Key)
	if err != nil {
		return fmt.Errorf("signing the %s certificate: %w", name, err)
	}
	return writePair(dir, name, der, key)
}

// ServiceAccountKeys writes the service-account signing key pair as
// <dir>/sa.key and <dir>/sa.pub.
func ServiceAccountKeys(dir string) error {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return fmt.Errorf("generating the service-account key: %w", err)
	}
	if err := writeKey(filepath.Join(dir, "sa.key"), key); err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "sa.pub"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o600)
}

func writePair(dir, name string, der []byte, key crypto.Signer) error {
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(filepath.Join(dir, name+".crt"), certPEM, 0o644); err != nil {
		return err
	}
	return writeKey(filepath.Join(dir, name+".key"), key)
}

func writeKey(path string, key crypto.Signer) error {
	rsaKey, ok := key.(*rsa.PrivateKey)
	if !ok {
		return fmt.Errorf("%s: only RSA keys are written", path)
	}
	block := &pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(rsaKey)}
	return os.WriteFile(path, pem.EncodeToMemory(block), 0o600)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		panic(fmt.Sprintf("crypto/rand failed: %v", err))
	}
	return n
}
