package console

import (
	_ "embed"
	"net/http"
)

// openAPIDocument is the OpenAPI 3.1 description of the API, served at
// /api/v1/openapi.json; the tests check it against the route table and
// every status a test response had.
//
//go:embed openapi.json
var openAPIDocument []byte

func (h *Handler) openAPI(c *call) error {
	c.w.Header().Set("Content-Type", "application/json")
	c.w.Header().Set("Cache-Control", "no-cache")
	c.w.WriteHeader(http.StatusOK)
	c.w.Write(openAPIDocument)
	return nil
}
