package prom

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/exporter-toolkit/web"
	"golang.org/x/crypto/bcrypt"
)

// fakeHash is a bcrypt hash (of "fakepassword"), for files that need one.
const fakeHash = "$2y$10$QOauhQNbBCuQDKes6eFzPeMqBSjb7Mr5DUmpZ/VcEd00UAV/LDeSi"

// TestWebConfigAsTheToolkit: the agent's reader accepts and rejects the
// files the exporter toolkit's web.Validate does, the shipped example
// first; the few it judges otherwise are listed, with why.
func TestWebConfigAsTheToolkit(t *testing.T) {
	dir := t.TempDir()
	cert, key, _ := selfSigned(t, dir)
	shipped, err := os.ReadFile(filepath.Join("..", "..", "deploy", "prometheus", "web.example.yml"))
	if err != nil {
		t.Fatal(err)
	}
	example := strings.NewReplacer("/etc/gpucanary/tls/agent.crt", cert, "/etc/gpucanary/tls/agent.key", key).Replace(string(shipped))
	tlsPart := "tls_server_config:\n  cert_file: " + cert + "\n  key_file: " + key + "\n"
	for _, tc := range []struct {
		name, text string
		ok         bool
		// differs: the toolkit judges it the other way, for this reason.
		differs string
	}{
		{"shipped example", example, true, ""},
		{"empty", "", true, ""},
		{"basic auth only", "basic_auth_users:\n  p: " + fakeHash + "\n", true, ""},
		{"TLS only", tlsPart, true, ""},
		{"relative paths", "tls_server_config:\n  cert_file: cert.pem\n  key_file: key.pem\n", true, ""},
		{"every TLS setting", tlsPart + "  min_version: TLS12\n  max_version: TLS13\n  client_auth_type: RequestClientCert\n" +
			"  cipher_suites: [TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256]\n  curve_preferences: [X25519, CurveP256]\n" +
			"  prefer_server_cipher_suites: false\n  client_allowed_sans: [scraper.example]\n", true, ""},
		{"client CA", tlsPart + "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: " + cert + "\n", true, ""},
		{"headers and http2", "http_server_config:\n  http2: false\n  headers:\n    X-Frame-Options: deny\n    Content-Security-Policy: default-src 'self'\n", true, ""},
		{"a wrong key", "tls_server_conf:\n  cert_file: x\n", false, ""},
		{"a wrong key inside", "tls_server_config:\n  certfile: x\n", false, ""},
		{"not YAML", "tls_server_config: [\n", false, ""},
		{"a bad hash", "basic_auth_users:\n  p: not-a-hash\n", false, ""},
		{"missing cert", "tls_server_config:\n  cert_file: " + filepath.Join(dir, "no.pem") + "\n  key_file: " + key + "\n", false, ""},
		{"cert without key", "tls_server_config:\n  cert_file: " + cert + "\n", false, ""},
		{"key of another cert", "tls_server_config:\n  cert_file: " + cert + "\n  key_file: " + otherKey(t, dir) + "\n", false, ""},
		{"unknown TLS version", tlsPart + "  min_version: TLS14\n", false, ""},
		{"unknown cipher", tlsPart + "  cipher_suites: [TLS_RSA_WITH_RC4_128_SHA]\n", false, ""},
		{"unknown curve", tlsPart + "  curve_preferences: [CurveP224]\n", false, ""},
		{"unknown client auth", tlsPart + "  client_auth_type: Sometimes\n", false, ""},
		{"client CA without a policy", tlsPart + "  client_ca_file: " + cert + "\n", false, ""},
		{"a header not allowed", "http_server_config:\n  headers:\n    Server: x\n", false, ""},
		{"a header value not allowed", "http_server_config:\n  headers:\n    X-Frame-Options: allow\n", false, ""},
		{"a duplicate key", "basic_auth_users:\n  p: " + fakeHash + "\n  p: " + fakeHash + "\n", false, ""},
		{"rate limit", "rate_limit:\n  interval: 1s\n  burst: 5\n", false, "the agent has no rate limiter and says so rather than ignore it"},
		{"both cert and cert_file", tlsPart + "  cert: |\n    x\n", false, "the toolkit takes cert_file and ignores cert"},
		{"min above max", tlsPart + "  min_version: TLS13\n  max_version: TLS12\n", false, "the toolkit fails at the first handshake instead"},
		{"client CA without a certificate", tlsPart + "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: " + key + "\n", false,
			"the toolkit accepts a CA file with no certificate, and then no client certificate verifies"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, dir, "web.yml", tc.text)
			ours := ValidateWebConfig(path)
			if (ours == nil) != tc.ok {
				t.Errorf("ValidateWebConfig = %v, want ok=%v", ours, tc.ok)
			}
			theirs := web.Validate(path)
			if same := (theirs == nil) == (ours == nil); same != (tc.differs == "") {
				t.Errorf("ValidateWebConfig = %v, the toolkit's Validate = %v; differs on purpose: %q", ours, theirs, tc.differs)
			}
		})
	}
}

