package prom

import (
	"bytes"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"
	"gopkg.in/yaml.v3"
)

// The web config file (--web.config.file): the Prometheus exporter
// toolkit's format, read here by GPU Canary's own reader rather than by
// the toolkit (whose package initialisation slowed every start of the one
// CLI, docs/performance.md). The format:
// https://github.com/prometheus/exporter-toolkit/blob/master/docs/web-configuration.md
//
// The reader is strict: a key it does not know is an error, and so is a
// key of the format it does not support (rate_limit), rather than a
// setting silently left out. Like the toolkit, the file is read again for
// every new TLS connection (a rotated certificate is taken without a
// restart) and for every request (basic auth users and headers); whether
// to serve TLS at all, and HTTP/2, are decided when the agent starts.

// webConfig is the file's content.
type webConfig struct {
	TLS   tlsServerConfig   `yaml:"tls_server_config"`
	HTTP  httpServerConfig  `yaml:"http_server_config"`
	Users map[string]string `yaml:"basic_auth_users"`
	// RateLimit is the toolkit's rate_limit, which the agent does not
	// have: its connection limits (limit.go) keep clients from
	// exhausting it. Given, it is an error.
	RateLimit any `yaml:"rate_limit"`
}

type tlsServerConfig struct {
	Cert              string   `yaml:"cert"`
	Key               string   `yaml:"key"`
	ClientCA          string   `yaml:"client_ca"`
	CertFile          string   `yaml:"cert_file"`
	KeyFile           string   `yaml:"key_file"`
	ClientAuthType    string   `yaml:"client_auth_type"`
	ClientCAFile      string   `yaml:"client_ca_file"`
	ClientAllowedSANs []string `yaml:"client_allowed_sans"`
	MinVersion        string   `yaml:"min_version"`
	MaxVersion        string   `yaml:"max_version"`
	CipherSuites      []string `yaml:"cipher_suites"`
	CurvePreferences  []string `yaml:"curve_preferences"`
	// PreferServerCipherSuites is read and has no effect: crypto/tls has
	// chosen the suite itself since Go 1.17, for the toolkit too.
	PreferServerCipherSuites *bool `yaml:"prefer_server_cipher_suites"`
}

type httpServerConfig struct {
	HTTP2   *bool             `yaml:"http2"`
	Headers map[string]string `yaml:"headers"`
}

// http2 is whether HTTP/2 is offered over TLS (the default).
func (c *webConfig) http2() bool { return c.HTTP.HTTP2 == nil || *c.HTTP.HTTP2 }

// readWebConfig reads and checks the file at path, all but the TLS
// files (tlsConfig loads those). Relative file names in it are taken
// from the file's folder, as the toolkit does.
func readWebConfig(path string) (*webConfig, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c := &webConfig{}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(c); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	var more yaml.Node
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		return nil, errors.New("more than one YAML document")
	}
	if c.RateLimit != nil {
		return nil, errors.New("rate_limit is not supported by the GPU Canary agent (its connection limits apply instead); remove it")
	}
	if err := checkHeaders(c.HTTP.Headers); err != nil {
		return nil, err
	}
	for _, u := range sortedKeys(c.Users) {
		if _, err := bcrypt.Cost([]byte(c.Users[u])); err != nil {
			return nil, fmt.Errorf("basic_auth_users: %s: not a bcrypt hash: %w", u, err)
		}
	}
	dir := filepath.Dir(path)
	for _, p := range []*string{&c.TLS.CertFile, &c.TLS.KeyFile, &c.TLS.ClientCAFile} {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(dir, *p)
		}
	}
	return c, nil
}

// headerValues are the response headers the file may set, with the values
// allowed where the header has a fixed set (the toolkit's list).
var headerValues = map[string][]string{
	"Content-Security-Policy":   nil,
	"Strict-Transport-Security": nil,
	"X-Content-Type-Options":    {"nosniff"},
	"X-Frame-Options":           {"deny", "sameorigin"},
	"X-XSS-Protection":          nil,
}

