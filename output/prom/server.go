package prom

import (
	"compress/gzip"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"html"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultListenAddress is the agent's address unless a fleet says
// otherwise: loopback, because the metrics name the machine's environment
// paths and processes, and an exporter should not show them to the
// network until someone chooses to (with TLS and basic auth in a web
// config file). 9835 lies in the range Prometheus keeps for exporters
// (9100-9999).
const DefaultListenAddress = "localhost:9835"

// NewRegistry holds GPU Canary's metrics of o and nothing else: what a
// textfile for node_exporter carries (node_exporter has its own go_ and
// process_ metrics, and a textfile that repeated them would clash).
func NewRegistry(o Options) *Registry {
	return &Registry{sources: []source{NewCollector(o)}}
}

// HandlerOptions configures the agent's HTTP handler.
type HandlerOptions struct {
	Metrics Options
	// Ready reports whether the engine has done its first full read;
	// /-/ready answers 503 until then.
	Ready  func() bool
	Logger *slog.Logger
}

// NewHandler serves the agent's pages: /metrics (GPU Canary's metrics
// plus the agent's own go_ and process_ metrics, so its cost can be
// watched), /-/healthy, /-/ready and a landing page at /.
func NewHandler(o HandlerOptions) (http.Handler, error) {
	reg := NewRegistry(o.Metrics)
	reg.sources = append(reg.sources, selfCollector{})
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	landing := landingPage(o.Metrics.Version)
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=UTF-8")
		w.Write(landing)
	})
	mux.Handle("/metrics", metricsHandler(reg, logger))
	mux.HandleFunc("/-/healthy", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "GPU Canary agent is Healthy.")
	})
	mux.HandleFunc("/-/ready", func(w http.ResponseWriter, _ *http.Request) {
		if o.Ready != nil && !o.Ready() {
			http.Error(w, "GPU Canary agent is not ready: the first read of the environments is still running.", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "GPU Canary agent is Ready.")
	})
	return readOnly(mux), nil
}

// The landing page's words.
const (
	agentName        = "GPU Canary agent"
	agentDescription = "Why a GPU sits idle: CPU torch builds in CUDA environments, jobs computing on the CPU, torch builds this driver or GPU cannot run."
)

