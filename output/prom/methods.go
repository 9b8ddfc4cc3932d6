package prom

import "net/http"

// readOnly answers every method but GET and HEAD with 405 Method Not
// Allowed and an Allow header (RFC 9110 15.5.6): every page of the agent
// is read-only, and a scraper, a probe or a browser only reads. Without
// it POST, PUT, DELETE, TRACE and CONNECT got the page and a 200, which
// a security scan of the fleet reports and which no client needs.
func readOnly(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "GPU Canary agent: method "+r.Method+" is not allowed; use GET or HEAD.", http.StatusMethodNotAllowed)
			return
		}
		h.ServeHTTP(w, r)
	})
}
