package cosmosdb

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/agentmem/agentmem/core/driver"
)

// query runs sql and returns up to max rows (max <= 0: all). With a
// partition key it is a single-partition query; without one it fans out
// over every partition.
func (d *Driver) query(ctx context.Context, pk *string, sql string, params []azcosmos.QueryParameter, max int) ([][]byte, error) {
	key := azcosmos.NewPartitionKey() // cross-partition
	o := &azcosmos.QueryOptions{QueryParameters: params}
	if pk != nil {
		key = azcosmos.NewPartitionKeyString(*pk)
		o.SessionToken = d.session(*pk)
	}
	if max > 0 {
		o.PageSizeHint = int32(min(max, 1000))
	}
	var rows [][]byte
	pager := d.c.NewQueryItemsPager(sql, key, o)
	for pager.More() && (max <= 0 || len(rows) < max) {
		page, err := pager.NextPage(ctx)
		if err != nil {
			return nil, err
		}
		rows = append(rows, page.Items...)
	}
	if max > 0 && len(rows) > max {
		rows = rows[:max]
	}
	return rows, nil
}

func decodeRow[T any](b []byte) (T, error) {
	var r T
	if err := json.Unmarshal(b, &r); err != nil {
		return r, fmt.Errorf("cosmosdb: decoding query row: %w", err)
	}
	return r, nil
}

func param(name string, v any) azcosmos.QueryParameter {
	return azcosmos.QueryParameter{Name: name, Value: v}
}

// listRow is one row of a listing query.
type listRow struct {
	Path string `json:"path"`
	Tomb bool   `json:"tomb"`
}

// ListFiles implements driver.Driver. A prefix holding "/" lies in one
// partition (its first segment): one single-partition query, ordered by
// path, reading only the rows under the prefix. A prefix without "/" (""
// or part of a first segment) may span partitions: it fans out over all
// of them without ORDER BY (which a cross-partition query through the
// gateway cannot do), reads every row under the prefix after p.After and
// sorts in Go.
func (d *Driver) ListFiles(ctx context.Context, p driver.ListParams) ([]driver.Entry, error) {
	where := []string{"c.type = @type", "STARTSWITH(c.path, @prefix)"}
	params := []azcosmos.QueryParameter{param("@type", typeFile), param("@prefix", p.Prefix)}
	if p.After != "" {
		where = append(where, "c.path > @after")
		params = append(params, param("@after", p.After))
	}
	pk, single := prefixPartition(p.Prefix)
	var sql string
	if single {
		// The partition key is filtered in WHERE as well: a server that
		// ignores the request's partition scope still answers correctly.
		where = append([]string{"c.pk = @pk"}, where...)
		params = append(params, param("@pk", pk))
		sql = fmt.Sprintf("SELECT TOP %d c.path, c.tomb FROM c WHERE %s ORDER BY c.path ASC", p.Limit, strings.Join(where, " AND "))
	} else {
		sql = "SELECT c.path, c.tomb FROM c WHERE " + strings.Join(where, " AND ")
	}
	var key *string
	limit := 0
	if single {
		key, limit = &pk, p.Limit
	}
	rows, err := d.query(ctx, key, sql, params, limit)
	if err != nil {
		return nil, err
	}
	out := make([]driver.Entry, 0, len(rows))
	for _, b := range rows {
		r, err := decodeRow[listRow](b)
		if err != nil {
			return nil, err
		}
		out = append(out, driver.Entry{Path: r.Path, Tombstone: r.Tomb})
	}
	slices.SortFunc(out, func(a, b driver.Entry) int { return strings.Compare(a.Path, b.Path) })
	if len(out) > p.Limit {
		out = out[:p.Limit]
	}
	return out, nil
}

// scopeRow is one row of a scope query.
type scopeRow struct {
	Path    string `json:"path"`
	Content string `json:"content"`
	Len     int    `json:"len"`
}

// ReadScope implements driver.ScopeReader with one single-partition query:
// the files whose dir is the scope, tombstones excluded, ordered by path,
// each cut on the server to 2×MaxChars string units (Cosmos DB may count
// UTF-16 units, so that many always hold MaxChars runes) and then to
// MaxChars runes in Go.
func (d *Driver) ReadScope(ctx context.Context, p driver.ScopeParams) ([]driver.ScopeFile, error) {
	pk := scopePartition(p.Prefix)
	units := 2 * p.MaxChars
	sql := fmt.Sprintf("SELECT TOP %d c.path, SUBSTRING(c.content, 0, @units) AS content, LENGTH(c.content) AS len FROM c "+
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
		content, cut := driver.CutRunes(r.Content, p.MaxChars)
		out = append(out, driver.ScopeFile{Path: r.Path, Content: content, Truncated: cut || r.Len > units})
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
