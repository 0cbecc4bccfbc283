package cosmosdb

import (
	"context"
	"fmt"
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

// ReadScope implements driver.ScopeReader with one single-partition query:
// the files whose dir is the scope, tombstones excluded, ordered by path,
// each cut on the server to 2×MaxChars string units (Cosmos DB may count
// UTF-16 units, so that many always hold MaxChars runes) and then to
// MaxChars runes in Go. Each file's Lifetime comes from the metadata the
// query selects with it.
func (d *Driver) ReadScope(ctx context.Context, p driver.ScopeParams) ([]driver.ScopeFile, error) {
	pk := scopePartition(p.Prefix)
	units := 2 * p.MaxChars
	sql := fmt.Sprintf("SELECT TOP %d c.path, SUBSTRING(c.content, 0, @units) AS content, LENGTH(c.content) AS len, c.version, c.meta FROM c "+
		"WHERE c.pk = @pk AND c.type = @type AND c.dir = @dir AND c.tomb = false ORDER BY c.path ASC", p.Limit)
	params := []azcosmos.QueryParameter{
		param("@units", units), param("@pk", pk), param("@type", typeFile), param("@dir", p.Prefix),
	}
	rows, err := d.query(ctx, &pk, sql, params, p.Limit)
	if err != nil {
		return nil, err
	}
	out := make([]driver.ScopeFile, 0, len(rows))
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
	}
	return out, nil
}

// batchSize bounds the ids of one GetFiles query.
const batchSize = 100

// GetFiles implements driver.BatchGetter with one query per partition (and
// per batchSize paths): the rows whose id is one of the paths' ids, filtered
// by the partition key. A search reads one scope, so that is one request.
// (The SDK's ReadManyItems does the same per physical partition, but needs
// the service's partition key ranges, which the local test server does not
// serve in the SDK's format.)
func (d *Driver) GetFiles(ctx context.Context, paths []string) ([]*driver.File, error) {
	groups := map[string][]string{}
	var order []string
	for _, p := range paths {
		pk := partitionOf(p)
		if _, ok := groups[pk]; !ok {
			order = append(order, pk)
		}
		groups[pk] = append(groups[pk], fileID(p))
	}
	out := make([]*driver.File, 0, len(paths))
	for _, pk := range order {
		for ids := range slices.Chunk(groups[pk], batchSize) {
			params := []azcosmos.QueryParameter{param("@pk", pk), param("@type", typeFile), param("@ids", ids)}
			rows, err := d.query(ctx, &pk, "SELECT * FROM c WHERE c.pk = @pk AND c.type = @type AND ARRAY_CONTAINS(@ids, c.id)", params, 0)
			if err != nil {
				return nil, err
			}
			for _, b := range rows {
				f, err := decodeFile(b)
				if err != nil {
					return nil, err
				}
				out = append(out, f)
			}
		}
	}
	return out, nil
}
