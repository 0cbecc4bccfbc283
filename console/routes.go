package console

import "net/http"

// role is what a route needs of the principal of a request.
type role int

const (
	// rolePublic routes need no principal: the OpenAPI document, signing
	// in and out.
	rolePublic role = iota
	// roleUser routes need a principal, a user or an admin; with {ns}, a
	// user reaches only its own namespace.
	roleUser
	// roleAdmin routes need an admin principal (403 admin-required for a
	// user).
	roleAdmin
)

// route is one operation of the API or one console page. The mux, the
// one check of what a route needs ([Handler.admitRoute]), the OpenAPI
// document's test and the status check of every test response share this
// table.
type route struct {
	method  string
	pattern string // a ServeMux pattern without the method
	op      string // the OpenAPI operationId; "page …" for a page
	role    role
	// namespaced routes have {ns}, which a user principal reaches only
	// for its own namespace.
	namespaced bool
	// formPath routes (page forms) name their file in the form's "path"
	// field; a pattern ending in filePattern names it in the URL. Either
	// way the call's path is resolved before the route runs.
	formPath bool
	// read routes read the whole file they name before they run (404
	// when it is absent).
	read bool
	// statuses are every status an API operation answers; besides them
	// its pattern answers 405 (with Allow) to a method no route of it
	// serves.
	statuses []int
	// page bounds the ?limit= of a listing: its default and maximum
	// (zero for routes without one, or whose bound is configured).
	page paging
	// serve answers an API operation; show answers a page. Exactly one is
	// set.
	serve func(*Handler, *call) error
	show  func(*Handler, *pageCall) error
}

// isPage reports whether rt is a console page, not an API operation.
func (rt *route) isPage() bool { return rt.show != nil }

// paging is a listing's ?limit=: def when absent, at most max.
type paging struct{ def, max int }

// limit reads c's ?limit= within its route's paging.
func (c *call) limit() (int, error) {
	return queryInt(c.r, "limit", c.rt.page.def, c.rt.page.max)
}

// Paging of the listings.
var (
	filePaging      = paging{DefaultPageSize, MaxPageSize}
	namespacePaging = paging{DefaultNamespacePageSize, MaxNamespacePageSize}
	// activityPaging bounds the activity's recent changes.
	activityPaging = paging{20, 200}
)

// Statuses every authenticated route may answer.
var (
	authStatuses = []int{http.StatusUnauthorized, http.StatusInternalServerError, http.StatusServiceUnavailable}
	nsStatuses   = append([]int{http.StatusBadRequest, http.StatusNotFound}, authStatuses...)
)

func statuses(base []int, more ...int) []int { return append(append([]int{}, more...), base...) }

const (
	nsPattern   = apiRoot + "namespaces/{ns}"
	filePattern = "/{path...}"
	nsPage      = "/ns/{ns}"
)