// landingPage is the page at /: the agent's name, what it is for, its
// version and its pages.
func landingPage(version string) []byte {
	var b strings.Builder
	b.WriteString(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<title>` + agentName + `</title>
<style>body { font-family: sans-serif; margin: 0 2em; } header { border-bottom: 3px solid #e6522c; }</style>
</head>
<body>
<header><h1>` + agentName + `</h1></header>
<main>
<h2>` + html.EscapeString(agentDescription) + "</h2>\n")
	if version != "" {
		b.WriteString("<div>Version: " + html.EscapeString(version) + "</div>\n")
	}
	b.WriteString("<ul>\n")
	for _, l := range []struct{ href, text, what string }{
		{"/metrics", "Metrics", ""},
		{"/-/healthy", "Health", "200 while the agent runs"},
		{"/-/ready", "Readiness", "200 once every environment has been read once"},
	} {
		b.WriteString(`<li><a href="` + l.href + `">` + l.text + "</a>")
		if l.what != "" {
			b.WriteString(": " + html.EscapeString(l.what))
		}
		b.WriteString("</li>\n")
	}
	b.WriteString("</ul>\n</main>\n</body>\n</html>\n")
	return []byte(b.String())
}

// textContentType is the text exposition format's media type.
const textContentType = "text/plain; version=0.0.4; charset=utf-8"

// metricsHandler serves g's metrics as text, gzipped when the scraper
// accepts it (Prometheus does). A collection that fails in part serves
// what it could and logs the rest, so one unreadable file does not blank
// a scrape.
func metricsHandler(g Gatherer, logger *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fams, err := g.Gather()
		if err != nil {
			logger.Warn("collecting metrics", "err", err)
		}
		body := appendText(nil, fams)
		h := w.Header()
		h.Set("Content-Type", textContentType)
		h.Add("Vary", "Accept-Encoding")
		if !acceptsGzip(r.Header.Values("Accept-Encoding")) {
			w.Write(body)
			return
		}
		h.Set("Content-Encoding", "gzip")
		gz := gzip.NewWriter(w)
		gz.Write(body)
		gz.Close()
	})
}

// acceptsGzip is whether Accept-Encoding values name gzip (or *) with a
// weight above zero (RFC 9110 12.5.3).
func acceptsGzip(values []string) bool {
	for _, v := range values {
		for part := range strings.SplitSeq(v, ",") {
			coding, params, _ := strings.Cut(part, ";")
			coding = strings.TrimSpace(coding)
			if !strings.EqualFold(coding, "gzip") && coding != "*" {
				continue
			}
			if q, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
				if w, err := strconv.ParseFloat(strings.TrimSpace(q), 64); err != nil || w <= 0 {
					continue
				}
			}
			return true
		}
	}
	return false
}

// maxHeaderBytes bounds a request's headers: a scrape's are a few
// hundred bytes, basic auth included.
const maxHeaderBytes = 16 << 10

// Serve serves h on l until ctx ends, then shuts the server down. TLS and
// basic auth come from the web config file at webConfig ("" is plain
// HTTP; webconfig.go), read again for each connection and each request.
func Serve(ctx context.Context, l net.Listener, h http.Handler, webConfig string, logger *slog.Logger) error {
	return serveCapped(ctx, l, h, webConfig, logger, connCap(fileLimit()), nil)
}

// serveCapped is Serve with at most maxOpen connections open at once;
// limited, when set, is given the limiting listener (for tests).
func serveCapped(ctx context.Context, l net.Listener, h http.Handler, webConfig string, logger *slog.Logger, maxOpen int, limited func(*limitListener)) error {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	// Clients that connect and wait, or keep a connection alive and send
	// nothing, are closed (the timeouts) and cannot hold more than a
	// share of the file descriptors (the limiter): the engine keeps the
	// rest, and a scrape always gets in.
	ll := newLimitListener(l, maxOpen)
	l = ll
	if limited != nil {
		limited(ll)
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      2 * time.Minute,
		IdleTimeout:       90 * time.Second,
		MaxHeaderBytes:    maxHeaderBytes,
		ConnState:         ll.connState,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelDebug),
	}
	if webConfig != "" {
		if err := useWebConfig(srv, webConfig, logger); err != nil {
			return fmt.Errorf("web config %s: %w", webConfig, err)
		}
	}
	logger.Info("serving metrics", "address", l.Addr().String(), "tls", srv.TLSConfig != nil)
	served := make(chan error, 1)
	go func() {
		if srv.TLSConfig != nil {
			served <- srv.ServeTLS(l, "", "")
			return
		}
		served <- srv.Serve(l)
	}()
	select {
	case err := <-served:
		return fmt.Errorf("serving metrics on %s: %w", l.Addr(), err)
	case <-ctx.Done():
	}
	stop, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(stop); err != nil {
		logger.Warn("stopping the metrics server", "err", err)
	}
	if err := <-served; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving metrics on %s: %w", l.Addr(), err)
	}
	return nil
}

// useWebConfig puts the web config at path in front of srv's handler
// (headers, basic auth) and, when it configures TLS, sets srv.TLSConfig:
// each new connection reads the file again and takes its certificate,
// so a rotated one needs no restart. Whether TLS is served at all, and
// HTTP/2 with it, is decided here, once.
func useWebConfig(srv *http.Server, path string, logger *slog.Logger) error {
	c, err := readWebConfig(path)
	if err != nil {
		return err
	}
	srv.Handler = &webHandler{path: path, next: srv.Handler, logger: logger, checks: newAuthCache()}
	first, err := c.tlsConfig()
	if errors.Is(err, errNoTLS) {
		return nil
	}
	if err != nil {
		return err
	}
	protos := []string{"h2", "http/1.1"}
	if !c.http2() {
		// A non-nil, empty map turns HTTP/2 off (net/http's rule).
		srv.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){}
		protos = protos[1:]
	}
	first.NextProtos = protos
	first.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
		c, err := readWebConfig(path)
		var cfg *tls.Config
		if err == nil {
			cfg, err = c.tlsConfig()
		}
		if err != nil {
			logger.Error("reading the web config for a TLS connection", "path", path, "err", err)
			return nil, err
		}
		cfg.NextProtos = protos
		return cfg, nil
	}
	srv.TLSConfig = first
	return nil
}
