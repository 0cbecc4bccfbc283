// A file's lifetime (its expiry and its pin) as the API and the pages take
// and show it. Every write keeps the file's lifetime unless it names it:
// the store states the whole row on each write (a zero ExpiresAt or
// Pinned clears it), so the console reads the version it writes over and
// carries its expiry and pin on.

package console

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/agentmem/agentmem/core/memory"
	"github.com/agentmem/agentmem/core/store"
)

// lifetimeEdit is what a write says of its file's lifetime; a nil field
// keeps the file's.
type lifetimeEdit struct {
	// expires is the new expiry, the zero time for none.
	expires *time.Time
	pinned  *bool
	// text is the expiry as given ("7d", "never"), for the messages.
	text string
	// named reports that the write gave an expiry, even one refused.
	named bool
}

// fingerprint is what e adds to a write's operation fingerprint: nothing
// when it names neither (so a write's fingerprint is what it was before
// lifetimes).
func (e lifetimeEdit) fingerprint() []string {
	var out []string
	if e.expires != nil || e.named {
		out = append(out, "expires="+e.text)
	}
	if e.pinned != nil {
		out = append(out, fmt.Sprintf("pinned=%t", *e.pinned))
	}
	return out
}

// parseLifetime reads a write's expiry text (nil: not named; see
// memory.ParseExpiry, "never" removes it) and pin (nil: not named) as of
// now. A mistake wraps store.ErrInvalidLifetime and says what to fix; the
// edit returned with it is only for the write's fingerprint (a retry may
// replay an original whose expiry has passed since), never to be applied.
func parseLifetime(expires *string, pinned *bool, now time.Time) (lifetimeEdit, error) {
	e := lifetimeEdit{pinned: pinned}
	if expires != nil {
		e.text, e.named = *expires, true
		at, err := memory.ParseExpiry(*expires, now)
		if err != nil {
			return e, err
		}
		e.expires = &at
	}
	if e.pinned != nil && *e.pinned && e.expires != nil && !e.expires.IsZero() {
		return e, fmt.Errorf("%w: pinned is true and expires is %q: a pinned file never expires, so send one of them (expires \"never\" with pinned true pins the file)",
			store.ErrInvalidLifetime, e.text)
	}
	return e, nil
}

// over returns the expiry and pin a write stores over a file that has
// expires and pinned (the zero values for a new file): those e names, the
// file's otherwise; or the contradiction that refuses it.
func (e lifetimeEdit) over(expires time.Time, pinned bool) (time.Time, bool, error) {
	if e.expires != nil {
		expires = *e.expires
	}
	if e.pinned != nil {
		pinned = *e.pinned
	}
	switch {
	case !pinned || expires.IsZero():
		return expires, pinned, nil
	case e.pinned == nil:
		return time.Time{}, false, fmt.Errorf("%w: the file is pinned, so it never expires: send pinned false with the expiry to unpin it", store.ErrInvalidLifetime)
	default:
		return time.Time{}, false, fmt.Errorf("%w: the file expires at %s: send expires \"never\" with pinned true to pin it",
			store.ErrInvalidLifetime, expires.UTC().Format(time.RFC3339))
	}
}

// lifetimeFor is the expiry and pin a write of p over version expected
// ("" for a create) stores: e over the lifetime of that version. It reads
// the file unless e names both; when the file is no longer at expected,
// the write's compare-and-swap fails anyway, and what it stores does not
// matter. The notebook's MEMORY.md never expires (as write_memory says).
func (h *Handler) lifetimeFor(ctx context.Context, ns, p, expected string, e lifetimeEdit) (time.Time, bool, error) {
	if e.expires != nil && !e.expires.IsZero() && p == ns+"/"+h.agent+"/"+memory.MainFile {
		return time.Time{}, false, fmt.Errorf("%w: %s never expires: it is the notebook itself; give an expiry to a file of its own (trip.md, say)",
			store.ErrInvalidLifetime, memory.MainFile)
	}
	var expires time.Time
	pinned := false
	if expected != "" && (e.expires == nil || e.pinned == nil) {
		f, err := h.s.Read(ctx, p, 1)
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			return time.Time{}, false, err
		case f.Version == expected:
			expires, pinned = f.ExpiresAt, f.Pinned
		}
	}
	return e.over(expires, pinned)
}