// otherKey writes a key that belongs to no certificate in dir.
func otherKey(t *testing.T, dir string) string {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return writeFile(t, dir, "other.key", string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der})))
}

// The errors say what is wrong, naming the key.
func TestWebConfigErrorsSayWhat(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ text, says string }{
		{"tls_server_conf:\n  cert_file: x\n", "tls_server_conf"},
		{"rate_limit:\n  burst: 5\n", "rate_limit is not supported"},
		{"basic_auth_users:\n  prometheus: plain\n", "prometheus: not a bcrypt hash"},
		{"tls_server_config:\n  key_file: k.pem\n", "missing one of cert or cert_file"},
		{"tls_server_config:\n  cert_file: nope.pem\n  key_file: nope.key\n", filepath.Join(dir, "nope.pem")},
	} {
		err := ValidateWebConfig(writeFile(t, dir, "web.yml", tc.text))
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%q: %v, want an error saying %q", tc.text, err, tc.says)
		}
	}
}

// newCert writes a self-signed certificate for 127.0.0.1 named cn over
// certPath and keyPath, and returns a pool that trusts it.
func newCert(t *testing.T, cn, certPath, keyPath string, usage x509.ExtKeyUsage) *x509.CertPool {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, _ := rand.Int(rand.Reader, big.NewInt(1<<62))
	tmpl := &x509.Certificate{SerialNumber: serial, Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), DNSNames: []string{cn},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{usage}, BasicConstraintsValid: true, IsCA: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	parsed, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(parsed)
	return pool
}

// handshake connects over TLS and returns the server's certificate name
// and the protocol agreed.
func handshake(t *testing.T, addr string, cfg *tls.Config) (string, string, error) {
	t.Helper()
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 30 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		return "", "", err
	}
	defer c.Close()
	st := c.ConnectionState()
	return st.PeerCertificates[0].Subject.CommonName, st.NegotiatedProtocol, nil
}

// A certificate replaced on disk is served to the next connection, with
// no restart (relative paths, from the config file's folder); HTTP/2 is
// offered unless the file turns it off.
func TestWebConfigRereadPerConnection(t *testing.T) {
	dir := t.TempDir()
	certPath, keyPath := filepath.Join(dir, "agent.crt"), filepath.Join(dir, "agent.key")
	first := newCert(t, "first", certPath, keyPath, x509.ExtKeyUsageServerAuth)
	cfg := writeFile(t, dir, "web.yml", "tls_server_config:\n  cert_file: agent.crt\n  key_file: agent.key\n")
	addr := serve(t, cfg)
	name, proto, err := handshake(t, addr, &tls.Config{RootCAs: first, NextProtos: []string{"h2", "http/1.1"}})
	if err != nil || name != "first" || proto != "h2" {
		t.Fatalf("first connection: %q %q %v, want the first certificate and h2", name, proto, err)
	}
	second := newCert(t, "second", certPath, keyPath, x509.ExtKeyUsageServerAuth)
	name, _, err = handshake(t, addr, &tls.Config{RootCAs: second})
	if err != nil || name != "second" {
		t.Errorf("after the certificate was replaced: %q %v, want the second", name, err)
	}

	noH2 := writeFile(t, dir, "noh2.yml", "tls_server_config:\n  cert_file: agent.crt\n  key_file: agent.key\nhttp_server_config:\n  http2: false\n")
	addr = serve(t, noH2)
	if _, proto, err := handshake(t, addr, &tls.Config{RootCAs: second, NextProtos: []string{"h2", "http/1.1"}}); err != nil || proto == "h2" {
		t.Errorf("http2: false: %q %v, want no h2", proto, err)
	}
}

