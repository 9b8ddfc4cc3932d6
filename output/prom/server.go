package prom

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/exporter-toolkit/web"
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
func NewRegistry(o Options) *prometheus.Registry {
	r := prometheus.NewRegistry()
	r.MustRegister(NewCollector(o))
	return r
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
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	logger := o.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	landing, err := web.NewLandingPage(web.LandingConfig{
		Name:        "GPU Canary agent",
		Description: "Why a GPU sits idle: CPU torch builds in CUDA environments, jobs computing on the CPU, torch builds this driver or GPU cannot run.",
		Version:     o.Metrics.Version,
		Profiling:   "false",
		Links: []web.LandingLinks{
			{Address: "/metrics", Text: "Metrics"},
			{Address: "/-/healthy", Text: "Health", Description: "200 while the agent runs"},
			{Address: "/-/ready", Text: "Readiness", Description: "200 once every environment has been read once"},
		},
	})
	if err != nil {
		return nil, fmt.Errorf("making the landing page: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", landing)
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		ErrorHandling: promhttp.ContinueOnError,
	}))
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

// ValidateWebConfig checks the exporter toolkit's web config file (TLS
// and basic auth) before anything starts, so a bad one is a usage error.
// An empty path means plain HTTP.
func ValidateWebConfig(path string) error {
	if err := web.Validate(path); err != nil {
		return fmt.Errorf("web config %s: %w", path, err)
	}
	return nil
}

// Serve serves h on l until ctx ends, then shuts the server down. TLS and
// basic auth come from the web config file at webConfig ("" is plain
// HTTP), re-read by the toolkit on each connection.
func Serve(ctx context.Context, l net.Listener, h http.Handler, webConfig string, logger *slog.Logger) error {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelDebug)}
	noSocket := false
	flags := &web.FlagConfig{WebListenAddresses: &[]string{l.Addr().String()}, WebSystemdSocket: &noSocket, WebConfigFile: &webConfig}
	served := make(chan error, 1)
	go func() { served <- web.Serve(l, srv, flags, logger) }()
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
