package console

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// routeTarget is rt's pattern filled for alice's namespace and one of her
// files.
func routeTarget(rt route) string {
	return strings.NewReplacer("{ns}", "alice", "{path...}", "main/MEMORY.md", "{$}", "").Replace(rt.pattern)
}

// asPrincipal sends rt's request as key (the API) or as key's session
// (a page), naming alice's namespace and file (also as a form's path) and
// confirming what needs a confirmation.
func (e *env) asPrincipal(rt route, key string) int {
	e.t.Helper()
	target := routeTarget(rt)
	if !rt.isPage() {
		return e.do(req{method: rt.method, target: target + "?confirm=alice", key: key}).Code
	}
	pr := pageReq{method: rt.method, target: target, cookie: e.signIn(key)}
	if rt.method == "POST" {
		pr.form = url.Values{"confirm": {"alice"}, "path": {"main/MEMORY.md"}}
	}
	return e.page(pr).Code
}

// TestRouteRoles walks the route table: every admin route, API operation
// and page alike, refuses a user's key on the user's own namespace with
// 403 and changes nothing, and answers an admin's the same request; no
// other route refuses that user as not an admin. The admin routes are
// exactly the ones that list or forget namespaces, of both kinds, so the
// walk cannot pass empty; the public ones are the OpenAPI document and
// signing in and out.
func TestRouteRoles(t *testing.T) {
	wantAdmin := map[string]bool{"GET listNamespaces": true, "DELETE forgetNamespace": true, "GET page forget": true, "POST page forget": true}
	wantPublic := map[string]bool{"GET getOpenAPI": true, "GET page signin": true, "POST page signin": true, "POST page signout": true}
	kinds := map[bool]int{}
	for _, rt := range routes {
		name := rt.method + " " + rt.pattern
		if op := rt.method + " " + rt.op; wantAdmin[op] != (rt.role == roleAdmin) || wantPublic[op] != (rt.role == rolePublic) {
			t.Errorf("%s (%s): role %d, want admin %v, public %v", name, op, rt.role, wantAdmin[op], wantPublic[op])
		}
		e := newEnv(t)
		e.h.observe = nil // pages and API alike: not the API's status census
		e.seed("alice/main/MEMORY.md", "- alice's note\n")
		before := snapshotStore(t, e.s)
		switch got := e.asPrincipal(rt, "alice-key"); {
		case rt.role == roleAdmin && got != http.StatusForbidden:
			t.Errorf("%s as a user: %d, want 403", name, got)
		case rt.role != roleAdmin && got == http.StatusForbidden:
			t.Errorf("%s as a user: 403, but the route needs no admin", name)
		}
		if rt.role != roleAdmin {
			continue
		}
		kinds[rt.isPage()]++
		if after := snapshotStore(t, e.s); after != before {
			t.Errorf("%s as a user changed the store:\nbefore %s\nafter  %s", name, before, after)
		}
		if got := e.asPrincipal(rt, "admin-key"); got >= 400 {
			t.Errorf("%s as an admin: %d, want it served", name, got)
		}
	}
	if kinds[false] == 0 || kinds[true] == 0 {
		t.Fatalf("admin routes: %d of the API, %d pages; want both", kinds[false], kinds[true])
	}
}