// expiresAt is t for JSON: nil for none, else UTC.
func expiresAt(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

// lifetimeProblem is the 400 problem of a lifetime err refuses.
func lifetimeProblem(err error) *Problem {
	detail := strings.TrimPrefix(err.Error(), store.ErrInvalidLifetime.Error()+": ")
	return problemOf(http.StatusBadRequest, "invalid-lifetime", detail)
}

// lifetimeLabel is how the pages mark a file's lifetime: "pinned",
// "expires <date>", or "" for neither.
func lifetimeLabel(expires time.Time, pinned bool) string {
	switch {
	case pinned:
		return "pinned"
	case !expires.IsZero():
		return "expires " + memory.FormatExpiry(expires)
	}
	return ""
}

// lifetimeData is the file page's lifetime: its mark, and its form.
type lifetimeData struct {
	// Label is lifetimeLabel's.
	Label  string
	Pinned bool
	// Expires is the expiry as the form's field holds it (RFC 3339), ""
	// for none.
	Expires string
	Token   string
	// Main says the file is the notebook's MEMORY.md, which never
	// expires.
	Main bool
	// Error is why the last submit was refused.
	Error string
}

// lifetimeOf is the file page's lifetime of f at p.
func (h *Handler) lifetimeOf(pc *pageCall, f *store.File) lifetimeData {
	d := lifetimeData{Label: lifetimeLabel(f.ExpiresAt, f.Pinned), Pinned: f.Pinned, Token: formToken(),
		Main: pc.path == pc.ns+"/"+h.agent+"/"+memory.MainFile}
	if !f.ExpiresAt.IsZero() {
		d.Expires = f.ExpiresAt.UTC().Format(time.RFC3339)
	}
	return d
}

// lifetimeForm sets the lifetime of the version of a file the file page
// showed, exactly once per form render: pinned ("1" pins it) and expires
// (memory.ParseExpiry's text; empty or "never" for none). The form states
// the whole lifetime; an expiry it shows unchanged stays exactly as it
// was. The content is written back as it is, a compare-and-swap on that
// version, recorded like any write.
func (h *Handler) lifetimeForm(pc *pageCall) error {
	ctx, rel, p := pc.r.Context(), pc.relPath, pc.path
	version := pc.r.PostFormValue("version")
	if version == "" {
		return badForm("the form lacks the version it changes: reload the file and try again")
	}
	pinned := pc.r.PostFormValue("pinned") == "1"
	text := strings.TrimSpace(pc.r.PostFormValue("expires"))
	f, err := h.s.Read(ctx, p, wholeFile)
	if err != nil {
		return err
	}
	op, err := pc.formOp("lifetime", p, version, fmt.Sprint(pinned), text)
	if err != nil {
		return err
	}
	refuse := func(msg string) error {
		pc.file = f
		return h.showFile(pc, http.StatusUnprocessableEntity, msg)
	}
	never := memory.NeverExpires
	var e lifetimeEdit
	switch {
	case text == "" || strings.EqualFold(text, never):
		e, err = parseLifetime(&never, &pinned, h.s.Now())
	case pinned:
		err = fmt.Errorf("%w: a pinned file never expires: clear Expires to pin it, or untick Pinned to give it an expiry", store.ErrInvalidLifetime)
	case !f.ExpiresAt.IsZero() && text == f.ExpiresAt.UTC().Format(time.RFC3339):
		e = lifetimeEdit{expires: &f.ExpiresAt, pinned: &pinned, text: text} // shown unchanged: kept to the millisecond
	default:
		e, err = parseLifetime(&text, &pinned, h.s.Now())
	}
	if err != nil {
		return refuse(lifetimeProblem(err).Detail)
	}
	_, err = h.putFile(pc.call, p, f.Content, nil, version, op, e)
	switch {
	case errors.Is(err, store.ErrInvalidLifetime):
		return refuse(lifetimeProblem(err).Detail)
	case errors.Is(err, store.ErrConflict) && !errors.Is(err, store.ErrOperationConflict):
		return problemOf(http.StatusConflict, "precondition-failed", "the file changed since you opened it; its lifetime was not changed: open it again")
	case err != nil:
		return err
	}
	msg := "It never expires now."
	switch {
	case pinned:
		msg = "Pinned: it never expires."
	case !e.expires.IsZero():
		msg = "It expires " + memory.FormatExpiry(*e.expires) + "."
	}
	pc.redirectNS(msg, nil, "files", rel)
	return nil
}