func checkHeaders(h map[string]string) error {
	for _, k := range sortedKeys(h) {
		allowed, ok := headerValues[k]
		switch {
		case !ok:
			return fmt.Errorf("http_server_config: headers: %s cannot be set (only %q)", k, sortedKeys(headerValues))
		case len(allowed) > 0 && !slices.Contains(allowed, h[k]):
			return fmt.Errorf("http_server_config: headers: %s: %q is not one of %q", k, h[k], allowed)
		}
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// errNoTLS: the file turns on no TLS (basic auth alone is served over
// plain HTTP).
var errNoTLS = errors.New("no TLS configured")

var tlsVersions = map[string]uint16{
	"TLS10": tls.VersionTLS10,
	"TLS11": tls.VersionTLS11,
	"TLS12": tls.VersionTLS12,
	"TLS13": tls.VersionTLS13,
}

var tlsCurves = map[string]tls.CurveID{
	"CurveP256": tls.CurveP256,
	"CurveP384": tls.CurveP384,
	"CurveP521": tls.CurveP521,
	"X25519":    tls.X25519,
}

var clientAuthTypes = map[string]tls.ClientAuthType{
	"":                           tls.NoClientCert,
	"NoClientCert":               tls.NoClientCert,
	"RequestClientCert":          tls.RequestClientCert,
	"RequireAnyClientCert":       tls.RequireAnyClientCert,
	"RequireClientCert":          tls.RequireAnyClientCert, // the toolkit's older name
	"VerifyClientCertIfGiven":    tls.VerifyClientCertIfGiven,
	"RequireAndVerifyClientCert": tls.RequireAndVerifyClientCert,
}

// tlsConfig is the server's TLS configuration, its certificate loaded
// (errNoTLS when the file configures none).
func (c *webConfig) tlsConfig() (*tls.Config, error) {
	t := c.TLS
	if t.Cert == "" && t.CertFile == "" && t.Key == "" && t.KeyFile == "" &&
		t.ClientCA == "" && t.ClientCAFile == "" && t.ClientAuthType == "" {
		return nil, errNoTLS
	}
	certPEM, err := inlineOrFile("cert", t.Cert, t.CertFile)
	if err != nil {
		return nil, err
	}
	keyPEM, err := inlineOrFile("key", t.Key, t.KeyFile)
	if err != nil {
		return nil, err
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("tls_server_config: the certificate and key do not load as a pair: %w", err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS13}
	for _, v := range []struct {
		key, name string
		to        *uint16
	}{{"min_version", t.MinVersion, &cfg.MinVersion}, {"max_version", t.MaxVersion, &cfg.MaxVersion}} {
		if v.name == "" {
			continue
		}
		n, ok := tlsVersions[v.name]
		if !ok {
			return nil, fmt.Errorf("tls_server_config: %s: unknown TLS version %q (one of TLS10, TLS11, TLS12, TLS13)", v.key, v.name)
		}
		*v.to = n
	}
	if cfg.MinVersion > cfg.MaxVersion {
		return nil, fmt.Errorf("tls_server_config: min_version %s is above max_version %s", t.MinVersion, t.MaxVersion)
	}
	for _, name := range t.CipherSuites {
		i := slices.IndexFunc(tls.CipherSuites(), func(s *tls.CipherSuite) bool { return s.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("tls_server_config: cipher_suites: unknown or insecure cipher suite %q (see crypto/tls.CipherSuites)", name)
		}
		cfg.CipherSuites = append(cfg.CipherSuites, tls.CipherSuites()[i].ID)
	}
	for _, name := range t.CurvePreferences {
		id, ok := tlsCurves[name]
		if !ok {
			return nil, fmt.Errorf("tls_server_config: curve_preferences: unknown curve %q (one of %q)", name, sortedKeys(tlsCurves))
		}
		cfg.CurvePreferences = append(cfg.CurvePreferences, id)
	}
	auth, ok := clientAuthTypes[t.ClientAuthType]
	if !ok {
		return nil, fmt.Errorf("tls_server_config: client_auth_type: unknown policy %q", t.ClientAuthType)
	}
	cfg.ClientAuth = auth
	if t.ClientCA != "" || t.ClientCAFile != "" {
		caPEM, err := inlineOrFile("client_ca", t.ClientCA, t.ClientCAFile)
		if err != nil {
			return nil, err
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caPEM) {
			return nil, errors.New("tls_server_config: the client CA holds no PEM certificate")
		}
		cfg.ClientCAs = pool
		if auth == tls.NoClientCert {
			return nil, errors.New("tls_server_config: a client CA is given without a client_auth_type that asks for client certificates")
		}
	}
	if t.ClientAllowedSANs != nil {
		cfg.VerifyPeerCertificate = allowedSANs(t.ClientAllowedSANs)
	}
	return cfg, nil
}

// inlineOrFile is the PEM given inline (key) or in a file (key+"_file"),
// exactly one of them.
func inlineOrFile(key, inline, file string) ([]byte, error) {
	switch {
	case inline != "" && file != "":
		return nil, fmt.Errorf("tls_server_config: both %s and %s_file are given; give one", key, key)
	case inline != "":
		return []byte(inline), nil
	case file == "":
		return nil, fmt.Errorf("tls_server_config: missing one of %s or %s_file", key, key)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("tls_server_config: reading %s_file: %w", key, err)
	}
	return b, nil
}

// allowedSANs accepts a client certificate with one of the names (DNS,
// e-mail, IP address or URI) among its subject alternative names.
func allowedSANs(allowed []string) func([][]byte, [][]*x509.Certificate) error {
	return func(raw [][]byte, _ [][]*x509.Certificate) error {
		if len(raw) == 0 {
			return errors.New("no client certificate, and client_allowed_sans is set")
		}
		cert, err := x509.ParseCertificate(raw[0])
		if err != nil {
			return fmt.Errorf("parsing the client certificate: %w", err)
		}
		names := slices.Concat(cert.DNSNames, cert.EmailAddresses)
		for _, ip := range cert.IPAddresses {
			names = append(names, ip.String())
		}
		for _, u := range cert.URIs {
			names = append(names, u.String())
		}
		for _, n := range names {
			if slices.Contains(allowed, n) {
				return nil
			}
		}
		return fmt.Errorf("the client certificate's names %q are none of client_allowed_sans", names)
	}
}

// ValidateWebConfig checks the web config file (TLS and basic auth)
// before anything starts, as Serve would use it: the file reads, its
// hashes are bcrypt's, its certificate and key load as a pair and its
// client CA holds a certificate. A bad one is then a usage error, not a
// server that fails at its first connection. An empty path means plain
// HTTP.
func ValidateWebConfig(path string) error {
	if path == "" {
		return nil
	}
	c, err := readWebConfig(path)
	if err == nil {
		_, err = c.tlsConfig()
	}
	if err != nil && !errors.Is(err, errNoTLS) {
		return fmt.Errorf("web config %s: %w", path, err)
	}
	return nil
}

// webHandler serves h with the web config's response headers and, when
// it has users, basic auth; it reads the file for each request.
type webHandler struct {
	path   string
	next   http.Handler
	logger *slog.Logger
	checks *authCache
	// bcryptMu runs one bcrypt comparison at a time: each costs tens of
	// milliseconds of CPU, and a flood of wrong passwords must not take
	// every core from the engine.
	bcryptMu sync.Mutex
}

func (h *webHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c, err := readWebConfig(h.path)
	if err != nil {
		h.logger.Error("reading the web config", "path", h.path, "err", err)
		http.Error(w, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
		return
	}
	for k, v := range c.HTTP.Headers {
		w.Header().Set(k, v)
	}
	if len(c.Users) == 0 || h.authorized(c.Users, r) {
		h.next.ServeHTTP(w, r)
		return
	}
	w.Header().Set("WWW-Authenticate", `Basic realm="GPU Canary agent", charset="UTF-8"`)
	http.Error(w, http.StatusText(http.StatusUnauthorized), http.StatusUnauthorized)
}

// authorized checks the request's basic auth against users. An unknown
// user's password is compared with a configured user's hash all the same,
// so the time taken does not tell which users exist; the answer is then
// no whatever the comparison says.
func (h *webHandler) authorized(users map[string]string, r *http.Request) bool {
	user, pass, ok := r.BasicAuth()
	if !ok {
		return false
	}
	hash, known := users[user]
	if !known {
		hash = users[sortedKeys(users)[0]]
	}
	key := authKey(user, hash, pass)
	match, cached := h.checks.get(key)
	if !cached {
		h.bcryptMu.Lock()
		match = bcrypt.CompareHashAndPassword([]byte(hash), []byte(pass)) == nil
		h.bcryptMu.Unlock()
		h.checks.set(key, match)
	}
	return known && match
}

// authKey names one check: the user, the hash it was checked against and
// the password, hashed so the cache holds no password.
func authKey(user, hash, pass string) [sha256.Size]byte {
	h := sha256.New()
	for _, s := range []string{user, hash, pass} {
		fmt.Fprintf(h, "%d:%s", len(s), s)
	}
	return [sha256.Size]byte(h.Sum(nil))
}

// authCache remembers recent bcrypt comparisons for a while, so that a
// scrape every 15 s does not pay bcrypt's cost (tens of milliseconds of
// CPU at cost 10) each time. A changed password or hash is another key.
type authCache struct {
	mu      sync.Mutex
	entries map[[sha256.Size]byte]authEntry
	now     func() time.Time
}

type authEntry struct {
	match bool
	until time.Time
}

const (
	// authCacheTTL is how long a comparison is remembered.
	authCacheTTL = 5 * time.Minute
	// authCacheMax bounds the entries: a few scrapers' credentials, and
	// not a flood's guesses.
	authCacheMax = 100
)

func newAuthCache() *authCache {
	return &authCache{entries: map[[sha256.Size]byte]authEntry{}, now: time.Now}
}

func (c *authCache) get(key [sha256.Size]byte) (match, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || c.now().After(e.until) {
		return false, false
	}
	return e.match, true
}

func (c *authCache) set(key [sha256.Size]byte, match bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if len(c.entries) >= authCacheMax {
		for k, e := range c.entries {
			if now.After(e.until) {
				delete(c.entries, k)
			}
		}
		// Still full: forget about a tenth, whichever the map gives first.
		for k := range c.entries {
			if len(c.entries) < authCacheMax*9/10 {
				break
			}
			delete(c.entries, k)
		}
	}
	c.entries[key] = authEntry{match: match, until: now.Add(authCacheTTL)}
}