// routes is the API, then the pages.
var routes = []route{
	{method: "GET", pattern: apiRoot + "openapi.json", op: "getOpenAPI", role: rolePublic,
		statuses: []int{200}, serve: (*Handler).openAPI},
	{method: "GET", pattern: apiRoot + "me", op: "getPrincipal", role: roleUser,
		statuses: statuses(authStatuses, 200), serve: (*Handler).me},
	{method: "GET", pattern: apiRoot + "namespaces", op: "listNamespaces", role: roleAdmin,
		statuses: statuses(authStatuses, 200, 400, 403), page: namespacePaging, serve: (*Handler).listNamespaces},
	{method: "GET", pattern: nsPattern, op: "getNamespace", namespaced: true, role: roleUser,
		statuses: statuses(nsStatuses, 200), serve: (*Handler).getNamespace},
	{method: "DELETE", pattern: nsPattern, op: "forgetNamespace", namespaced: true, role: roleAdmin,
		statuses: statuses(nsStatuses, 200, 403, 409), serve: (*Handler).forget},
	{method: "GET", pattern: nsPattern + "/files", op: "listFiles", namespaced: true, role: roleUser,
		statuses: statuses(nsStatuses, 200), page: filePaging, serve: (*Handler).listFiles},
	{method: "GET", pattern: nsPattern + "/files" + filePattern, op: "readFile", namespaced: true, role: roleUser, read: true,
		statuses: statuses(nsStatuses, 200, 304), serve: (*Handler).readFile},
	{method: "PUT", pattern: nsPattern + "/files" + filePattern, op: "writeFile", namespaced: true, role: roleUser,
		statuses: statuses(nsStatuses, 200, 201, 409, 412, 413, 415, 422, 428), serve: (*Handler).writeFile},
	{method: "DELETE", pattern: nsPattern + "/files" + filePattern, op: "deleteFile", namespaced: true, role: roleUser,
		statuses: statuses(nsStatuses, 204, 412, 422, 428), serve: (*Handler).deleteFile},
	{method: "GET", pattern: nsPattern + "/search", op: "search", namespaced: true, role: roleUser,
		statuses: statuses(nsStatuses, 200), serve: (*Handler).search},
	{method: "GET", pattern: nsPattern + "/snapshot", op: "getSnapshot", namespaced: true, role: roleUser,
		statuses: statuses(nsStatuses, 200), serve: (*Handler).snapshot},
	{method: "GET", pattern: nsPattern + "/history", op: "listNamespaceHistory", namespaced: true, role: roleUser,
		statuses: statuses(nsStatuses, 200, 501), page: filePaging, serve: (*Handler).history},
	{method: "GET", pattern: nsPattern + "/history" + filePattern, op: "listFileHistory", namespaced: true, role: roleUser,
		statuses: statuses(nsStatuses, 200, 501), page: filePaging, serve: (*Handler).history},
	{method: "GET", pattern: nsPattern + "/versions" + filePattern, op: "readVersion", namespaced: true, role: roleUser,
		statuses: statuses(nsStatuses, 200), serve: (*Handler).readVersion},
	{method: "GET", pattern: nsPattern + "/diff" + filePattern, op: "diffVersions", namespaced: true, role: roleUser,
		statuses: statuses(nsStatuses, 200), serve: (*Handler).diff},
	{method: "POST", pattern: nsPattern + "/restore" + filePattern, op: "restoreVersion", namespaced: true, role: roleUser,
		statuses: statuses(nsStatuses, 200, 409, 412, 413, 415, 422, 428), serve: (*Handler).restore},
	// What history tells: the files deleted while it was kept (restore
	// one with restoreVersion and If-None-Match: *), and who has been
	// writing through which client.
	{method: "GET", pattern: nsPattern + "/deleted", op: "listDeletedFiles", namespaced: true, role: roleUser,
		statuses: statuses(nsStatuses, 200, 501), page: filePaging, serve: (*Handler).listDeleted},
	{method: "GET", pattern: nsPattern + "/activity", op: "getActivity", namespaced: true, role: roleUser,
		statuses: statuses(nsStatuses, 200, 501), page: activityPaging, serve: (*Handler).activity},
	{method: "GET", pattern: nsPattern + "/export", op: "exportNamespace", namespaced: true, role: roleUser,
		statuses: statuses(nsStatuses, 200), serve: (*Handler).export},
	// Import: an admin into any namespace, a user into its own (the
	// archive's paths must lie in it).
	{method: "POST", pattern: nsPattern + "/import", op: "importNamespace", namespaced: true, role: roleUser,
		statuses: statuses(nsStatuses, 200, 409, 413, 415, 422), serve: (*Handler).importNamespace},
	// Consolidation: the user of the namespace or an admin; 501 without
	// Options.Consolidator, 502 when the model fails or answers badly.
	{method: "POST", pattern: nsPattern + "/consolidate", op: "consolidateNamespace", namespaced: true, role: roleUser,
		statuses: statuses(nsStatuses, 200, 409, 422, 501, 502), serve: (*Handler).consolidateNamespace},

	// The pages: signing in and out, the namespaces (an admin's start
	// page; a user's is its notebook), and the pages of one namespace.
	{method: "GET", pattern: "/signin", op: "page signin", role: rolePublic, show: (*Handler).signinPage},
	{method: "POST", pattern: "/signin", op: "page signin", role: rolePublic, show: (*Handler).signin},
	{method: "POST", pattern: "/signout", op: "page signout", role: rolePublic, show: (*Handler).signout},
	{method: "GET", pattern: "/{$}", op: "page home", role: roleUser, show: (*Handler).homePage},
	{method: "GET", pattern: nsPage + "/{$}", op: "page notebook", role: roleUser, namespaced: true, show: (*Handler).notebookPage},
	{method: "GET", pattern: nsPage + "/tree/{$}", op: "page folder", role: roleUser, namespaced: true, show: (*Handler).folderPage},
	{method: "GET", pattern: nsPage + "/tree" + filePattern, op: "page folder", role: roleUser, namespaced: true, show: (*Handler).folderPage},
	{method: "GET", pattern: nsPage + "/files" + filePattern, op: "page file", role: roleUser, namespaced: true, read: true, show: (*Handler).filePage},
	{method: "GET", pattern: nsPage + "/edit" + filePattern, op: "page edit", role: roleUser, namespaced: true, read: true, show: (*Handler).editPage},
	{method: "GET", pattern: nsPage + "/new", op: "page new", role: roleUser, namespaced: true, show: (*Handler).newPage},
	{method: "POST", pattern: nsPage + "/save", op: "page save", role: roleUser, namespaced: true, show: (*Handler).save},
	{method: "POST", pattern: nsPage + "/lifetime", op: "page lifetime", role: roleUser, namespaced: true, formPath: true, show: (*Handler).lifetimeForm},
	{method: "GET", pattern: nsPage + "/delete" + filePattern, op: "page delete", role: roleUser, namespaced: true, read: true, show: (*Handler).deletePage},
	{method: "POST", pattern: nsPage + "/delete", op: "page delete", role: roleUser, namespaced: true, formPath: true, show: (*Handler).deleteForm},
	{method: "GET", pattern: nsPage + "/history/{$}", op: "page history", role: roleUser, namespaced: true, show: (*Handler).historyPage},
	{method: "GET", pattern: nsPage + "/history" + filePattern, op: "page history", role: roleUser, namespaced: true, show: (*Handler).historyPage},
	{method: "GET", pattern: nsPage + "/versions" + filePattern, op: "page version", role: roleUser, namespaced: true, show: (*Handler).versionPage},
	{method: "GET", pattern: nsPage + "/diff" + filePattern, op: "page diff", role: roleUser, namespaced: true, show: (*Handler).diffPage},
	{method: "POST", pattern: nsPage + "/restore", op: "page restore", role: roleUser, namespaced: true, formPath: true, show: (*Handler).restoreForm},
	{method: "GET", pattern: nsPage + "/deleted", op: "page deleted", role: roleUser, namespaced: true, show: (*Handler).deletedPage},
	{method: "GET", pattern: nsPage + "/activity", op: "page activity", role: roleUser, namespaced: true, show: (*Handler).activityPage},
	{method: "GET", pattern: nsPage + "/search", op: "page search", role: roleUser, namespaced: true, show: (*Handler).searchPage},
	{method: "GET", pattern: nsPage + "/export", op: "page export", role: roleUser, namespaced: true, show: (*Handler).exportPage},
	{method: "POST", pattern: nsPage + "/import", op: "page import", role: roleUser, namespaced: true, show: (*Handler).importForm},
	{method: "POST", pattern: nsPage + "/consolidate", op: "page consolidate", role: roleUser, namespaced: true, show: (*Handler).consolidateForm},
	{method: "GET", pattern: nsPage + "/forget", op: "page forget", role: roleAdmin, namespaced: true, show: (*Handler).forgetPage},
	{method: "POST", pattern: nsPage + "/forget", op: "page forget", role: roleAdmin, namespaced: true, show: (*Handler).forgetForm},
}