// A client certificate policy with a client CA: a client without a
// certificate is refused, one with a certificate the CA signed gets in.
func TestWebConfigClientCertificates(t *testing.T) {
	dir := t.TempDir()
	serverPool := newCert(t, "agent", filepath.Join(dir, "agent.crt"), filepath.Join(dir, "agent.key"), x509.ExtKeyUsageServerAuth)
	newCert(t, "scraper", filepath.Join(dir, "client.crt"), filepath.Join(dir, "client.key"), x509.ExtKeyUsageClientAuth)
	cfg := writeFile(t, dir, "web.yml", "tls_server_config:\n  cert_file: agent.crt\n  key_file: agent.key\n"+
		"  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: client.crt\n  client_allowed_sans: [scraper]\n")
	addr := serve(t, cfg)
	get := func(certs []tls.Certificate) error {
		client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: serverPool, Certificates: certs}}}
		resp, err := client.Get("https://" + addr + "/-/healthy")
		if err != nil {
			return err
		}
		resp.Body.Close()
		return nil
	}
	if err := get(nil); err == nil {
		t.Error("a client without a certificate got in")
	}
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, "client.crt"), filepath.Join(dir, "client.key"))
	if err != nil {
		t.Fatal(err)
	}
	if err := get([]tls.Certificate{pair}); err != nil {
		t.Errorf("a client with the CA's certificate: %v", err)
	}
}

// Basic auth: the configured headers on every answer, 401 with a
// challenge for an unknown user or a wrong password, and a check that
// succeeded is remembered (the cache answers, not bcrypt) until it
// expires.
func TestWebConfigBasicAuth(t *testing.T) {
	dir := t.TempDir()
	hash, err := bcrypt.GenerateFromPassword([]byte("canary"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	cfg := writeFile(t, dir, "web.yml", "basic_auth_users:\n  prometheus: "+string(hash)+"\n"+
		"http_server_config:\n  headers:\n    X-Frame-Options: deny\n")
	next := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })
	clock := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	checks := newAuthCache()
	checks.now = func() time.Time { return clock }
	h := &webHandler{path: cfg, next: next, logger: discard, checks: checks}
	get := func(user, pass string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	for _, tc := range []struct {
		user, pass string
		code       int
	}{{"", "", 401}, {"prometheus", "wrong", 401}, {"nobody", "canary", 401}, {"prometheus", "canary", 200}} {
		rec := get(tc.user, tc.pass)
		if rec.Code != tc.code {
			t.Errorf("%q/%q: %d, want %d", tc.user, tc.pass, rec.Code, tc.code)
		}
		if rec.Header().Get("X-Frame-Options") != "deny" {
			t.Errorf("%q/%q: no X-Frame-Options header", tc.user, tc.pass)
		}
		if tc.code == 401 && !strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), "Basic") {
			t.Errorf("%q/%q: no Basic challenge", tc.user, tc.pass)
		}
	}
	// The cache answers: a remembered "no" for the right password is
	// taken without bcrypt.
	key := authKey("prometheus", string(hash), "canary")
	if m, ok := checks.get(key); !ok || !m {
		t.Fatalf("the successful check is not remembered: %v %v", m, ok)
	}
	checks.set(key, false)
	if rec := get("prometheus", "canary"); rec.Code != 401 {
		t.Errorf("the cache was not asked: %d", rec.Code)
	}
	clock = clock.Add(authCacheTTL + time.Second)
	if rec := get("prometheus", "canary"); rec.Code != 200 {
		t.Errorf("an expired entry was still taken: %d", rec.Code)
	}
	// A flood of wrong guesses does not grow the cache past its bound.
	for i := range 3 * authCacheMax {
		checks.set(authKey("x", "y", string(rune(i))), false)
	}
	if n := len(checks.entries); n > authCacheMax {
		t.Errorf("%d entries, at most %d", n, authCacheMax)
	}
}

var discard = slog.New(slog.DiscardHandler)
