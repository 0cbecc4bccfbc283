package mcp

import (
	"context"
	"sync/atomic"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmem/agentmem/core/memory"
)

// subscription is one session's subscription to one URI of one scope.
type subscription struct {
	session *mcpsdk.ServerSession
	scope   string // hash of the scope path
	uri     string
}

// metaScope tags a resources/updated notification with the hash of the
// scope it is about; the sending middleware delivers it only to sessions
// subscribed under that scope, and strips the tag.
const metaScope = "agentmem/scope"

// changed notifies the subscribers of a file (and of the snapshot) that a
// tool call changed it. A replay changed nothing.
func (s *Server) changed(ctx context.Context, scope string, res any) {
	var file string
	switch r := res.(type) {
	case *memory.WriteResult:
		if r.Replayed {
			return
		}
		file = r.File
	case *memory.DeleteResult:
		if r.Replayed || r.Status != "deleted" {
			return
		}
		file = r.File
	default:
		return
	}
	for _, uri := range []string{FileURIPrefix + file, SnapshotURI} {
		if !s.subscribed(scope, uri) {
			continue
		}
		s.notified(scope, uri)
		s.notify(ctx, scope, uri)
	}
}

// subscribed reports whether any live session subscribed to uri under
// scope, and forgets the subscriptions of sessions that ended.
func (s *Server) subscribed(scope, uri string) bool {
	live, gen := s.liveSessions()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forgetEnded(live, gen)
	for sub := range s.subs {
		if sub.scope == scope && sub.uri == uri {
			return true
		}
	}
	return false
}

// afterListing, when set (by tests), runs between liveSessions' listing
// of the sessions and its caller taking s.mu.
var afterListing atomic.Pointer[func()]

// liveSessions lists the sessions connected now, and the number of
// subscriptions made before the listing: forgetEnded drops only those, so
// a session that connects and subscribes after the listing (it is not in
// it) keeps its subscription. The listing is taken without s.mu, which
// the SDK's handlers (subscribe) take.
func (s *Server) liveSessions() (map[*mcpsdk.ServerSession]bool, uint64) {
	s.mu.Lock()
	gen := s.subGen
	s.mu.Unlock()
	live := map[*mcpsdk.ServerSession]bool{}
	for ss := range s.sdk.Sessions() {
		live[ss] = true
	}
	if f := afterListing.Load(); f != nil {
		(*f)()
	}
	return live, gen
}

// forgetEnded drops the subscriptions made up to gen by sessions not in
// live (see liveSessions). s.mu must be held.
func (s *Server) forgetEnded(live map[*mcpsdk.ServerSession]bool, gen uint64) {
	for sub, made := range s.subs {
		if made <= gen && !live[sub.session] {
			delete(s.subs, sub)
		}
	}
}

// filterUpdates is sending middleware: a resources/updated notification
// this server tagged with a scope reaches only the sessions subscribed
// under that scope (the SDK's own bookkeeping knows URIs, which are the
// same for every user), without the tag.
func (s *Server) filterUpdates(next mcpsdk.MethodHandler) mcpsdk.MethodHandler {
	return func(ctx context.Context, method string, req mcpsdk.Request) (mcpsdk.Result, error) {
		p, ok := req.GetParams().(*mcpsdk.ResourceUpdatedNotificationParams)
		ss, isServer := req.GetSession().(*mcpsdk.ServerSession)
		if !ok || !isServer {
			return next(ctx, method, req)
		}
		scope, tagged := p.Meta[metaScope].(string)
		if !tagged {
			return next(ctx, method, req)
		}
		s.mu.Lock()
		_, want := s.subs[subscription{ss, scope, p.URI}]
		s.mu.Unlock()
		if !want {
			return nil, nil
		}
		meta := mcpsdk.Meta{}
		for k, v := range p.Meta {
			if k != metaScope {
				meta[k] = v
			}
		}
		if len(meta) == 0 {
			meta = nil
		}
		out := &mcpsdk.ServerRequest[*mcpsdk.ResourceUpdatedNotificationParams]{
			Session: ss, Params: &mcpsdk.ResourceUpdatedNotificationParams{URI: p.URI, Meta: meta},
		}
		return next(ctx, method, out)
	}
}

func (s *Server) subscribe(ctx context.Context, req *mcpsdk.SubscribeRequest) error {
	c, err := s.resolve(ctx, req)
	if err != nil {
		return s.fail(ctx, err)
	}
	if req.Params.URI != SnapshotURI {
		if _, ok := fileName(req.Params.URI); !ok {
			return mcpsdk.ResourceNotFoundError(req.Params.URI)
		}
	}
	s.mu.Lock()
	s.subGen++
	s.subs[subscription{req.Session, c.scope, req.Params.URI}] = s.subGen
	s.mu.Unlock()
	s.watch(ctx, c, req.Params.URI)
	return nil
}

func (s *Server) unsubscribe(ctx context.Context, req *mcpsdk.UnsubscribeRequest) error {
	c, err := s.resolve(ctx, req)
	if err != nil {
		return s.fail(ctx, err)
	}
	s.mu.Lock()
	delete(s.subs, subscription{req.Session, c.scope, req.Params.URI})
	s.mu.Unlock()
	return nil
}
