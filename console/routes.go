package console

import "net/http"

// route is one operation of the API. The mux, the OpenAPI document's
// test and the status check of every test response share this table.
type route struct {
	method  string
	pattern string // a ServeMux pattern without the method
	op      string // the OpenAPI operationId
	// public routes need no principal; admin ones need an admin;
	// namespaced ones have {ns}, which a user principal reaches only for
	// its own namespace.
	public, admin, namespaced bool
	// statuses are every status the operation answers; besides them its
	// pattern answers 405 (with Allow) to a method no route of it serves.
	statuses []int
	// page bounds the ?limit= of a listing: its default and maximum
	// (zero for routes without one, or whose bound is configured).
	page  paging
	serve func(*Handler, *call) error
}

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
)

// routes is the API.
var routes = []route{
	{method: "GET", pattern: apiRoot + "openapi.json", op: "getOpenAPI", public: true,
		statuses: []int{200}, serve: (*Handler).openAPI},
	{method: "GET", pattern: apiRoot + "me", op: "getPrincipal",
		statuses: statuses(authStatuses, 200), serve: (*Handler).me},
	{method: "GET", pattern: apiRoot + "namespaces", op: "listNamespaces", admin: true,
		statuses: statuses(authStatuses, 200, 400, 403), page: namespacePaging, serve: (*Handler).listNamespaces},
	{method: "GET", pattern: nsPattern, op: "getNamespace", namespaced: true,
		statuses: statuses(nsStatuses, 200), serve: (*Handler).getNamespace},
	{method: "DELETE", pattern: nsPattern, op: "forgetNamespace", namespaced: true, admin: true,
		statuses: statuses(nsStatuses, 200, 403, 409), serve: (*Handler).forget},
	{method: "GET", pattern: nsPattern + "/files", op: "listFiles", namespaced: true,
		statuses: statuses(nsStatuses, 200), page: filePaging, serve: (*Handler).listFiles},
	{method: "GET", pattern: nsPattern + "/files" + filePattern, op: "readFile", namespaced: true,
		statuses: statuses(nsStatuses, 200, 304), serve: (*Handler).readFile},
	{method: "PUT", pattern: nsPattern + "/files" + filePattern, op: "writeFile", namespaced: true,
		statuses: statuses(nsStatuses, 200, 201, 409, 412, 413, 415, 422, 428), serve: (*Handler).writeFile},
	{method: "DELETE", pattern: nsPattern + "/files" + filePattern, op: "deleteFile", namespaced: true,
		statuses: statuses(nsStatuses, 204, 412, 422, 428), serve: (*Handler).deleteFile},
	{method: "GET", pattern: nsPattern + "/search", op: "search", namespaced: true,
		statuses: statuses(nsStatuses, 200), serve: (*Handler).search},
	{method: "GET", pattern: nsPattern + "/snapshot", op: "getSnapshot", namespaced: true,
		statuses: statuses(nsStatuses, 200), serve: (*Handler).snapshot},
	{method: "GET", pattern: nsPattern + "/history", op: "listNamespaceHistory", namespaced: true,
		statuses: statuses(nsStatuses, 200, 501), page: filePaging, serve: (*Handler).history},
	{method: "GET", pattern: nsPattern + "/history" + filePattern, op: "listFileHistory", namespaced: true,
		statuses: statuses(nsStatuses, 200, 501), page: filePaging, serve: (*Handler).history},
	{method: "GET", pattern: nsPattern + "/versions" + filePattern, op: "readVersion", namespaced: true,
		statuses: statuses(nsStatuses, 200), serve: (*Handler).readVersion},
	{method: "GET", pattern: nsPattern + "/diff" + filePattern, op: "diffVersions", namespaced: true,
		statuses: statuses(nsStatuses, 200), serve: (*Handler).diff},
	{method: "POST", pattern: nsPattern + "/restore" + filePattern, op: "restoreVersion", namespaced: true,
		statuses: statuses(nsStatuses, 200, 409, 412, 413, 415, 422, 428), serve: (*Handler).restore},
	{method: "GET", pattern: nsPattern + "/export", op: "exportNamespace", namespaced: true,
		statuses: statuses(nsStatuses, 200), serve: (*Handler).export},
	// Import: an admin into any namespace, a user into its own (the
	// archive's paths must lie in it).
	{method: "POST", pattern: nsPattern + "/import", op: "importNamespace", namespaced: true,
		statuses: statuses(nsStatuses, 200, 409, 413, 415, 422), serve: (*Handler).importNamespace},
	// Consolidation: the user of the namespace or an admin; 501 without
	// Options.Consolidator, 502 when the model fails or answers badly.
	{method: "POST", pattern: nsPattern + "/consolidate", op: "consolidateNamespace", namespaced: true,
		statuses: statuses(nsStatuses, 200, 409, 422, 501, 502), serve: (*Handler).consolidateNamespace},
}
