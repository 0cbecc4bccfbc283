package mcp

import (
	"context"
	"encoding/json"
	"net/url"
	"regexp"
	"strings"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/store"
)

// URIs of the resources the server offers, all of one form: "memory:///"
// and a name. A file's URI is FileURIPrefix plus its name
// ("memory:///MEMORY.md"); the injected block is SnapshotURI, a name no
// file has (files end in ".md"). They are relative to the caller's
// namespace, so two users reading the same URI read their own files.
const (
	SnapshotURI   = "memory:///snapshot"
	FileURIPrefix = "memory:///"
	// FileURITemplate is the RFC 6570 template of the file resources.
	FileURITemplate = FileURIPrefix + "{file}"
)

// PromptName is the name of the prompt that returns the injected block.
const PromptName = "memory"

// fileNameRE is the notebook's file-name rule (see core/memory).
var fileNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,79}$`)

// fileName returns the notebook file a URI names: "memory:///<name>" with
// name a valid notebook file name ending in ".md". Anything else (another
// scheme or host, a query, escapes, slashes, "..") is no file.
func fileName(uri string) (string, bool) {
	rest, ok := strings.CutPrefix(uri, FileURIPrefix)
	if !ok {
		return "", false
	}
	u, err := url.Parse(uri)
	if err != nil || u.Scheme != "memory" || u.Host != "" || u.RawQuery != "" || u.Fragment != "" || u.Path != "/"+rest {
		return "", false
	}
	if !fileNameRE.MatchString(rest) || strings.Contains(rest, "..") || !strings.HasSuffix(rest, ".md") {
		return "", false
	}
	return rest, true
}

// listResources answers resources/list with the caller's own files (and
// the snapshot): the SDK's list is one for all sessions.
func (s *Server) listResources(next mcpsdk.MethodHandler) mcpsdk.MethodHandler {
	return func(ctx context.Context, method string, req mcpsdk.Request) (mcpsdk.Result, error) {
		if method != "resources/list" {
			return next(ctx, method, req)
		}
		c, err := s.resolve(ctx, req)
		if err != nil {
			return nil, s.fail(ctx, err)
		}
		prefix := c.sc.Path() + "/"
		// Expired files are not listed (the store hides them); each entry
		// carries its file's expiry and pin at no extra request.
		entries, err := s.mem.Store().ListEntries(ctx, prefix, s.opts.MaxResources+1)
		if err != nil {
			return nil, s.fail(ctx, err)
		}
		res := &mcpsdk.ListResourcesResult{Resources: []*mcpsdk.Resource{{
			URI: SnapshotURI, Name: "memory-snapshot", Title: "Memory block", MIMEType: "text/markdown",
		}}}
		res.CacheScope = "private"
		for _, e := range entries[:min(len(entries), s.opts.MaxResources)] {
			name, ok := strings.CutPrefix(e.Path, prefix)
			if !ok {
				continue
			}
			if _, ok := fileName(FileURIPrefix + name); !ok {
				continue
			}
			res.Resources = append(res.Resources, &mcpsdk.Resource{
				URI: FileURIPrefix + name, Name: name, MIMEType: "text/markdown", Description: lifetimeText(e),
			})
		}
		return res, nil
	}
}

// lifetimeText describes a listed file's lifetime for a resource's
// description: "Pinned.", "Expires <when>." or "" for neither.
func lifetimeText(e store.Entry) string {
	if e.Pinned {
		return "Pinned."
	}
	if at := e.ExpiresAt(); !at.IsZero() {
		return "Expires " + memory.FormatExpiry(at) + "."
	}
	return ""
}

// readFile reads one of the caller's files, bounded as read_memory is.
func (s *Server) readFile(ctx context.Context, req *mcpsdk.ReadResourceRequest) (*mcpsdk.ReadResourceResult, error) {
	c, err := s.resolve(ctx, req)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	name, ok := fileName(req.Params.URI)
	if !ok {
		return nil, mcpsdk.ResourceNotFoundError(req.Params.URI)
	}
	args, _ := json.Marshal(map[string]string{"file": name})
	res, err := s.mem.Call(ctx, c.inv(), s.readTool, args)
	if err != nil {
		return nil, s.fail(ctx, err)
	}
	text, ok := res.(string)
	if !ok {
		return nil, mcpsdk.ResourceNotFoundError(req.Params.URI)
	}
	return textResource(req.Params.URI, text), nil
}

func (s *Server) readSnapshot(ctx context.Context, req *mcpsdk.ReadResourceRequest) (*mcpsdk.ReadResourceResult, error) {
	block, err := s.block(ctx, req)
	if err != nil {
		return nil, err
	}
	return textResource(req.Params.URI, block), nil
}

func textResource(uri, text string) *mcpsdk.ReadResourceResult {
	res := &mcpsdk.ReadResourceResult{Contents: []*mcpsdk.ResourceContents{{URI: uri, MIMEType: "text/markdown", Text: text}}}
	res.CacheScope = "private"
	return res
}

// block returns the caller's injected block; an empty notebook gives an
// empty block.
func (s *Server) block(ctx context.Context, req mcpsdk.Request) (string, error) {
	c, err := s.resolve(ctx, req)
	if err != nil {
		return "", s.fail(ctx, err)
	}
	block, err := s.mem.SnapshotOf(ctx, c.inv())
	if err != nil {
		return "", s.fail(ctx, err)
	}
	if block == "" {
		block = memory.BlockOpen + memory.BlockClose
	}
	return block, nil
}

func (s *Server) prompt(ctx context.Context, req *mcpsdk.GetPromptRequest) (*mcpsdk.GetPromptResult, error) {
	block, err := s.block(ctx, req)
	if err != nil {
		return nil, err
	}
	return &mcpsdk.GetPromptResult{
		Description: "The current user's memory.",
		Messages:    []*mcpsdk.PromptMessage{{Role: "user", Content: &mcpsdk.TextContent{Text: block}}},
	}, nil
}
