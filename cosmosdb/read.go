package cosmosdb

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/agentmem/agentmem/core/driver"
)

// scopeRow is one row of a scope query.
type scopeRow struct {
	Path    string `json:"path"`
	Content string `json:"content"`
	Len     int    `json:"len"`
	Version string `json:"version"`
	Meta    string `json:"meta"`
}

// scopePage is the most files one page of ReadScope asks for.
const scopePage = 1000

// ReadScope implements driver.ScopeReader with single-partition queries
// of up to scopePage files each: the files whose dir is the scope,
// tombstones excluded, ordered by path, each page after the last path of
// the one before (keyset pages: each page is a query of its own, which
// neither the service nor the local test server answers by running the
// whole scope's query again, as a continuation of one TOP-all query does
// on the test server), each file cut on the server to 2×MaxChars string
// units (Cosmos DB may count UTF-16 units, so that many always hold
// MaxChars runes) and then to MaxChars runes in Go. Each file's Lifetime
// comes from the metadata the query selects with it.
func (d *Driver) ReadScope(ctx context.Context, p driver.ScopeParams) ([]driver.ScopeFile, error) {
	pk := scopePartition(p.Prefix)
	units := 2 * p.MaxChars
	var out []driver.ScopeFile
	after := ""
	for len(out) < p.Limit {
		n := min(p.Limit-len(out), scopePage)
		sql := fmt.Sprintf("SELECT TOP %d c.path, SUBSTRING(c.content, 0, @units) AS content, LENGTH(c.content) AS len, c.version, c.meta FROM c "+
			"WHERE c.pk = @pk AND c.type = @type AND c.dir = @dir AND c.tomb = false AND c.path > @after ORDER BY c.path ASC", n)
		params := []azcosmos.QueryParameter{
			param("@units", units), param("@pk", pk), param("@type", typeFile), param("@dir", p.Prefix), param("@after", after),
		}
		rows, err := d.query(ctx, &pk, sql, params, n)
		if err != nil {
			return nil, err
		}
		for _, b := range rows {
			r, err := decodeRow[scopeRow](b)
			if err != nil {
				return nil, err
			}
			life, err := lifetimeOf(r.Meta, r.Path)
			if err != nil {
				return nil, err
			}
			content, cut := driver.CutRunes(r.Content, p.MaxChars)
			out = append(out, driver.ScopeFile{Path: r.Path, Content: content, Truncated: cut || r.Len > units, Version: r.Version, Lifetime: life})
			after = r.Path
		}
		if len(rows) < n {
			break
		}
	}
	return out, nil
}

// batchSize bounds the ids of one GetFiles query.
const batchSize = 100

// GetFiles implements driver.BatchGetter with one transactional batch of
// point reads per partition (and per batchSize paths): a search reads one
// scope, so that is one request. A point read costs the same whatever the
// container holds, where a query of the ids costs a scan on the local
// test server and more request units than the reads on the service. A
// batch is atomic, so one missing path (deleted since the index named it)
// fails it: then the rest of that batch is read by one query of their ids
// instead, so a batch costs at most two requests. (The SDK's
// ReadManyItems does the same per physical partition, but needs the
// service's partition key ranges, which the local test server does not
// serve in the SDK's format.)
func (d *Driver) GetFiles(ctx context.Context, paths []string) ([]*driver.File, error) {
	groups := map[string][]string{}
	var order []string
	for _, p := range paths {
		pk := partitionOf(p)
		if _, ok := groups[pk]; !ok {
			order = append(order, pk)
		}
		groups[pk] = append(groups[pk], p)
	}
	out := make([]*driver.File, 0, len(paths))
	for _, pk := range order {
		for batch := range slices.Chunk(groups[pk], batchSize) {
			files, err := d.readBatch(ctx, pk, batch)
			if err != nil {
				return nil, err
			}
			out = append(out, files...)
		}
	}
	return out, nil
}

// readBatch reads the files at paths, all in partition pk, with one
// transactional batch of point reads, or, when one of them is missing, with
// one query of their ids.
func (d *Driver) readBatch(ctx context.Context, pk string, paths []string) ([]*driver.File, error) {
	b := d.c.NewTransactionalBatch(key(pk))
	for _, p := range paths {
		b.ReadItem(fileID(p), nil)
	}
	var o azcosmos.TransactionalBatchOptions
	if t := d.session(pk); t != nil {
		o.SessionToken = *t
	}
	var resp azcosmos.TransactionalBatchResponse
	err := d.send(ctx, func(ctx context.Context) error {
		var err error
		resp, err = d.c.ExecuteTransactionalBatch(ctx, b, &o)
		return err
	})
	if err != nil {
		return nil, failure(err)
	}
	if at, code := batchFailure(resp); at >= 0 || !resp.Success || len(resp.OperationResults) != len(paths) {
		if at >= 0 && code != http.StatusNotFound {
			return nil, fmt.Errorf("%w: reading %d files: operation %d answered %d", errBatch, len(paths), at, code)
		}
		return d.queryFiles(ctx, pk, paths)
	}
	out := make([]*driver.File, 0, len(paths))
	for i, r := range resp.OperationResults {
		f, typ, err := decodeFileItem(r.ResourceBody)
		if err != nil {
			return nil, err
		}
		if typ == typeFile && f.Path == paths[i] { // an id names one path (a hashed one: checked)
			out = append(out, f)
		}
	}
	return out, nil
}

// queryFiles reads the files at paths, all in partition pk, with one query
// of their ids.
func (d *Driver) queryFiles(ctx context.Context, pk string, paths []string) ([]*driver.File, error) {
	ids := make([]string, len(paths))
	for i, p := range paths {
		ids[i] = fileID(p)
	}
	params := []azcosmos.QueryParameter{param("@pk", pk), param("@type", typeFile), param("@ids", ids)}
	rows, err := d.query(ctx, &pk, "SELECT * FROM c WHERE c.pk = @pk AND c.type = @type AND ARRAY_CONTAINS(@ids, c.id)", params, 0)
	if err != nil {
		return nil, err
	}
	out := make([]*driver.File, 0, len(rows))
	for _, b := range rows {
		f, err := decodeFile(b)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}
