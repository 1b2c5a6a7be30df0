package storetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/vrambot/vrambot/internal/testutil"
	"github.com/vrambot/vrambot/store"
)

// Proxy is a TCP proxy in front of the test Redis that a test can pause.
// While it is paused, what a client already sent waits in the proxy, and is
// delivered in order when it resumes: Redis seems to stall (a slow fork, a
// full disk, a network partition), and a command whose caller gave up still
// reaches Redis later — the case that makes a timed-out SET NX an unknown
// outcome rather than a failure. Only the connections through the proxy
// are affected; other tests' Redis traffic is not.
type Proxy struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	cond   *sync.Cond
	paused bool
	closed bool
	// trigger, when set, pauses the proxy before forwarding the first
	// client write that holds every one of its markers.
	trigger [][]byte
	conns   []net.Conn
	wg      sync.WaitGroup
	// downUntil: connections are refused until then (Restart).
	downUntil time.Time
}

// NewProxy listens on a loopback port and forwards to target (host:port)
// until the test ends.
func NewProxy(tb testing.TB, target string) *Proxy {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("proxy listen: %v", err)
	}
	p := &Proxy{ln: ln, target: target}
	p.cond = sync.NewCond(&p.mu)
	p.wg.Go(p.accept)
	tb.Cleanup(p.close)
	return p
}

// Addr is the proxy's host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Pause holds every byte in both directions until Resume.
func (p *Proxy) Pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.paused = true
}

// PauseBefore arms a pause at the first command a client sends whose bytes
// hold every marker, case-insensitively (for example a key and "NX"):
// that command and all
// after it are held until Resume. It lets a test stall Redis at one
// chosen command, such as the SET NX of a claim after its GET went through.
func (p *Proxy) PauseBefore(markers ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.trigger = nil
	for _, m := range markers {
		p.trigger = append(p.trigger, bytes.ToLower([]byte(m)))
	}
}

// Restart is Redis restarting: every open connection is cut now, and new
// ones are cut as soon as they are made, until down has passed. Combine it
// with a purge of the keys for a Redis that restarts without persistence.
func (p *Proxy) Restart(down time.Duration) {
	p.mu.Lock()
	p.downUntil = time.Now().Add(down)
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	for _, c := range conns {
		c.Close()
	}
}

// Resume delivers what was held and forwards again.
func (p *Proxy) Resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.paused = false
	p.cond.Broadcast()
}

func (p *Proxy) accept() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		down := time.Now().Before(p.downUntil)
		p.mu.Unlock()
		if down {
			client.Close()
			continue
		}
		server, err := net.DialTimeout("tcp", p.target, 2*time.Second)
		if err != nil {
			client.Close()
			continue
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			client.Close()
			server.Close()
			return
		}
		p.conns = append(p.conns, client, server)
		p.mu.Unlock()
		p.wg.Go(func() { p.pipe(server, client, true) })
		p.wg.Go(func() { p.pipe(client, server, false) })
	}
}

// pipe copies src to dst, waiting while paused; when src ends, whatever it
// sent before is still delivered, then dst's write side is closed.
func (p *Proxy) pipe(dst, src net.Conn, toServer bool) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if toServer {
				p.checkTrigger(buf[:n])
			}
			if !p.waitOpen() {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if tcp, ok := dst.(*net.TCPConn); ok && errors.Is(err, io.EOF) {
				_ = tcp.CloseWrite()
			} else {
				dst.Close()
			}
			return
		}
	}
}

// checkTrigger pauses when chunk holds every marker of an armed trigger.
func (p *Proxy) checkTrigger(chunk []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.trigger) == 0 {
		return
	}
	lower := bytes.ToLower(chunk)
	for _, m := range p.trigger {
		if !bytes.Contains(lower, m) {
			return
		}
	}
	p.trigger, p.paused = nil, true
}

// waitOpen blocks while paused; false once the proxy is closed.
func (p *Proxy) waitOpen() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.paused && !p.closed {
		p.cond.Wait()
	}
	return !p.closed
}

func (p *Proxy) close() {
	p.mu.Lock()
	p.closed = true
	p.cond.Broadcast()
	conns := p.conns
	p.mu.Unlock()
	p.ln.Close()
	for _, c := range conns {
		c.Close()
	}
	p.wg.Wait()
}

// ProxiedRedisURL is RedisURL() with its host replaced by the proxy's.
func (p *Proxy) ProxiedRedisURL() string {
	u, err := url.Parse(RedisURL())
	if err != nil {
		return ""
	}
	u.Host = p.Addr()
	return u.String()
}

// NewPausableRedis is NewRedis through a Proxy: a store under a unique
// prefix whose connection the test can pause. The keys are purged directly,
// not through the proxy, when the test ends.
func NewPausableRedis(tb testing.TB) (*store.Redis, *Proxy) {
	tb.Helper()
	direct := NewRedis(tb) // skips or fails (CI) without Redis; purges at the end
	u, err := url.Parse(RedisURL())
	if err != nil {
		tb.Fatalf("REDIS_URL: %v", err)
	}
	p := NewProxy(tb, u.Host)
	r, err := store.NewRedis(p.ProxiedRedisURL(), store.WithPrefix(direct.Prefix()))
	if err != nil {
		tb.Fatalf("NewRedis through the proxy: %v", err)
	}
	tb.Cleanup(func() { r.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	testutil.NeedService(tb, "Redis through a proxy", r.Ping(ctx))
	return r, p
}

// UniqueID returns a random id for keys a test makes outside a prefixed
// store (an event id, say), so that it can purge exactly those.
func UniqueID() string { return rand.Text()[:12] }
