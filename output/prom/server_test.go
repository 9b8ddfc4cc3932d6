package prom

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/gpucanary/gpucanary/monitor"
)

func TestHandlerPages(t *testing.T) {
	var ready atomic.Bool
	h, err := NewHandler(HandlerOptions{
		Metrics: Options{State: func() monitor.State { return replacedState() }, Version: "v1.2.3"},
		Ready:   ready.Load,
	})
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) (int, string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		return rec.Code, rec.Body.String()
	}
	for _, tc := range []struct {
		name, path string
		ready      bool
		code       int
		has        string
	}{
		{"healthy while starting", "/-/healthy", false, 200, "Healthy"},
		{"not ready before the first read", "/-/ready", false, 503, "not ready"},
		{"ready after it", "/-/ready", true, 200, "Ready"},
		{"metrics", "/metrics", true, 200, `gpucanary_env_torch_info{build="cpu"`},
		{"the agent's own cost", "/metrics", true, 200, "process_cpu_seconds_total"},
		{"landing page", "/", true, 200, "GPU Canary agent"},
		{"landing page links the metrics", "/", true, 200, `href="/metrics"`},
		{"nothing else", "/debug/pprof/", true, 404, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ready.Store(tc.ready)
			code, body := get(tc.path)
			if code != tc.code || !strings.Contains(body, tc.has) {
				t.Errorf("GET %s = %d, want %d with %q; body:\n%.400s", tc.path, code, tc.code, tc.has, body)
			}
		})
	}
}

// serve runs Serve on a loopback port with the web config at cfg and
// returns the base URL; the server is stopped when the test ends and
// must return nil.
func serve(t *testing.T, cfg string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h, err := NewHandler(HandlerOptions{Metrics: Options{State: func() monitor.State { return replacedState() }}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, l, h, cfg, nil) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve after cancel: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("Serve did not return 30s after its context ended")
		}
	})
	return l.Addr().String()
}

func writeFile(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// selfSigned writes a certificate for 127.0.0.1 and its key, and returns
// their paths and a pool that trusts it.
func selfSigned(t *testing.T, dir string) (cert, key string, pool *x509.CertPool) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "gpucanary test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	cert = writeFile(t, dir, "cert.pem", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
	key = writeFile(t, dir, "key.pem", string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})))
	parsed, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(parsed)
	return cert, key, pool
}

// The exporter toolkit's web config turns on TLS and basic auth; the
// agent's pages are then served only over TLS and only with the password.
func TestServeWithWebConfig(t *testing.T) {
	dir := t.TempDir()
	cert, key, pool := selfSigned(t, dir)
	hash, err := bcrypt.GenerateFromPassword([]byte("canary"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	cfg := writeFile(t, dir, "web.yml", "tls_server_config:\n  cert_file: "+cert+"\n  key_file: "+key+
		"\nbasic_auth_users:\n  prometheus: "+string(hash)+"\n")
	if err := ValidateWebConfig(cfg); err != nil {
		t.Fatal(err)
	}
	addr := serve(t, cfg)
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	get := func(user, pass string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, "https://"+addr+"/metrics", nil)
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("", ""); code != http.StatusUnauthorized {
		t.Errorf("no password: %d, want 401", code)
	}
	if code, _ := get("prometheus", "wrong"); code != http.StatusUnauthorized {
		t.Errorf("wrong password: %d, want 401", code)
	}
	if code, body := get("prometheus", "canary"); code != 200 || !strings.Contains(body, "gpucanary_ready 1") {
		t.Errorf("right password: %d\n%.300s", code, body)
	}
	// Plain HTTP on the TLS port gets no metrics.
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Get("http://" + addr + "/metrics")
	if err == nil {
		defer resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Error("plain HTTP was served metrics on a TLS port")
		}
	}
}

func TestServePlainHTTP(t *testing.T) {
	addr := serve(t, "")
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(b), "gpucanary_watch_degraded 1") {
		t.Errorf("%d\n%.300s", resp.StatusCode, b)
	}
}

func TestValidateWebConfig(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, path string
		ok         bool
	}{
		{"none is plain HTTP", "", true},
		{"missing file", filepath.Join(dir, "nope.yml"), false},
		{"not YAML", writeFile(t, dir, "bad.yml", "tls_server_config: [\n"), false},
		{"unknown field", writeFile(t, dir, "typo.yml", "tls_server_conf:\n  cert_file: x\n"), false},
		{"certificate missing", writeFile(t, dir, "nocert.yml", "tls_server_config:\n  cert_file: "+filepath.Join(dir, "no.pem")+"\n  key_file: "+filepath.Join(dir, "no.key")+"\n"), false},
		{"basic auth only", writeFile(t, dir, "auth.yml", "basic_auth_users:\n  p: $2y$10$QOauhQNbBCuQDKes6eFzPeMqBSjb7Mr5DUmpZ/VcEd00UAV/LDeSi\n"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := ValidateWebConfig(tc.path); (err == nil) != tc.ok {
				t.Errorf("ValidateWebConfig(%s) = %v, want ok=%v", tc.path, err, tc.ok)
			}
		})
	}
}

// The web config shipped in deploy/prometheus works as written: its
// password is the one its comment gives (with a test certificate in place
// of the paths it names).
func TestShippedWebConfigExample(t *testing.T) {
	shipped, err := os.ReadFile(filepath.Join("..", "..", "deploy", "prometheus", "web.example.yml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cert, key, pool := selfSigned(t, dir)
	text := strings.NewReplacer("/etc/gpucanary/tls/agent.crt", cert, "/etc/gpucanary/tls/agent.key", key).Replace(string(shipped))
	cfg := writeFile(t, dir, "web.yml", text)
	if err := ValidateWebConfig(cfg); err != nil {
		t.Fatal(err)
	}
	addr := serve(t, cfg)
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, _ := http.NewRequest(http.MethodGet, "https://"+addr+"/-/healthy", nil)
	req.SetBasicAuth("prometheus", "change-me")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("the shipped web config with its documented password: %d", resp.StatusCode)
	}
}
