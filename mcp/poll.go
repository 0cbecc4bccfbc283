package mcp

import (
	"context"
	"crypto/sha256"
	"errors"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmem/agentmem/core/store"
)

// DefaultPollInterval is how often, by default, the server looks for
// changes made by other processes to the resources someone subscribed to.
const DefaultPollInterval = 3 * time.Second

// poller watches the subscribed resources of one scope (one user's
// notebook) for changes made by other processes. It runs while at least
// one live session is subscribed under the scope.
type poller struct {
	c     caller
	state map[string]string // uri -> fingerprint ("" = absent)
	// resync lists the URIs this server just changed and notified: the
	// next poll takes their new state without notifying again.
	resync map[string]bool
}

// watch makes sure a poller runs for c and takes the current state of
// uri as its baseline; s.mu is not held. ctx is the subscribe request's:
// the poller keeps its values, not its cancellation, and runs under the
// server's polling group (background.Group.Detach), which Shutdown stops.
func (s *Server) watch(ctx context.Context, c caller, uri string) {
	if s.opts.PollInterval < 0 {
		return
	}
	fp, err := s.fingerprint(ctx, c, uri)
	s.mu.Lock()
	defer s.mu.Unlock()
	p, running := s.pollers[c.scope]
	if !running {
		p = &poller{c: c, state: map[string]string{}, resync: map[string]bool{}}
		pctx := s.polling.Detach(ctx)
		if !s.polling.Go(func(context.Context) { s.poll(pctx, p) }) {
			return // Shutdown began
		}
		s.pollers[c.scope] = p
	}
	if err != nil {
		s.report(ctx, err)
		p.resync[uri] = true // take a baseline at the next poll
		return
	}
	p.state[uri] = fp
}

// poll runs p until no live session is subscribed under its scope, or
// Shutdown.
func (s *Server) poll(ctx context.Context, p *poller) {
	t := time.NewTicker(s.opts.PollInterval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-s.polling.Stopping():
			s.mu.Lock()
			delete(s.pollers, p.c.scope)
			s.mu.Unlock()
			return
		}
		uris, stopped := s.subscribedURIs(p.c.scope)
		if stopped {
			return
		}
		for _, uri := range uris {
			fp, err := s.fingerprint(ctx, p.c, uri)
			if err != nil {
				s.report(ctx, err)
				continue
			}
			s.mu.Lock()
			old, known := p.state[uri]
			quiet := p.resync[uri] || !known
			p.state[uri] = fp
			delete(p.resync, uri)
			s.mu.Unlock()
			if quiet || old == fp {
				continue
			}
			s.notify(ctx, p.c.scope, uri)
		}
		// Forget the state of URIs nobody watches any more.
		s.mu.Lock()
		live := map[string]bool{}
		for _, u := range uris {
			live[u] = true
		}
		for u := range p.state {
			if !live[u] {
				delete(p.state, u)
			}
		}
		s.mu.Unlock()
	}
}

// subscribedURIs returns the URIs live sessions subscribed to under
// scope, forgetting the subscriptions of sessions that ended. When there
// are none, it removes the scope's poller (in the same critical section
// as the check, so a subscription made meanwhile starts a new one) and
// reports stopped.
func (s *Server) subscribedURIs(scope string) (uris []string, stopped bool) {
	live, gen := s.liveSessions()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forgetEnded(live, gen)
	seen := map[string]bool{}
	for sub := range s.subs {
		if sub.scope == scope && !seen[sub.uri] {
			seen[sub.uri] = true
			uris = append(uris, sub.uri)
		}
	}
	if len(uris) == 0 {
		delete(s.pollers, scope)
		return nil, true
	}
	return uris, false
}

// fingerprint returns what identifies the current content of a resource
// of c: a file's version (one read), or a hash of the injected block
// (what the snapshot's reader would see). An absent file is "".
func (s *Server) fingerprint(ctx context.Context, c caller, uri string) (string, error) {
	if uri == SnapshotURI {
		block, err := s.mem.SnapshotOf(ctx, c.inv())
		if err != nil {
			return "", err
		}
		sum := sha256.Sum256([]byte(block))
		return string(sum[:]), nil
	}
	name, ok := fileName(uri)
	if !ok {
		return "", nil
	}
	f, err := s.mem.Store().Read(ctx, c.sc.Path()+"/"+name, 1)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return "v:" + f.Version, nil
}

// notify sends a resources/updated notification for uri to the sessions
// subscribed to it under scope.
func (s *Server) notify(ctx context.Context, scope, uri string) {
	err := s.sdk.ResourceUpdated(ctx, &mcpsdk.ResourceUpdatedNotificationParams{
		URI: uri, Meta: mcpsdk.Meta{metaScope: scope},
	})
	if err != nil {
		s.report(ctx, err)
	}
}

// notified records that this server just notified the subscribers of uri
// under scope of its own change: the poller does not notify it again.
func (s *Server) notified(scope, uri string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p, ok := s.pollers[scope]; ok {
		p.resync[uri] = true
	}
}
