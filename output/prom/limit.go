package prom

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// Connection limits of the agent's server. Each connection is a file
// descriptor, and the engine needs descriptors too (the environments'
// files, /proc, the journals, its state): a flood of clients that
// connect and wait must neither take them all (the engine would read
// "too many open files" as an unreadable environment) nor keep
// Prometheus out.
const (
	// maxConns caps the open connections whatever the file limit.
	maxConns = 256
	// minConns is the cap however low the file limit is.
	minConns = 4
	// reservedFDs are kept for the engine (reserveFor: a quarter of the
	// file limit, at least this many).
	reservedFDs = 64
)

// connCap is how many connections the server keeps open when the
// process may open nofile descriptors (0: not known).
func connCap(nofile uint64) int {
	if nofile == 0 {
		return maxConns
	}
	reserve := max(uint64(reservedFDs), nofile/4)
	if nofile <= reserve+minConns {
		return minConns
	}
	return int(min(uint64(maxConns), nofile-reserve))
}

// limitListener caps the connections open at once. At the cap, a new
// connection is taken in and the connection idle the longest (connected
// and not yet asking, or kept alive between requests) is closed for it;
// when every one is serving a request, the new one is closed instead.
// Unlike a listener that stops accepting at the cap, idle clients cannot
// hold Prometheus out: a scrape always finds a place.
type limitListener struct {
	net.Listener
	max int

	mu    sync.Mutex
	conns map[*limitedConn]struct{}
}

func newLimitListener(l net.Listener, max int) *limitListener {
	return &limitListener{Listener: l, max: max, conns: map[*limitedConn]struct{}{}}
}

// limitedConn is one accepted connection: busy while it serves a
// request, idle since a time otherwise.
type limitedConn struct {
	net.Conn
	l     *limitListener
	once  sync.Once
	busy  bool
	since time.Time
}

func (c *limitedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c)
		c.l.mu.Unlock()
	})
	return err
}

// Accept takes the next connection, making room for it at the cap.
func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		lc := &limitedConn{Conn: c, l: l, since: time.Now()}
		l.mu.Lock()
		var victim *limitedConn
		if len(l.conns) >= l.max {
			for o := range l.conns {
				if !o.busy && (victim == nil || o.since.Before(victim.since)) {
					victim = o
				}
			}
			if victim == nil {
				// Every connection serves a request: this one waits its turn
				// by trying again.
				l.mu.Unlock()
				c.Close()
				continue
			}
			delete(l.conns, victim)
		}
		l.conns[lc] = struct{}{}
		l.mu.Unlock()
		if victim != nil {
			victim.Close()
		}
		return lc, nil
	}
}

// connState is the server's ConnState hook: it marks a connection busy
// while a request is served and idle (since now) between requests.
func (l *limitListener) connState(c net.Conn, s http.ConnState) {
	lc := unwrapConn(c)
	if lc == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	switch s {
	case http.StateActive:
		lc.busy = true
	case http.StateIdle:
		lc.busy, lc.since = false, time.Now()
	}
}

// unwrapConn finds the limitedConn under a connection the server was
// given (TLS wraps it).
func unwrapConn(c net.Conn) *limitedConn {
	for range 4 {
		switch v := c.(type) {
		case *limitedConn:
			return v
		case interface{ NetConn() net.Conn }:
			c = v.NetConn()
		default:
			return nil
		}
	}
	return nil
}
