package mqttsub_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/timetabledb/timetable/config"
	"github.com/timetabledb/timetable/internal/clients"
)

// A broker that takes TLS only, with a certificate of a CA of its own,
// and clients with a password only: the subscription connects with the
// CA, a user name and a password, and writes what a device publishes.
func TestTLSAndPassword(t *testing.T) {
	f := newFixture(t)
	dir := t.TempDir()
	ca, cert, key := writeCertificates(t, dir)
	passwords := filepath.Join(dir, "passwords")
	for _, user := range []string{"ingest", "device"} {
		args := []string{"-b", passwords, user, user + "-secret"}
		if user == "ingest" {
			args = append([]string{"-c"}, args...)
		}
		out, err := exec.Command(clients.Command(t, "mosquitto_passwd"), args...).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	b, err := clients.StartMosquitto(clients.Command(t, "mosquitto"), dir, clients.MosquittoOptions{CAFile: ca, CertFile: cert, KeyFile: key, PasswordFile: passwords})
	require.NoError(t, err)
	t.Cleanup(b.Close)
	f.broker = b

	_, reg := f.start(config.Subscription{Topic: "secure/+/data", Tenant: "acme", Table: "secure", Series: 2, Format: config.FormatJSON,
		Username: "ingest", Password: "ingest-secret", TLS: config.TLS{CA: ca}})
	out, err := exec.Command(f.pub, "-h", "127.0.0.1", "-p", fmt.Sprint(b.Port), "--cafile", ca, "-u", "device", "-P", "device-secret",
		"-q", "1", "-t", "secure/dev-1/data", "-m", event(1, "")).CombinedOutput()
	require.NoError(t, err, "%s", out)
	f.eventually("wrote the message", func() bool { return metric(t, reg, "timetable_mqtt_messages_total", "written") == 1 })
	require.Equal(t, "dev-1", f.events("secure")[0]["series"])
}

// writeCertificates writes a CA and a certificate it signs for
// 127.0.0.1, and the certificate's key, as PEM files in dir.
func writeCertificates(t *testing.T, dir string) (ca, cert, key string) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	caTemplate := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "timetable test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTemplate, caTemplate, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	serverKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	serverDER, err := x509.CreateCertificate(rand.Reader, &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}, caTemplate, &serverKey.PublicKey, caKey)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(serverKey)
	require.NoError(t, err)
	write := func(name, kind string, der []byte) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o644))
		return path
	}
	return write("ca.pem", "CERTIFICATE", caDER), write("server.pem", "CERTIFICATE", serverDER), write("server.key", "EC PRIVATE KEY", keyDER)
}
