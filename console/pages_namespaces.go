// The namespaces' pages: the namespaces (an admin's start page), search,
// export and forgetting (beside the API's namespaces.go).

package console

import (
	"errors"
	"net/http"
	"net/url"
	"strings"
)

type namespacesData struct {
	Namespaces []NamespaceJSON
	Next       string
}

func (h *Handler) homePage(pc *pageCall) error {
	if !pc.p.Admin {
		http.Redirect(pc.w, pc.r, link(pc.base, "ns", pc.p.Namespace())+"/", http.StatusSeeOther)
		return nil
	}
	after := pc.r.URL.Query().Get("after")
	if after != "" && !validNamespace(after) {
		return badForm("after must be a namespace")
	}
	page, err := h.namespacesPage(pc.r.Context(), after, DefaultNamespacePageSize)
	if err != nil {
		return err
	}
	d := namespacesData{Namespaces: page.Namespaces}
	if page.NextCursor != "" {
		d.Next = link(pc.base) + "?after=" + url.QueryEscape(page.Namespaces[len(page.Namespaces)-1].Name)
	}
	h.render(pc.w, pc.r, http.StatusOK, "namespaces", pc.data("Namespaces", d))
	return nil
}

type searchData struct {
	Query  string
	Result *SearchJSON
}

// piece is a run of a snippet as the search page shows it, marked when it
// is a word the query matched.
type piece struct {
	Text string
	Mark bool
}

// pieces cuts snippet at its highlights (character offsets, in order and
// apart; one that is not is shown unmarked), for the page to put each
// matched word in a <mark>: the text stays text, escaped by the template.
func pieces(snippet string, hs []SpanJSON) []piece {
	rs := []rune(snippet)
	var out []piece
	at := 0
	for _, h := range hs {
		if h.Start < at || h.End <= h.Start || h.End > len(rs) {
			continue
		}
		if h.Start > at {
			out = append(out, piece{Text: string(rs[at:h.Start])})
		}
		out = append(out, piece{Text: string(rs[h.Start:h.End]), Mark: true})
		at = h.End
	}
	if at < len(rs) {
		out = append(out, piece{Text: string(rs[at:])})
	}
	return out
}

func (h *Handler) searchPage(pc *pageCall) error {
	q := pc.r.URL.Query().Get("q")
	d := searchData{Query: q}
	if strings.TrimSpace(q) != "" {
		res, err := h.searchFolder(pc.call, q, h.agent+"/", h.limits.MaxSearchResults)
		if err != nil {
			return err
		}
		d.Result = &res
	}
	h.render(pc.w, pc.r, http.StatusOK, "search", pc.data("Search", d))
	return nil
}

func (h *Handler) exportPage(pc *pageCall) error { return h.export(pc.call) }

type forgetData struct {
	Error  string
	Result *ForgetJSON
}

func (h *Handler) forgetPage(pc *pageCall) error {
	h.render(pc.w, pc.r, http.StatusOK, "forget", pc.data("Forget "+pc.ns, forgetData{}))
	return nil
}

// forgetForm forgets the namespace when its name was typed.
func (h *Handler) forgetForm(pc *pageCall) error {
	if pc.r.PostFormValue("confirm") != pc.ns {
		h.render(pc.w, pc.r, http.StatusBadRequest, "forget", pc.data("Forget "+pc.ns,
			forgetData{Error: "Type the namespace's name exactly to confirm; nothing was erased."}))
		return nil
	}
	out, err := h.forgetNamespace(pc.r.Context(), pc.ns)
	var p *Problem
	if err != nil && !(errors.As(err, &p) && p.Status == http.StatusConflict) {
		return err
	}
	status := http.StatusOK
	if p != nil {
		status = http.StatusConflict
	}
	h.render(pc.w, pc.r, status, "forgotten", pc.data("Forgot "+pc.ns, forgetData{Result: &out}))
	return nil
}
