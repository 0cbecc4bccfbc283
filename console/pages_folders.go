// Folders: the listing of one folder of a namespace, and the breadcrumbs
// the folder and file pages show.

package console

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/store"
)

// pageEntries bounds the entries (folders and files) of a folder page.
const pageEntries = 100

// crumb is one step of a breadcrumb trail; the current one has no URL.
type crumb struct{ Label, URL string }

// crumbs is the trail from namespace ns down to rel, a file or folder path
// relative to it ("" for the namespace itself): the namespace and each
// folder link to their listing, rel's last segment is the current page.
func crumbs(base, ns, rel string) []crumb {
	out := []crumb{{Label: ns, URL: link(base, "ns", ns, "tree") + "/"}}
	if rel == "" {
		out[0].URL = ""
		return out
	}
	segs := strings.Split(strings.Trim(rel, "/"), "/")
	for i, seg := range segs {
		c := crumb{Label: seg}
		if i < len(segs)-1 {
			c.URL = link(base, append([]string{"ns", ns, "tree"}, segs[:i+1]...)...)
		}
		out = append(out, c)
	}
	return out
}

// folderEntry is a folder's subfolder (with the files it holds, at every
// depth) or file (with its size and who wrote it last).
type folderEntry struct {
	Name, Path string
	Folder     bool
	Files      int
	Size       PartJSON
	By, Client string
	// Life marks a pinned or expiring file (lifetimeLabel), Pinned a
	// pinned one.
	Life   string
	Pinned bool
}

type folderData struct {
	// Path is the folder relative to the namespace, "" for the namespace.
	Path    string
	Crumbs  []crumb
	Entries []folderEntry
	Next    string
	// CharsPerToken is the tokens' estimate (memory.CharsPerToken).
	CharsPerToken int
}

// folderPage lists one folder of the namespace (its root without a
// path): its subfolders, each with the files it holds, and its files, in
// the order of their paths, pageEntries at a time. It walks the folder's
// paths (those in subfolders only counted) and reads each file it lists.
// A folder that holds no file answers 404.
func (h *Handler) folderPage(pc *pageCall) error {
	ctx := pc.r.Context()
	rel, prefix := pc.relPath, pc.ns+"/"
	if rel != "" {
		prefix = pc.path + "/"
	}
	opts := store.ListOptions{}
	if a := pc.r.URL.Query().Get("after"); a != "" {
		p, err := pc.storePath(a)
		if err != nil || !strings.HasPrefix(p, prefix) {
			return badForm("after must be a path in this folder: follow the page's Next link")
		}
		opts.After = p
	}
	d := folderData{Path: rel, Crumbs: crumbs(pc.base, pc.ns, rel), Entries: []folderEntry{}, CharsPerToken: memory.CharsPerToken}
	last := "" // the last path the listing took in
	for p, err := range h.s.Walk(ctx, prefix, 0, opts) {
		if err != nil {
			return err
		}
		name := strings.TrimPrefix(p, prefix)
		seg, _, nested := strings.Cut(name, "/")
		if n := len(d.Entries); nested && n > 0 && d.Entries[n-1].Folder && d.Entries[n-1].Name == seg {
			d.Entries[n-1].Files++
			last = p
			continue
		}
		if len(d.Entries) == pageEntries {
			d.Next = pc.nsURL("tree", rel) + "?after=" + url.QueryEscape(pc.rel(last))
			break
		}
		last = p
		if nested {
			d.Entries = append(d.Entries, folderEntry{Name: seg, Path: pc.rel(prefix + seg), Folder: true, Files: 1})
			continue
		}
		d.Entries = append(d.Entries, folderEntry{Name: seg, Path: pc.rel(p)})
	}
	for i := range d.Entries {
		e := &d.Entries[i]
		if e.Folder {
			continue
		}
		f, err := h.s.Read(ctx, pc.ns+"/"+e.Path, wholeFile)
		if errors.Is(err, store.ErrNotFound) {
			continue // deleted since it was listed
		}
		if err != nil {
			return err
		}
		e.Size, e.By, e.Client = size(f.Content), f.Metadata[UpdatedByKey], f.Metadata[ClientKey]
		e.Life, e.Pinned = lifetimeLabel(f.ExpiresAt, f.Pinned), f.Pinned
	}
	if len(d.Entries) == 0 && rel != "" && opts.After == "" {
		return problemOf(http.StatusNotFound, "not-found", "no folder "+rel+" holds a file in this namespace")
	}
	title := pc.ns + "/"
	if rel != "" {
		title = rel + "/"
	}
	h.render(pc.w, pc.r, http.StatusOK, "folder", pc.data(title, d))
	return nil
}
